"""CPython 3.15: two-slot iterators and more common constants.

GET_ITER pushes two values (the iterable and an index, for sequences walked
without an iterator object; otherwise the iterator and NULL), so POP_ITER
pops two and END_SEND two; GET_ITER, CALL_FUNCTION_EX and RESUME gain an
inline cache unit.  LOAD_COMMON_CONSTANT gains list, set, None, "", True,
False and -1 (``return None`` and ``with`` exits no longer use LOAD_CONST).
Adds TRACE_RECORD (the JIT's trace recorder; never in a code object) and
removes GET_YIELD_FROM_ITER (``yield from`` uses GET_ITER).
"""
from __future__ import annotations

from . import py314
from .py312 import INTERPRETER_INTERNAL
from .spec import OpcodeSpec

_BASE = py314.TABLE


TABLE = _BASE.derive(
    (3, 15),
    add=[
        OpcodeSpec("TRACE_RECORD", unsupported=INTERPRETER_INTERNAL),
    ],
    remove=["GET_YIELD_FROM_ITER"],
    change=[
        # Natively the second slot may be a raw index beside the iterable, which no
        # continuation can receive as a parameter.
        _BASE.changed("GET_ITER", caches=1, resumable_after=False),
        _BASE.changed("CALL_FUNCTION_EX", caches=1),
        _BASE.changed("RESUME", caches=1),
    ],
    facts={
        "common_constants": _BASE.fact("common_constants") + (list, set, None, "", True, False, -1),
        "iterator_slots": 2,
    },
)
