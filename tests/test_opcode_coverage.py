"""Every opcode with a handler in the running version's table is executed by at least one corpus case.

The corpus runs through the compiler once; the opcodes the tracer executed are the union of the events'
``ir_opcodes`` (the top-level frames) and, where the events expose them, of the opcodes executed inside
inlined functions and comprehensions.  An opcode whose handler no corpus case reaches is untested code.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
from collections import Counter
from typing import Counter as CounterType, Dict, FrozenSet, NamedTuple, Optional, Tuple

import pytest

import compiler
import opcode_tables
from tests.corpus import all_cases

class Unobserved(NamedTuple):
    reason: str
    versions: Optional[FrozenSet[Tuple[int, int]]] = None   # None: wherever the opcode has a handler


_INLINED = ("runs only inside comprehension code objects before 3.12, and events do not report the opcodes "
            "of inlined callees (CompilationEvent.inlined_opcodes)")

# Handled opcodes the corpus cannot show today, and why.  The test below fails when one of them starts being
# observed, so the list cannot go stale.
EXPECTED_UNOBSERVED: Dict[str, Unobserved] = {
    "NOP": Unobserved("CPython 3.8/3.9 remove every NOP before a function's code is built (checked over the "
                      "standard library)", frozenset({(3, 8), (3, 9)})),
    "CALL_INTRINSIC_2": Unobserved("emitted only for `except*` and type parameters, syntax newer than the "
                                   "corpus's 3.8", frozenset({(3, 12), (3, 13), (3, 14), (3, 15)})),
}

# Until events report the opcodes of inlined callees, those that only run in comprehension code objects
# (before 3.12) cannot be observed.
if "inlined_opcodes" not in {f.name for f in dataclasses.fields(compiler.CompilationEvent)}:
    for _name in ("LIST_APPEND", "MAP_ADD", "SET_ADD"):
        EXPECTED_UNOBSERVED[_name] = Unobserved(_INLINED, frozenset({(3, 8), (3, 9), (3, 10), (3, 11)}))

# Event fields that count opcodes traced inside inlined callees (nested code objects).
_INLINED_FIELDS = ("inlined_opcodes",)


def _traced_opcodes() -> CounterType[str]:
    seen: CounterType[str] = Counter()
    for case in all_cases().values():
        compiler.reset()
        fn = compiler.compile(case.fn)
        for call in case.calls():
            args, kwargs = copy.deepcopy((call.args, call.kwargs))
            with contextlib.redirect_stdout(io.StringIO()):
                try:
                    fn(*args, **kwargs)
                except Exception:  # the raising calls of the corpus; their behaviour is test_corpus's business
                    pass
        for event in compiler.events():
            if getattr(event, "fallback_reason", None):
                continue
            seen.update(event.ir_opcodes)
            for name in _INLINED_FIELDS:
                seen.update(getattr(event, name, None) or {})
    compiler.reset()
    return seen


def _required(table) -> set:
    """Handled opcodes a trace can reach: not the decoder's own (EXTENDED_ARG, CACHE), not those the table
    declares the tracer never traces (``OpcodeSpec.unsupported``: their handler only refuses)."""
    return {name for name in table.handlers
            if not table.opcodes[name].decoder_only and not table.opcodes[name].unsupported}


def _excused(table) -> Dict[str, str]:
    return {name: u.reason for name, u in EXPECTED_UNOBSERVED.items()
            if name in table.handlers and (u.versions is None or table.version in u.versions)}


@pytest.fixture(scope="module")
def coverage():
    table = opcode_tables.current_table()
    if not table.handlers:
        pytest.skip("the tracer binds no handlers for CPython %d.%d (issue 3 covers 3.8-3.12)" % table.version)
    return table, _traced_opcodes()


def test_every_handled_opcode_is_exercised_by_the_corpus(coverage):
    table, seen = coverage
    missing = sorted(_required(table) - set(seen) - set(_excused(table)))
    assert not missing, (
        f"{len(missing)} of {len(_required(table))} handled opcodes are never traced by the corpus on "
        f"{table.version[0]}.{table.version[1]}: {missing}; add corpus cases that reach them")


def test_expected_unobserved_opcodes_are_still_unobserved(coverage):
    table, seen = coverage
    observed = sorted(name for name in _excused(table) if seen.get(name))
    assert not observed, f"now traced by the corpus, remove from EXPECTED_UNOBSERVED: {observed}"
