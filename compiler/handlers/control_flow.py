"""Jumps, conditional branches and for loops.

Every branch is decided at trace time: the condition must be a constant (or
something whose truth is static, like a container's length); a condition on
array values is Unsupported (a data-dependent branch, issue 4).
"""
from __future__ import annotations

from opcode_tables.instruction import Instruction

from ..exc import Unsupported
from ..tracer import InstructionTranslatorBase
from ..variables.base import NULL
from ..variables.constant import ConstantVariable
from ..variables.iterators import IteratorVariable, iter_of
from ..variables.lazy import LazyArgument
from ..variables.operators import is_op
from .registry import handler


@handler("JUMP_FORWARD", "JUMP_ABSOLUTE", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT")
def jump(tx: InstructionTranslatorBase, inst: Instruction):
    tx.jump_to(inst.target)


def _pop_jump(expect: bool):
    def run(tx: InstructionTranslatorBase, inst: Instruction):
        if tx.pop().truth(tx) == expect:
            tx.jump_to(inst.target)
    return run


handler("POP_JUMP_IF_TRUE", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_TRUE")(_pop_jump(True))
handler("POP_JUMP_IF_FALSE", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE")(_pop_jump(False))


def _is_none(tx: InstructionTranslatorBase, value) -> bool:
    return is_op(tx, value, ConstantVariable(None))


def _pop_jump_none(expect: bool):
    def run(tx: InstructionTranslatorBase, inst: Instruction):
        if _is_none(tx, tx.pop()) == expect:
            tx.jump_to(inst.target)
    return run


handler("POP_JUMP_IF_NONE", "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NONE")(_pop_jump_none(True))
handler("POP_JUMP_IF_NOT_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
        "POP_JUMP_BACKWARD_IF_NOT_NONE")(_pop_jump_none(False))


def _jump_or_pop(expect: bool):
    def run(tx: InstructionTranslatorBase, inst: Instruction):
        if tx.peek().truth(tx) == expect:
            tx.jump_to(inst.target)
        else:
            tx.pop()
    return run


handler("JUMP_IF_TRUE_OR_POP")(_jump_or_pop(True))
handler("JUMP_IF_FALSE_OR_POP")(_jump_or_pop(False))


@handler("GET_ITER")
def get_iter(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(iter_of(tx, tx.pop()))
    # 3.15: GET_ITER pushes (iterator, index or NULL); the tracer always makes an iterator.
    for _ in range(tx.table.fact("iterator_slots") - 1):
        tx.push(NULL)


@handler("FOR_ITER", stack_effect_exempt=True)
def for_iter(tx: InstructionTranslatorBase, inst: Instruction):
    iterator = tx.peek_raw(tx.table.fact("iterator_slots"))
    if isinstance(iterator, LazyArgument):
        # The iterator of a loop a continuation resumes in (compiler.variables.lazy).
        try:
            iterator = iterator.realize(tx)
        except Unsupported:
            raise tx.unsupported(f"for loop over a {type(iterator.value).__name__!r} object from an earlier "
                                 "stage (each step is a break whose exits resume the body or the code "
                                 "after the loop)") from None
    if not isinstance(iterator, IteratorVariable):
        raise tx.unsupported(f"for loop over {iterator.describe()}")
    item = iterator.next(tx)
    if item is not None:
        tx.push(item)
        return
    target = inst.target
    if target.opname == "END_FOR":
        # Where the loop ends in END_FOR, CPython pops the iterator and skips END_FOR (and
        # the POP_TOP after it, where there is one).  Like Dynamo, run END_FOR instead with
        # a dummy value on the stack: same result, and END_FOR is counted as Dynamo counts it.
        tx.push(ConstantVariable(None))
    else:
        tx.popn(tx.table.fact("iterator_slots"))
    tx.jump_to(target)
