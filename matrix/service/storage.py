"""Writing cells: one transaction per cell, idempotent on the cell's identity.

A cell's identity is (run_id, subject, python, backend, machine).  The machine is part
of it because one run (one nightly workflow run shares one run id) measures the same
interpreter and backend on several machines - the NumPy-nightly job beside the release
job, the GPU runner beside the CPU one - and each is its own measurement; without the
machine the second would be taken for a repost of the first.

Posting an identity again with the same document (same digest) changes nothing;
with a different document it is a conflict: history is never silently rewritten.
"""
from __future__ import annotations

import datetime
import threading
from typing import Any, Dict, List, Optional, Tuple

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from matrix.service.database import WRITE
from matrix.service.ingest import Cell
from matrix.service.tables import case_results, cells, points, series

SeriesKey = Tuple[str, str, str, str, str, str]   # subject, python, backend, machine, case, metric


class Conflict(Exception):
    """The identity is stored with a different document."""


def now_text() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Store:
    """The service's writes (reads are in `queries`)."""

    def __init__(self, engine: sa.engine.Engine) -> None:
        self.engine = engine
        # Series rows are never deleted, so a committed id stays right for the process's life.
        self._series_ids: Dict[SeriesKey, int] = {}
        self._cache_lock = threading.Lock()

    def _insert(self, table: sa.Table) -> Any:
        dialect = postgresql if self.engine.dialect.name == "postgresql" else sqlite
        return dialect.insert(table)

    def ingest(self, cell: Cell, posted_by: str, report_url: Optional[str] = None) -> Dict[str, Any]:
        """Store `cell`; {'created': bool, 'cell_id', 'points'}.  Raises Conflict."""
        for attempt in range(3):
            try:
                return self._ingest_once(cell, posted_by, report_url)
            except sa.exc.IntegrityError:
                # Another request stored the same identity between our check and our insert:
                # the next attempt finds it and answers as for any repost.
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _existing(self, conn: sa.engine.Connection, cell: Cell) -> Optional[Dict[str, Any]]:
        run_id, subject, python, backend, machine = cell.identity
        row = conn.execute(sa.select(cells.c.id, cells.c.digest).where(
            cells.c.run_id == run_id, cells.c.subject == subject, cells.c.python == python,
            cells.c.backend == backend, cells.c.machine == machine)).first()
        if row is None:
            return None
        if row.digest != cell.digest:
            raise Conflict(f"run {run_id} already has a different {subject} cell for Python {python}, "
                           f"backend {backend}, machine {machine}; post it under a new run id")
        count = conn.execute(sa.select(sa.func.count()).select_from(points).where(
            points.c.cell_id == row.id)).scalar_one()
        return {"created": False, "cell_id": row.id, "points": count}

    def _ingest_once(self, cell: Cell, posted_by: str, report_url: Optional[str]) -> Dict[str, Any]:
        with self.engine.connect().execution_options(**WRITE) as conn:
            with conn.begin():
                existing = self._existing(conn, cell)
                if existing is not None:
                    return existing
                cell_id = conn.execute(sa.insert(cells).values(
                    kind=cell.kind, run_id=cell.run_id, subject=cell.subject, python=cell.python,
                    backend=cell.backend, machine=cell.machine, timestamp=cell.timestamp,
                    schema_version=cell.schema_version, cell_status=cell.cell_status,
                    environment=cell.environment, metric_versions=cell.metric_versions,
                    case_count=len(cell.cases),
                    failed_count=sum(c.status in ("mismatch", "error", "timeout", "crashed")
                                     for c in cell.cases),
                    ir_total=cell.ir_total, digest=cell.digest, report_url=report_url,
                    posted_at=now_text(), posted_by=posted_by)).inserted_primary_key[0]
                ids, fresh = self._series_for(conn, cell)
                rows = [{"series_id": ids[(cell.subject, cell.python, cell.backend, cell.machine,
                                           case.name, metric)], "cell_id": cell_id, "value": value}
                        for case in cell.cases for metric, value in case.metrics.items()]
                if rows:
                    conn.execute(sa.insert(points), rows)
                if cell.cases:
                    conn.execute(sa.insert(case_results), [
                        {"cell_id": cell_id, "case_name": c.name, "status": c.status,
                         "ir_opcodes": c.ir_opcodes, "detail": c.detail} for c in cell.cases])
        with self._cache_lock:   # only now: a rolled-back series id must never be remembered
            self._series_ids.update(fresh)
        return {"created": True, "cell_id": cell_id, "points": len(rows)}

    def _series_for(self, conn: sa.engine.Connection,
                    cell: Cell) -> Tuple[Dict[SeriesKey, int], Dict[SeriesKey, int]]:
        """Every series id the cell needs (creating the missing ones), and the new ones."""
        column = (cell.subject, cell.python, cell.backend, cell.machine)
        wanted = sorted({column + (case.name, metric) for case in cell.cases for metric in case.metrics})
        with self._cache_lock:
            known = {key: self._series_ids[key] for key in wanted if key in self._series_ids}
        missing = [key for key in wanted if key not in known]
        if not missing:
            return known, {}
        # Sorted, so that two concurrent cells lock new rows in the same order (no deadlock).
        names = ("subject", "python", "backend", "machine", "case_name", "metric")
        conn.execute(self._insert(series).on_conflict_do_nothing(),
                     [dict(zip(names, key)) for key in missing])
        found = conn.execute(sa.select(series.c.id, series.c.case_name, series.c.metric).where(
            series.c.subject == cell.subject, series.c.python == cell.python,
            series.c.backend == cell.backend, series.c.machine == cell.machine))
        fresh = {column + (row.case_name, row.metric): row.id for row in found}
        fresh = {key: fresh[key] for key in missing}
        return {**known, **fresh}, fresh
