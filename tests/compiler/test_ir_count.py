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


def _helper(x):
    a = x + 1
    b = a * 2
    return b - 3


def _calls_helper(x):
    return _helper(x)


def _returns_argument(x):
    return x


def test_an_inlined_function_without_jumps_adds_nothing():
    """An inlined function's last segment (from its last taken jump, here its start, to its
    return) is not counted, as in Dynamo's inlining translator: only the caller's own
    instructions (loading and calling the helper) differ."""
    compiler.compile(_calls_helper)(np.ones(2))
    compiler.compile(_returns_argument)(np.ones(2))
    with_call, plain = compiler.events()
    assert with_call.ir_count - plain.ir_count < 6
    assert with_call.inlined_opcodes["BINARY_OP" if "BINARY_OP" in with_call.inlined_opcodes
                                      else "BINARY_ADD"] >= 1  # traced, for coverage


def _looping_helper(x):
    for i in range(3):
        x = x + i
    return x


def _calls_looping_helper(x):
    return _looping_helper(x)


def test_an_inlined_function_counts_its_segments_up_to_its_last_taken_jump():
    """Every taken jump of an inlined function adds its segment to the frame's count: the
    helper's loop is counted up to the loop's exit jump, its tail after that is not."""
    compiler.compile(_calls_looping_helper)(np.ones(2))
    compiler.compile(_calls_helper)(np.ones(2))
    looping, straight = compiler.events()
    instructions, _ = instructions_of(_looping_helper.__code__)
    (for_iter,) = [i for i, inst in enumerate(instructions) if inst.opname == "FOR_ITER"]
    (back,) = [i for i, inst in enumerate(instructions) if inst.target is instructions[for_iter] and i > for_iter]
    exit_target = next(i for i, inst in enumerate(instructions) if inst is instructions[for_iter].target)
    body = back - for_iter
    # from the helper's first instruction through the first jump back, then each further
    # iteration, then the last FOR_ITER (its exit is a taken jump); nothing after the exit
    counted = (back + 1) + 2 * (body + 1) + 1
    caller_difference = looping.ir_count - straight.ir_count  # the callers are alike but for the name
    assert caller_difference == counted
    assert exit_target > for_iter


def _generator_into_tuple(x):
    # unpacked rather than passed to tuple(): 3.14 compiles tuple(<genexpr>) into a loop
    return [*(x + k for k in range(3))]


def test_an_inlined_generator_counts_only_what_runs_between_a_yield_and_the_next_jump():
    """Dynamo runs a generator one next() at a time: a segment that ends at a yield is not
    counted, and each resumption starts a new segment at the instruction after the yield."""
    compiler.compile(_generator_into_tuple)(np.ones(2))
    (event,) = compiler.events()
    genexpr = next(c for c in _generator_into_tuple.__code__.co_consts if hasattr(c, "co_code"))
    instructions, _ = instructions_of(genexpr)
    (yield_at,) = [i for i, inst in enumerate(instructions) if inst.opname == "YIELD_VALUE"]
    (back,) = [i for i, inst in enumerate(instructions)
               if i > yield_at and inst.target is not None and instructions.index(inst.target) < yield_at]
    per_iteration = back - yield_at   # after the yield, through the jump back
    assert event.inlined_opcodes["YIELD_VALUE"] == 3
    counted_in_generator = 3 * per_iteration + 1  # and the FOR_ITER whose exit is a taken jump
    frame_only = sum(n for name, n in event.ir_opcodes.items()) - counted_in_generator
    own, _ = instructions_of(_generator_into_tuple.__code__)
    assert frame_only == len(own)  # the frame itself runs straight through once


def _loop_then_print(x):
    total = x
    for i in range(2):
        total = total + i
    print("break here")
    return total * 2.0


def test_a_frame_that_breaks_counts_its_segments_twice(capsys):
    """Dynamo traces a frame that breaks twice (it restarts at the break) and keeps both
    passes' counts; the segment ending at the break is counted by neither.  The
    continuation adds Dynamo's resume prologue flag (four instructions)."""
    from compiler.tracer import DYNAMO_RESUME_PROLOGUE_FLAG

    compiler.compile(_loop_then_print)(np.ones(2))
    frame, continuation = compiler.events()[:2]
    instructions, _ = instructions_of(_loop_then_print.__code__)
    (for_iter,) = [i for i, inst in enumerate(instructions) if inst.opname == "FOR_ITER"]
    (back,) = [i for i, inst in enumerate(instructions) if inst.target is instructions[for_iter] and i > for_iter]
    body = back - for_iter
    one_pass = (back + 1) + (body + 1) + 1   # two iterations, then the exit jump
    assert frame.ir_count == 2 * one_pass
    assert continuation.ir_opcodes["STORE_FAST"] >= DYNAMO_RESUME_PROLOGUE_FLAG.count("STORE_FAST")
    assert "break here" in capsys.readouterr().out


def _slice_then_scale(x):
    return x[1:] * 2.0   # BINARY_SLICE from 3.12; BUILD_SLICE and BINARY_SUBSCR before


def test_instructions_dynamo_expands_count_as_its_expansion():
    """Dynamo's cleaned bytecode turns BINARY_SLICE into BUILD_SLICE and BINARY_SUBSCR (the
    table's dynamo_counts_as is 2): a straight-line frame counts one more where the compiler
    emitted it, and exactly its instructions elsewhere.  (The IF_NONE jumps' 3 is checked
    against Dynamo itself: tests/matrix/test_dynamo_subject_torch.py.)"""
    compiler.compile(_slice_then_scale)(np.arange(3.0))
    (event,) = compiler.events()
    own, _ = instructions_of(_slice_then_scale.__code__)
    names = [inst.opname for inst in own]
    assert event.ir_count == len(own) + names.count("BINARY_SLICE")
    if "BINARY_SLICE" in names:
        assert event.ir_opcodes["BINARY_SLICE"] == 2


class _Base:
    def scale(self, x):
        return x * 2.0


class _Child(_Base):
    def scale(self, x):
        return super().scale(x) + 1.0


def test_a_bare_super_call_counts_as_dynamo_rewrites_it():
    """Where the table names the call Dynamo rewrites into ``super(__class__, self)``
    (fact dynamo_super_call: 3.8-3.11), the LOAD_GLOBAL of a zero-argument super() counts
    three.  The method runs straight through; the inlined base method adds nothing."""
    compiled = compiler.compile(_Child.scale)
    child, x = _Child(), np.ones(2)
    np.testing.assert_array_equal(compiled(child, x), _Child.scale(child, x))
    (event,) = compiler.events()
    own, _ = instructions_of(_Child.scale.__code__)
    rewritten = opcode_tables.current_table().fact("dynamo_super_call") is not None
    assert event.ir_count == len(own) + (2 if rewritten else 0)
