"""Storage of compiled entries: one ``FrameCache`` per code object (and globals dict).

A ``FrameCache`` holds the entries of one code object, newest first: each
entry is one generated function (guards + graph call + output rebuild,
compiler.entry_codegen) returning ``MISS`` when its guards fail.  It also
keeps the registry of the stubs and continuations made for the function's
graph breaks (compiler.resume), and whether the frame runs natively from now
on (the cache limit was reached, or the compiler failed).  Deciding what to
put here is the driver's job (compiler.convert_frame); this module only
stores and counts.
"""
from __future__ import annotations

import types
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from .events import CompilationEvent
from .graph import Graph
from .guard_dispatch import hit_path
from .guards import Guard, Namespace, first_failing
from .resume import Registry


class CacheEntry:
    """One compiled entry: its generated function and what it was made from."""

    def __init__(self, fn: Callable, guards: List[Guard], ns: Namespace, params: List[str], source: str,
                 event: CompilationEvent, graph: Optional[Graph] = None, compiled_graph: Any = None,
                 native: bool = False) -> None:
        self.fn = fn
        self.guards = guards
        self.ns = ns
        self.params = params
        self.source = source
        self.event = event
        self.graph = graph
        self.compiled_graph = compiled_graph
        self.native = native

    def first_failing_guard(self, values: Sequence[Any], closure: Optional[tuple]) -> Optional[Guard]:
        return first_failing(self.guards, self.params, self.ns, [closure, *values])


class FrameCache:
    def __init__(self, code: types.CodeType, registry: Optional[Registry] = None, observed: bool = True) -> None:
        self.code = code
        # False: compilations invisible to compiler.events(), explain() and hooks (config option
        # "observed"); their compile ids come from a counter of their own, marked "u".
        self.observed = observed
        self.entries: List[Any] = []          # the generated entry functions, newest first
        # What the compiled function's hit path tries in order: the entry functions while
        # few, else one dispatcher over them (compiler.guard_dispatch).
        self.hit_entries: List[Any] = []
        self.cache_entries: List[CacheEntry] = []
        self.native = False                   # run natively from now on
        self.native_reason: Optional[str] = None
        self.frame_id: Optional[int] = None
        self.compiles = 0
        # Which dimensions of input arrays are symbolic (the compile option ``dynamic``: None
        # for automatic, True, False) and, per source, the shapes earlier compiles saw (a
        # dimension that changed is None): compiler.symbolic_shapes.FramePolicy.
        self.dynamic: Optional[bool] = None
        self.seen_shapes: Dict[str, Tuple[Optional[int], ...]] = {}
        # Sources (by name) of Python scalars whose value changed between calls: later traces
        # make them graph inputs instead of constants (compiler.variables.scalars).
        self.dynamic_scalars: Set[str] = set()
        # Stubs and continuations of this function's graph breaks (a continuation's own
        # cache is given its root function's registry).
        self.registry = registry if registry is not None else Registry()

    def next_compile_id(self) -> str:
        """"<frame id>/<compiles so far>" (frame ids are given out in order of first compile)."""
        counter = _frame_ids if self.observed else _unobserved_frame_ids
        if self.frame_id is None:
            self.frame_id = counter[0]
            counter[0] += 1
        return f"{'' if self.observed else 'u'}{self.frame_id}/{self.compiles}"

    def install(self, entry: CacheEntry) -> None:
        """Make ``entry`` the newest (first tried) entry."""
        if self.observed:
            _made_entries.append(entry)
        self.cache_entries.insert(0, entry)
        self.entries.insert(0, entry.fn)
        self.hit_entries[:] = hit_path(self.cache_entries)

    def run_natively(self, reason: str) -> None:
        """From now on calls run the plain function, without looking at the entries."""
        self.native = True
        self.native_reason = reason

    def clear(self) -> None:
        self.registry.clear()
        self.entries.clear()
        self.hit_entries.clear()
        self.cache_entries.clear()
        self.native = False
        self.native_reason = None
        self.frame_id = None
        self.compiles = 0
        self.seen_shapes.clear()
        self.dynamic_scalars.clear()


# (id(code), id(globals), observed) -> (code, globals, cache).  By identity: code objects
# compare equal by value, so two functions made from the same source (a generated function
# made again by exec, with a fresh globals dict) would otherwise share one cache, and its
# entries and continuations read the other one's globals.  The value holds the code and the
# globals, so neither id is reused by another object while its key is here.
_caches: Dict[Tuple[int, int, bool], Tuple[types.CodeType, dict, FrameCache]] = {}
_frame_ids = [0]
_unobserved_frame_ids = [0]
# Every cache entry made, in order (compiler.explain collects the graphs of one call from it).
_made_entries: List[CacheEntry] = []


def entries_made() -> int:
    return len(_made_entries)


def entries_since(start: int) -> List[CacheEntry]:
    return _made_entries[start:]


def cache_for(fn: types.FunctionType, observed: bool = True) -> FrameCache:
    """The entries of ``fn``'s code (per globals dict); observed and unobserved compilations
    of one function keep separate caches."""
    code, f_globals = fn.__code__, fn.__globals__
    key = (id(code), id(f_globals), observed)
    known = _caches.get(key)
    if known is None:
        known = _caches[key] = (code, f_globals, FrameCache(code, observed=observed))
    return known[2]


def reset() -> None:
    """Empty every cache (wrappers keep their FrameCache object, now empty) and forget them."""
    for _code, _globals, cache in _caches.values():
        cache.clear()
    _caches.clear()
    _made_entries.clear()
    _frame_ids[0] = 0
