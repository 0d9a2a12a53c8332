"""Stack manipulation and no-ops."""
from __future__ import annotations

import dis

from opcode_tables.instruction import Instruction

from ..tracer import InstructionTranslatorBase
from ..variables.base import NULL
from .registry import handler


# NOT_TAKEN (3.14) marks the fall-through side of a branch for monitoring; nothing else.
@handler("NOP", "RESUME", "EXTENDED_ARG", "CACHE", "NOT_TAKEN")
def nop(tx: InstructionTranslatorBase, inst: Instruction):
    pass


@handler("POP_TOP")
def pop_top(tx: InstructionTranslatorBase, inst: Instruction):
    tx.pop_raw()


@handler("PUSH_NULL")
def push_null(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(NULL)


@handler("ROT_TWO")
def rot_two(tx: InstructionTranslatorBase, inst: Instruction):
    a, b = tx.popn_raw(2)
    tx.push(b)
    tx.push(a)


@handler("ROT_THREE")
def rot_three(tx: InstructionTranslatorBase, inst: Instruction):
    a, b, c = tx.popn_raw(3)
    tx.push(c)
    tx.push(a)
    tx.push(b)


@handler("ROT_FOUR")
def rot_four(tx: InstructionTranslatorBase, inst: Instruction):
    a, b, c, d = tx.popn_raw(4)
    tx.push(d)
    tx.push(a)
    tx.push(b)
    tx.push(c)


@handler("ROT_N")
def rot_n(tx: InstructionTranslatorBase, inst: Instruction):
    values = tx.popn_raw(inst.argval)
    tx.stack.extend([values[-1]] + values[:-1])


@handler("DUP_TOP")
def dup_top(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(tx.peek_raw())


@handler("DUP_TOP_TWO")
def dup_top_two(tx: InstructionTranslatorBase, inst: Instruction):
    a, b = tx.stack[-2:]
    tx.push(a)
    tx.push(b)


@handler("COPY")
def copy(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(tx.peek_raw(inst.argval))


@handler("SWAP")
def swap(tx: InstructionTranslatorBase, inst: Instruction):
    n = inst.argval
    tx.stack[-1], tx.stack[-n] = tx.stack[-n], tx.stack[-1]


_END_FOR_POPS = -dis.stack_effect(dis.opmap["END_FOR"]) if "END_FOR" in dis.opmap else 0


@handler("END_FOR")
def end_for(tx: InstructionTranslatorBase, inst: Instruction):
    # How many values END_FOR pops is the running interpreter's (2 on 3.12, 1 on 3.13, where a
    # POP_TOP follows); FOR_ITER leaves exactly that many when the loop ends.
    tx.popn(_END_FOR_POPS)


@handler("POP_ITER")
def pop_iter(tx: InstructionTranslatorBase, inst: Instruction):
    # The iterator after its loop (3.14); from 3.15 also the index or NULL GET_ITER pushed with it.
    tx.popn(tx.table.fact("iterator_slots"))


@handler("PRECALL", stack_effect_exempt=True)
def precall(tx: InstructionTranslatorBase, inst: Instruction):
    pass  # 3.11: CALL does the work (the stack-effect check books both on CALL)
