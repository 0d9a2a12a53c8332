"""ir_count follows Dynamo's rule (reference/cpython-bytecode.md, "How Dynamo counts ir_count").

Expected values are derived from the rule and the running version's table, not from
sys.version_info: 10 instructions for ``f`` and 6 for ``g`` as written, plus the RESUME
that every 3.11+ frame executes first.
"""
from __future__ import annotations

import numpy as np

import compiler
import opcode_tables


def f(x):
    y = x + x
    z = y * y
    return z


def g(x):
    y = x + x
    return y


def _resume_count() -> int:
    return 1 if "RESUME" in opcode_tables.current_table().opcodes else 0


def _event_after_call(fn):
    compiled = compiler.compile(fn)
    x = np.arange(10.0)
    np.testing.assert_array_equal(compiled(x), fn(x))
    (event,) = compiler.events()
    return event


def test_ir_count_of_f():
    event = _event_after_call(f)
    assert event.ir_count == 10 + _resume_count()
    assert sum(event.ir_opcodes.values()) == event.ir_count


def test_ir_count_of_g():
    event = _event_after_call(g)
    assert event.ir_count == 6 + _resume_count()


def test_ir_opcodes_explain_the_difference():
    event = _event_after_call(f)
    table = opcode_tables.current_table()
    assert event.ir_opcodes.get("RESUME", 0) == _resume_count()
    assert event.ir_opcodes["STORE_FAST"] == 2
    assert event.ir_opcodes["RETURN_VALUE"] == 1
    # The two operators: one BINARY_OP each from 3.11, one BINARY_<OP> each before.
    operators = sum(n for name, n in event.ir_opcodes.items() if name.startswith("BINARY_"))
    assert operators == 2
    assert ("BINARY_OP" in event.ir_opcodes) == ("BINARY_OP" in table.opcodes)
    # Superinstructions (3.13) are split: only plain opnames are counted.
    fused = table.fact("superinstructions")
    assert not set(event.ir_opcodes) & set(fused)


def test_loop_counts_every_executed_instruction():
    def loop(x):
        for i in range(3):
            x = x + i
        return x

    compiled = compiler.compile(loop)
    compiled(np.ones(2))
    (event,) = compiler.events()
    # Three iterations execute the body three times: the count grows with the trip count.
    def loop5(x):
        for i in range(5):
            x = x + i
        return x

    compiler.compile(loop5)(np.ones(2))
    event5 = compiler.events()[-1]
    per_iteration = (event5.ir_count - event.ir_count) // 2
    assert event5.ir_count - event.ir_count == 2 * per_iteration
    assert per_iteration >= 4  # FOR_ITER, STORE_FAST, LOAD_FAST, LOAD_FAST, BINARY_*, STORE_FAST, jump


def test_inlined_callee_instructions_are_not_counted():
    def helper(x):
        a = x + 1
        b = a * 2
        return b - 3

    def caller(x):
        return helper(x)

    def caller_inline_body(x):
        return x

    compiler.compile(caller)(np.ones(2))
    compiler.compile(caller_inline_body)(np.ones(2))
    with_call, plain = compiler.events()
    # The caller's own instructions only: loading and calling the helper, not its body.
    assert with_call.ir_count - plain.ir_count < 6
