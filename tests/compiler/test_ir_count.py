"""ir_count follows Dynamo's rule (reference/cpython-bytecode.md, "How Dynamo counts ir_count").

Expected values are derived from the rule and the running version's table (never from
the interpreter's version number): 10 instructions for ``f`` and 6 for ``g`` as written,
plus the RESUME that every 3.11+ frame executes first; for a loop, from the frame's own
decoded instructions.
"""
from __future__ import annotations

import numpy as np

import compiler
import opcode_tables
from opcode_tables.decode import instructions_of


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


def _loop(x):
    for i in range(3):
        x = x + i
    return x


def test_loop_counts_every_executed_instruction():
    """Every instruction of the frame runs once; the loop body (from the instruction after
    FOR_ITER through the jump back to it) and FOR_ITER itself run once more per further
    iteration.  Superinstructions are split (they are counted as their halves)."""
    compiler.compile(_loop)(np.ones(2))
    (event,) = compiler.events()
    instructions, _ = instructions_of(_loop.__code__)
    (for_iter,) = [i for i, inst in enumerate(instructions) if inst.opname == "FOR_ITER"]
    (back,) = [i for i, inst in enumerate(instructions) if inst.target is instructions[for_iter] and i > for_iter]
    body = back - for_iter          # the instructions after FOR_ITER up to the jump back
    iterations = 3
    expected = len(instructions) + (iterations - 1) * body + iterations
    assert event.ir_count == expected
    assert event.ir_opcodes["FOR_ITER"] == iterations + 1
    assert sum(event.ir_opcodes.values()) == event.ir_count


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
