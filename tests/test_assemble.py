"""Assembling edited instruction lists into code objects that run correctly.

No version checks here: sequences that differ per version come from
``opcode_tables.factories`` and the table's facts.
"""
from __future__ import annotations

import dis
import types

import pytest

from opcode_tables import create_instruction, current_table
from opcode_tables.assemble import AssemblyError, assemble
from opcode_tables.decode import decode, split_superinstructions
from opcode_tables.factories import (body_start, create_binary_op, create_call_function, create_load_const,
                                     create_load_global, create_pop_jump_if, create_try_except)

TABLE = current_table()
recorded: list = []


def step(value):
    return value + 1


def record(value):
    recorded.append(value)
    return value


def checked_inverse(x):
    if x == 0:
        raise ZeroDivisionError("no inverse of 0")
    return 1 / x


def _function(code, template_function):
    return types.FunctionType(code, globals(), template_function.__name__,
                              template_function.__defaults__, template_function.__closure__)


def _edited(function):
    return decode(function.__code__).instructions


def multiply_add(a, b):
    return a * b + 1


def branchy(x):
    if x > 0:
        return "positive"
    return "not positive"


def counting_loop(n):
    i = 0
    total = 0
    while i < n:
        total += i
        i += 1
    return total


def make_closure():
    y = 5

    def inner():
        return y

    return inner


def test_unmodified_assembly_is_identical_and_runs():
    for function in (multiply_add, branchy, counting_loop, make_closure):
        code = function.__code__
        rebuilt = assemble(decode(code).instructions, code)
        assert rebuilt.co_code == code.co_code
        assert rebuilt.co_stacksize == code.co_stacksize
    assert _function(assemble(_edited(counting_loop), counting_loop.__code__), counting_loop)(5) == 10


def _insert_record_call(function, value, push_null_on_call: bool):
    instructions = _edited(function)
    at = body_start(instructions)
    if push_null_on_call:
        # callable loaded without a NULL slot: the call sequence adds it
        load = create_instruction("LOAD_GLOBAL", argval="record")
    else:
        load = create_load_global("record", push_null=True)
    call = [load, create_load_const(value), *create_call_function(1, push_null=push_null_on_call),
            create_instruction("POP_TOP")]
    instructions[at:at] = call
    return _function(assemble(instructions, function.__code__), function)


@pytest.mark.parametrize("push_null_on_call", [False, True])
def test_insert_a_call_at_the_start(push_null_on_call):
    recorded.clear()
    edited = _insert_record_call(multiply_add, "entered", push_null_on_call)
    assert edited(3, 4) == multiply_add(3, 4) == 13
    assert recorded == ["entered"]
    assert edited.__code__.co_stacksize >= multiply_add.__code__.co_stacksize


def test_inserted_call_in_closure_keeps_cells():
    recorded.clear()
    edited = _insert_record_call(make_closure, 7, False)
    assert edited()() == 5
    assert recorded == [7]


def test_new_constants_keep_types_apart():
    def zero():
        return 0

    instructions = _edited(zero)
    at = body_start(instructions)
    for value in (False, 0.0, -0.0, (0, False)):
        edited_list = list(instructions)
        edited_list[at:at] = [create_load_const(value), create_instruction("RETURN_VALUE")]
        result = _function(assemble(edited_list, zero.__code__), zero)()
        assert type(result) is type(value) and repr(result) == repr(value)


def _count_extended_args(code):
    return sum(1 for ins in dis.get_instructions(code) if ins.opname == "EXTENDED_ARG")


def test_jump_retargeted_past_the_extended_arg_limit():
    instructions = _edited(branchy)
    at = body_start(instructions)
    landing = create_load_const("jumped")
    padding = [create_instruction("NOP") for _ in range(300)]
    instructions[at:at] = [create_instruction("JUMP_FORWARD", target=landing), *padding,
                           landing, create_instruction("RETURN_VALUE")]
    code = assemble(instructions, branchy.__code__)
    assert _count_extended_args(code) >= 1
    assert _function(code, branchy)(1) == "jumped"


def test_existing_jumps_grow_extended_args_when_code_is_padded():
    for function, cases in ((branchy, [(1,), (-1,)]), (counting_loop, [(0,), (7,)])):
        instructions = _edited(function)
        at = body_start(instructions)
        instructions[at:at] = [create_instruction("NOP") for _ in range(300)]
        jumps = [inst for inst in instructions if inst.target is not None]
        for jump in jumps:
            where = instructions.index(jump)
            if instructions.index(jump.target) > where:  # forward: pad between jump and target
                instructions[where + 1:where + 1] = [create_instruction("NOP") for _ in range(300)]
            else:  # backward: pad between target and jump
                instructions[where:where] = [create_instruction("NOP") for _ in range(300)]
        code = assemble(instructions, function.__code__)
        assert _count_extended_args(code) >= len(jumps)
        edited = _function(code, function)
        for args in cases:
            assert edited(*args) == function(*args)


def inverse_or_default(x):
    return x


