"""The environment and metric definitions of stored cells, decoded once per process.

A stored cell never changes (a repost of its identity is either the same document or
refused), so its JSON columns can be kept after the first read: a year's history query
then reads 365 small rows instead of decoding 365 environments.  One cache per engine
(ids are per database); bounded, least recently used first out.
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any, Dict, Iterable, Tuple

import sqlalchemy as sa

from matrix.service.tables import cells

Details = Tuple[Dict[str, Any], Dict[str, int]]      # environment, metric_versions
MAX_CELLS = 50_000                                     # a few years of nightlies, ~100 MB at most


class CellCache:
    def __init__(self, size: int = MAX_CELLS) -> None:
        self._size = size
        self._items: "OrderedDict[int, Details]" = OrderedDict()
        self._lock = threading.Lock()

    def details(self, conn: sa.engine.Connection, cell_ids: Iterable[int]) -> Dict[int, Details]:
        wanted = set(cell_ids)
        with self._lock:
            found = {i: self._items[i] for i in wanted if i in self._items}
            for i in found:
                self._items.move_to_end(i)
        missing = wanted - set(found)
        if missing:
            rows = conn.execute(sa.select(cells.c.id, cells.c.environment, cells.c.metric_versions)
                                .where(cells.c.id.in_(sorted(missing))))
            fresh = {row.id: (row.environment, row.metric_versions or {}) for row in rows}
            found.update(fresh)
            with self._lock:
                self._items.update(fresh)
                while len(self._items) > self._size:
                    self._items.popitem(last=False)
        return found


_CACHES: "weakref.WeakKeyDictionary[sa.engine.Engine, CellCache]" = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def for_engine(engine: sa.engine.Engine) -> CellCache:
    with _CACHES_LOCK:
        cache = _CACHES.get(engine)
        if cache is None:
            cache = _CACHES[engine] = CellCache()
        return cache
