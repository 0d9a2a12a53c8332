"""Debug dumps of the code a compiled function runs: its cache entries, break stubs
and continuations, for reading (``dis``, a decompiled view) and stepping through in
a debugger.

    with compiler.debug.prepare_debug("dump/"):   # everything compiled in the block,
        f(x)                                       # written out per compile id (dump.py)
    compiler.debug.code_objects(compiled_fn)  # [(label, code object), ...]
    print(compiler.debug.dump(compiled_fn))   # their disassembly, labelled
    print(compiler.debug.decompile(code))     # a readable Python view of any code object

The same listings go to the ``bytecode`` log channel as they are made
(``TRACEMATRIX_LOGS=bytecode``).
"""
from __future__ import annotations

import dis
import io
import types
from typing import Any, Callable, List, Tuple

from opcode_tables.decompile import decompile

from ..introspection import frame_cache_of
from .dump import DumpDirectoryWarning, prepare_debug

__all__ = ["prepare_debug", "DumpDirectoryWarning", "code_objects", "dump", "disassemble", "decompile"]




def code_objects(compiled: Callable) -> List[Tuple[str, types.CodeType]]:
    """Every code object made for ``compiled`` so far, labelled: each cache entry's
    generated function (of the function and of its continuations), each break stub
    and each continuation (``<qualname>.__resume_at_<offset>``)."""
    cache = frame_cache_of(compiled)
    out: List[Tuple[str, types.CodeType]] = []
    name = getattr(compiled, "__qualname__", "")

    def entries_of(label: str, frame_cache: Any) -> None:
        for entry in reversed(frame_cache.cache_entries):
            out.append((f"{label} entry {entry.event.compile_id}", entry.fn.__code__))

    entries_of(name, cache)
    for label, code in cache.registry.labelled:
        out.append((label, code))
    for continuation in cache.registry.continuations():
        entries_of(continuation.qualname, continuation.cache)
    return out


def disassemble(code: types.CodeType) -> str:
    buffer = io.StringIO()
    dis.dis(code, file=buffer)
    return buffer.getvalue()


def dump(compiled: Callable) -> str:
    """The disassembly of ``code_objects(compiled)``, each under its label."""
    parts = []
    for label, code in code_objects(compiled):
        parts.append(f"=== {label} ({code.co_filename}:{code.co_firstlineno})\n{disassemble(code)}")
    return "\n".join(parts)
