"""Every corpus function broken at every instruction its frame traces, compared with the plain function.

``compiler.config.force_break`` makes the compiled frame's trace treat one instruction as
unsupported, so each run goes through a real graph break there: the graph before it, the
side-effect replay, the stub that runs the instruction natively (inside the frame's own
try/with structure), and the continuation(s) compiled after it.  Whatever the break point,
nothing observable may differ from the plain call (results, prints, exceptions, mutations,
aliasing).  Continuations are not forced to break (they may break on their own).
"""
from __future__ import annotations

import os

import pytest

import compiler
from opcode_tables.decode import instructions_of
from tests.corpus import all_cases
from tests.corpus.runner import assert_same_outcome, run

CASES = all_cases()
# The suite runs on eager; TRACEMATRIX_TEST_BACKEND=numpy repeats it through generated code.
BACKEND = os.environ.get("TRACEMATRIX_TEST_BACKEND", "eager")


def _traced_indexes(case) -> list:
    """Indexes of the frame's instructions (the tracer's list): every one is tried."""
    instructions, _ = instructions_of(case.fn.__code__)
    return list(range(len(instructions)))


@pytest.fixture(autouse=True)
def _no_forcing_after():
    yield
    compiler.config.force_break = None
    compiler.reset()


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_break_anywhere_keeps_the_plain_behaviour(name):
    case = CASES[name]
    code = case.fn.__code__
    calls = case.calls()
    plain = [run(case.fn, call) for call in calls]
    for index in _traced_indexes(case):
        compiler.reset()
        compiler.config.force_break = lambda c, i, index=index: c is code and i == index
        compiled = compiler.compile(case.fn, backend=BACKEND)
        for n, call in enumerate(calls):
            assert_same_outcome(plain[n], run(compiled, call), close=case.close,
                                where=f"{name} broken at instruction {index}, call {n}")