def test_try_except_region_catches_a_raised_error():
    instructions = _edited(inverse_or_default)
    at = body_start(instructions)
    after = create_instruction("LOAD_FAST", argval="result")
    body = [create_load_global("checked_inverse", push_null=True), create_instruction("LOAD_FAST", argval="x"),
            *create_call_function(1, push_null=False), create_instruction("STORE_FAST", argval="result")]
    handler = [create_load_const("caught"), create_instruction("STORE_FAST", argval="result")]
    region = create_try_except(body, handler, after)
    instructions[at:] = [*region, after, create_instruction("RETURN_VALUE")]
    code = assemble(instructions, inverse_or_default.__code__)
    assert code.co_nlocals == inverse_or_default.__code__.co_nlocals + 1
    edited = _function(code, inverse_or_default)
    assert edited(4) == 0.25
    assert edited(0) == "caught"
    if TABLE.fact("exception_table"):
        assert decode(code).exception_entries, "the region is in co_exceptiontable"
    else:
        assert any(TABLE[inst.opname].block_setup for inst in decode(code).instructions)


def test_new_local_in_code_with_cells_keeps_closures_working():
    instructions = _edited(make_closure)
    at = body_start(instructions)
    instructions[at:at] = [create_load_const(1), create_instruction("STORE_FAST", argval="extra")]
    code = assemble(instructions, make_closure.__code__)
    assert "extra" in code.co_varnames
    assert _function(code, make_closure)()() == 5


def test_unknown_opname_and_missing_target_are_clear_errors():
    instructions = _edited(multiply_add)
    with pytest.raises(AssemblyError, match="not an opcode"):
        assemble([create_instruction("NOT_AN_OPCODE")] + instructions, multiply_add.__code__)
    stray = create_instruction("NOP")
    with pytest.raises(AssemblyError, match="jump target"):
        assemble([create_instruction("JUMP_FORWARD", target=stray)] + instructions, multiply_add.__code__)
    with pytest.raises(AssemblyError, match="unknown code fields"):
        assemble(instructions, multiply_add.__code__, co_bogus=1)


def count_to(n):
    return n


def _step_i() -> list:
    return [create_load_global("step", push_null=True), create_instruction("LOAD_FAST", argval="i"),
            *create_call_function(1, push_null=False), create_instruction("STORE_FAST", argval="i"),
            create_instruction("LOAD_FAST", argval="i"), create_instruction("LOAD_FAST", argval="n"),
            create_instruction("COMPARE_OP", argval="<")]


def test_unconditional_jump_turned_backward_gets_a_backward_form():
    instructions = _edited(count_to)
    at = body_start(instructions)
    loop, end = create_instruction("NOP"), create_instruction("LOAD_FAST", argval="i")
    instructions[at:] = [create_load_const(0), create_instruction("STORE_FAST", argval="i"),
                         loop, *_step_i(), *create_pop_jump_if(False, end),
                         create_instruction("JUMP_FORWARD", target=loop),  # really backward
                         end, create_instruction("RETURN_VALUE")]
    edited = _function(assemble(instructions, count_to.__code__), count_to)
    # 100 rounds: 3.12+ specialise COMPARE_OP, whose low arg bits must then be right
    assert [edited(n) for n in (0, 1, 5, 100)] == [1, 1, 5, 100]


def test_conditional_jump_turned_backward_switches_direction_or_is_refused():
    instructions = _edited(count_to)
    at = body_start(instructions)
    loop = create_instruction("NOP")
    instructions[at:] = [create_load_const(0), create_instruction("STORE_FAST", argval="i"),
                         loop, *_step_i(), *create_pop_jump_if(True, loop),
                         create_instruction("LOAD_FAST", argval="i"), create_instruction("RETURN_VALUE")]
    can_go_back = any(spec.conditional and spec.jump in ("abs", "rel_back") and spec.name.startswith("POP_JUMP")
                      for spec in TABLE.opcodes.values())
    if not can_go_back:
        with pytest.raises(AssemblyError, match="cannot jump backward"):
            assemble(instructions, count_to.__code__)
        return
    edited = _function(assemble(instructions, count_to.__code__), count_to)
    assert [edited(n) for n in (0, 3, 100)] == [1, 3, 100]


@pytest.mark.parametrize("symbol, expected", [("+", 10), ("*", 21), ("%", 1), ("-=", 4), ("**", 343), ("//=", 2)])
def test_binary_operators_from_symbols(symbol, expected):
    def seven(x):
        return x

    instructions = _edited(seven)
    at = body_start(instructions)
    instructions[at:] = [create_instruction("LOAD_FAST", argval="x"), create_load_const(3),
                         create_binary_op(symbol), create_instruction("RETURN_VALUE")]
    assert _function(assemble(instructions, seven.__code__), seven)(7) == expected


def test_split_superinstructions_assemble_and_run():
    def mix(a, b):
        c = a * b
        d = c - a
        for i in range(b):
            d += i
        return d, c

    split = split_superinstructions(decode(mix.__code__).instructions)
    edited = _function(assemble(split, mix.__code__), mix)
    assert [edited(a, b) for a, b in ((2, 3), (5, 0))] == [mix(2, 3), mix(5, 0)]
