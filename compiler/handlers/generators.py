"""``yield from`` inside an inlined generator (generators are traced eagerly: see
compiler.tracer.inline_call): the delegate's items are yielded one by one and the
expression's value is what the delegate returned.  Only ``next()`` drives a traced generator,
so the value sent in is always None; anything else is Unsupported.

3.8-3.10 delegate in one instruction (YIELD_FROM, repeated by the interpreter); from 3.11 a
loop of SEND / YIELD_VALUE / JUMP_BACKWARD_NO_INTERRUPT, whose SEND jumps out with the return
value when the delegate is exhausted (table facts ``iterator_slots``: the delegate's stack
slots, ``send_pops_receiver_at_end``: 3.11's SEND pops it, later END_SEND does)."""
from __future__ import annotations

from opcode_tables.instruction import Instruction

from ..tracer import InstructionTranslatorBase
from ..variables.base import VariableTracker
from ..variables.constant import ConstantVariable
from ..variables.iterators import GeneratorIterator, IteratorVariable, iter_of
from .registry import handler


def _check_sent_none(tx: InstructionTranslatorBase, sent: VariableTracker) -> None:
    if not (sent.is_python_constant() and sent.as_python_constant() is None):
        raise tx.unsupported("a value sent into a delegating generator (traced generators run by next() only)")


def _delegate(tx: InstructionTranslatorBase, depth: int) -> IteratorVariable:
    receiver = tx.peek(depth)
    if not isinstance(receiver, IteratorVariable):
        raise tx.unsupported(f"yield from {receiver.describe()}")
    return receiver


def _returned(receiver: IteratorVariable) -> VariableTracker:
    """What ``yield from receiver`` evaluates to: a traced generator's return value, else None."""
    if isinstance(receiver, GeneratorIterator) and receiver.returned is not None:
        return receiver.returned
    return ConstantVariable(None)


@handler("GET_YIELD_FROM_ITER")
def get_yield_from_iter(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(iter_of(tx, tx.pop()))  # a generator is its own iterator


@handler("YIELD_FROM")
def yield_from(tx: InstructionTranslatorBase, inst: Instruction):
    if tx.yielded is None:
        raise tx.unsupported("yield from outside an inlined generator")
    _check_sent_none(tx, tx.pop())
    receiver = _delegate(tx, 1)
    while True:
        item = receiver.next(tx)
        if item is None:
            break
        tx.yielded.append(item)
        tx.drop_segment()  # as at a yield (ir_count)
    tx.pop()
    tx.push(_returned(receiver))


@handler("SEND")
def send(tx: InstructionTranslatorBase, inst: Instruction):
    if tx.yielded is None:
        raise tx.unsupported("send outside an inlined generator")
    _check_sent_none(tx, tx.pop())
    slots = tx.table.fact("iterator_slots")
    receiver = _delegate(tx, slots)
    item = receiver.next(tx)
    if item is not None:
        tx.push(item)  # YIELD_VALUE yields it next
        return
    if tx.table.fact("send_pops_receiver_at_end"):
        tx.popn(slots)
    tx.push(_returned(receiver))
    tx.jump_to(inst.target)


@handler("END_SEND")
def end_send(tx: InstructionTranslatorBase, inst: Instruction):
    value = tx.pop()
    tx.popn(tx.table.fact("iterator_slots"))
    tx.push(value)
