"""The public introspection API: what a compiled function holds, and a hook on new code.

    compiler.API_VERSION                       # bumped on any change to what this module promises
    compiler.cache_entries(fn)                 # [EntryInfo, ...] in lookup order (newest first)
    handle = compiler.register_bytecode_hook(lambda original, entry: ...)
    handle.remove()

Stability promise (API_VERSION 1): the names above, the fields of ``EntryInfo``
and their meaning, and the hook's call signature stay as documented here
within one API_VERSION.  Adding a field is a new API_VERSION; so is removing or
changing one.  tests/compiler/test_introspection_api.py pins this surface.
Everything else in ``compiler`` (CacheEntry, FrameCache, the entry's generated
source text) may change without notice.
"""
from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, Callable, List, Tuple

from .bytecode_hooks import BytecodeHook, HookHandle, register_bytecode_hook

API_VERSION = 1


@dataclass(frozen=True)
class EntryInfo:
    """One cache entry of a compiled frame, as the public API shows it."""

    compile_id: str                 # "<frame id>/<recompile>", as in CompilationEvent and the logs
    frame_name: str                 # the compiled frame: the function, or "<qualname>.__resume_at_<offset>"
    guards: Tuple[str, ...]         # each guard as Python source (an expression over the entry's names)
    guard_names: Tuple[str, ...]    # the same guards as the readable names recompile reasons use
    code: types.CodeType            # the entry's generated function (its source is in linecache)
    source: str                     # that function's Python source
    graphs: Tuple[str, ...]         # the canonical text of each graph the entry calls (compiler.graph_text)
    backend: str                    # the backend that runs the graphs ("eager" after a lowering fallback)
    kernel_sources: Tuple[str, ...] # the backend's generated source for those graphs, where it has one
    runs_natively: bool             # the entry runs the frame natively under its guards (no graph)


def frame_cache_of(fn: Callable) -> Any:
    """The FrameCache behind a compiled function (internal; TypeError for anything else)."""
    cache = getattr(fn, "_tracematrix_cache", None)
    if cache is None:
        raise TypeError(f"expected a function returned by compiler.compile(), got {type(fn).__name__} "
                        f"{getattr(fn, '__qualname__', '')!r}: only compiled functions have cache entries")
    return cache


def _info(entry: Any) -> EntryInfo:
    compiled = entry.compiled_graph
    graphs: Tuple[str, ...] = (str(entry.graph),) if entry.graph is not None else ()
    kernels: Tuple[str, ...] = (compiled.source,) if compiled is not None and compiled.source else ()
    return EntryInfo(
        compile_id=entry.event.compile_id, frame_name=entry.event.frame_name,
        guards=tuple(g.code for g in entry.guards), guard_names=tuple(g.name for g in entry.guards),
        code=entry.fn.__code__, source=entry.source, graphs=graphs,
        backend=compiled.backend if compiled is not None else entry.event.backend,
        kernel_sources=kernels, runs_natively=bool(entry.native))


def cache_entries(fn: Callable, *, continuations: bool = False) -> List[EntryInfo]:
    """The cache entries of compiled function ``fn`` in the order they are tried (newest
    first).  With ``continuations=True``, the entries of the continuations made for its
    graph breaks follow, each continuation's newest first."""
    cache = frame_cache_of(fn)
    infos = [_info(entry) for entry in cache.cache_entries]
    if continuations:
        for continuation in cache.registry.continuations():
            infos.extend(_info(entry) for entry in continuation.cache.cache_entries)
    return infos


__all__ = ["API_VERSION", "EntryInfo", "cache_entries", "register_bytecode_hook", "HookHandle", "BytecodeHook"]
