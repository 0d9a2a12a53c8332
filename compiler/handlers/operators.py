"""Unary, binary, in-place and comparison operators; subscripts and slices."""
from __future__ import annotations

from opcode_tables.instruction import Instruction

from ..tracer import InstructionTranslatorBase
from ..variables.builtins import isinstance_of_type
from ..variables.constant import ConstantVariable
from ..variables.containers import SliceVariable
from ..variables.operators import SYMBOLS, binary_op, compare_op, contains_op, is_op, unary_op
from .registry import handler

# One opcode per operator before 3.11 (BINARY_OP's arg indexes the table fact "binary_ops" after).
_BINARY_OPNAMES = {
    "POWER": "pow", "MULTIPLY": "mul", "MATRIX_MULTIPLY": "matmul", "FLOOR_DIVIDE": "floordiv",
    "TRUE_DIVIDE": "truediv", "MODULO": "mod", "ADD": "add", "SUBTRACT": "sub", "LSHIFT": "lshift",
    "RSHIFT": "rshift", "AND": "and_", "XOR": "xor", "OR": "or_",
}


def _binary(name: str, inplace: bool):
    def run(tx: InstructionTranslatorBase, inst: Instruction):
        b = tx.pop()
        a = tx.pop()
        tx.push(binary_op(tx, name, a, b, inplace=inplace))
    run.__name__ = f"{'inplace' if inplace else 'binary'}_{name}"
    return run


for _suffix, _name in _BINARY_OPNAMES.items():
    handler(f"BINARY_{_suffix}")(_binary(_name, False))
    handler(f"INPLACE_{_suffix}")(_binary(_name, True))


@handler("BINARY_OP")
def binary_op_generic(tx: InstructionTranslatorBase, inst: Instruction):
    _nb_name, symbol = tx.table.fact("binary_ops")[inst.arg]
    if symbol == "[]":  # 3.14: subscription is a BINARY_OP operand (BINARY_SUBSCR before)
        binary_subscr(tx, inst)
        return
    inplace = symbol.endswith("=")
    b = tx.pop()
    a = tx.pop()
    tx.push(binary_op(tx, SYMBOLS[symbol.rstrip("=")], a, b, inplace=inplace))


def _unary(name: str):
    def run(tx: InstructionTranslatorBase, inst: Instruction):
        tx.push(unary_op(tx, name, tx.pop()))
    run.__name__ = f"unary_{name}"
    return run


handler("UNARY_NEGATIVE")(_unary("neg"))
handler("UNARY_POSITIVE")(_unary("pos"))
handler("UNARY_INVERT")(_unary("invert"))


@handler("UNARY_NOT")
def unary_not(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(ConstantVariable(not tx.pop().truth(tx)))


@handler("TO_BOOL")
def to_bool(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(ConstantVariable(tx.pop().truth(tx)))


@handler("COMPARE_OP")
def compare(tx: InstructionTranslatorBase, inst: Instruction):
    b = tx.pop()
    a = tx.pop()
    op = inst.argval
    if op in ("in", "not in"):
        result = contains_op(tx, a, b)
        tx.push(ConstantVariable(result if op == "in" else not result))
    elif op in ("is", "is not"):
        result = is_op(tx, a, b)
        tx.push(ConstantVariable(result if op == "is" else not result))
    elif op == "exception match":
        tx.push(ConstantVariable(isinstance_of_type(a.as_python_constant(), b.as_python_constant())))
    else:
        tx.push(compare_op(tx, SYMBOLS[op], a, b))


@handler("IS_OP")
def is_op_handler(tx: InstructionTranslatorBase, inst: Instruction):
    b = tx.pop()
    a = tx.pop()
    result = is_op(tx, a, b)
    tx.push(ConstantVariable(result != bool(inst.arg)))


@handler("CONTAINS_OP")
def contains_op_handler(tx: InstructionTranslatorBase, inst: Instruction):
    b = tx.pop()
    a = tx.pop()
    result = contains_op(tx, a, b)
    tx.push(ConstantVariable(result != bool(inst.arg)))


@handler("BINARY_SUBSCR")
def binary_subscr(tx: InstructionTranslatorBase, inst: Instruction):
    key = tx.pop()
    obj = tx.pop()
    tx.push(obj.getitem(tx, key))


@handler("STORE_SUBSCR")
def store_subscr(tx: InstructionTranslatorBase, inst: Instruction):
    key = tx.pop()
    obj = tx.pop()
    value = tx.pop()
    obj.setitem(tx, key, value)


@handler("DELETE_SUBSCR")
def delete_subscr(tx: InstructionTranslatorBase, inst: Instruction):
    key = tx.pop()
    obj = tx.pop()
    obj.delitem(tx, key)


@handler("BUILD_SLICE")
def build_slice(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(SliceVariable(tx.popn(inst.argval)))


@handler("BINARY_SLICE")
def binary_slice(tx: InstructionTranslatorBase, inst: Instruction):
    start, stop = tx.popn(2)
    obj = tx.pop()
    tx.push(obj.getitem(tx, SliceVariable([start, stop])))


@handler("STORE_SLICE")
def store_slice(tx: InstructionTranslatorBase, inst: Instruction):
    start, stop = tx.popn(2)
    obj = tx.pop()
    value = tx.pop()
    obj.setitem(tx, SliceVariable([start, stop]), value)
