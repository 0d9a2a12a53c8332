"""Building and unpacking tuples, lists, sets, dicts and strings."""
from __future__ import annotations

from opcode_tables.instruction import Instruction

from ..exc import Unsupported
from ..tracer import InstructionTranslatorBase
from ..variables.constant import ConstantVariable
from ..variables.containers import DictVariable, ListVariable, SetVariable, TupleVariable, _const_key
from .registry import handler


@handler("BUILD_TUPLE")
def build_tuple(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(TupleVariable(tx.popn(inst.argval)))


@handler("BUILD_LIST")
def build_list(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(ListVariable(tx.popn(inst.argval)))


@handler("BUILD_SET")
def build_set(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(SetVariable({_const_key(v) for v in tx.popn(inst.argval)}))


@handler("BUILD_MAP")
def build_map(tx: InstructionTranslatorBase, inst: Instruction):
    values = tx.popn(2 * inst.argval)
    tx.push(DictVariable({_const_key(values[i]): values[i + 1] for i in range(0, len(values), 2)}))


@handler("BUILD_CONST_KEY_MAP")
def build_const_key_map(tx: InstructionTranslatorBase, inst: Instruction):
    keys = tx.pop().as_python_constant()
    values = tx.popn(inst.argval)
    tx.push(DictVariable(dict(zip(keys, values))))


@handler("BUILD_STRING")
def build_string(tx: InstructionTranslatorBase, inst: Instruction):
    parts = tx.popn(inst.argval)
    tx.push(ConstantVariable("".join(p.as_python_constant() for p in parts)))


@handler("LIST_APPEND")
def list_append(tx: InstructionTranslatorBase, inst: Instruction):
    value = tx.pop()
    tx.peek(inst.argval).call_method(tx, "append", [value], {})


@handler("SET_ADD")
def set_add(tx: InstructionTranslatorBase, inst: Instruction):
    value = tx.pop()
    tx.peek(inst.argval).call_method(tx, "add", [value], {})


@handler("MAP_ADD")
def map_add(tx: InstructionTranslatorBase, inst: Instruction):
    key, value = tx.popn(2)
    tx.peek(inst.argval).setitem(tx, key, value)


@handler("LIST_EXTEND")
def list_extend(tx: InstructionTranslatorBase, inst: Instruction):
    value = tx.pop()
    tx.peek(inst.argval).call_method(tx, "extend", [value], {})


@handler("SET_UPDATE")
def set_update(tx: InstructionTranslatorBase, inst: Instruction):
    value = tx.pop()
    tx.peek(inst.argval).call_method(tx, "update", [value], {})


@handler("DICT_UPDATE", "DICT_MERGE")
def dict_update(tx: InstructionTranslatorBase, inst: Instruction):
    value = tx.pop()
    target = tx.peek(inst.argval)
    if inst.opname == "DICT_MERGE" and isinstance(value, DictVariable):
        duplicate = set(target.items) & set(value.items)
        if duplicate:
            tx.raise_python_exception(TypeError(f"got multiple values for keyword argument {duplicate.pop()!r}"))
    target.call_method(tx, "update", [value], {})


@handler("LIST_TO_TUPLE")
def list_to_tuple(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(TupleVariable(tx.pop().unpack(tx)))


def _build_unpack(kind):
    def run(tx: InstructionTranslatorBase, inst: Instruction):
        items = []
        for part in tx.popn(inst.argval):
            items.extend(part.unpack(tx))
        if kind == "set":
            tx.push(SetVariable({_const_key(v) for v in items}))
        else:
            tx.push(ListVariable(items) if kind == "list" else TupleVariable(items))
    return run


handler("BUILD_TUPLE_UNPACK", "BUILD_TUPLE_UNPACK_WITH_CALL")(_build_unpack("tuple"))
handler("BUILD_LIST_UNPACK")(_build_unpack("list"))
handler("BUILD_SET_UNPACK")(_build_unpack("set"))


@handler("BUILD_MAP_UNPACK", "BUILD_MAP_UNPACK_WITH_CALL")
def build_map_unpack(tx: InstructionTranslatorBase, inst: Instruction):
    merged = DictVariable({})
    for part in tx.popn(inst.argval):
        merged.call_method(tx, "update", [part], {})
    tx.push(merged)


@handler("UNPACK_SEQUENCE")
def unpack_sequence(tx: InstructionTranslatorBase, inst: Instruction):
    items = tx.pop().unpack(tx)
    if len(items) != inst.argval:
        tx.raise_python_exception(ValueError(
            f"unpacking {len(items)} values into {inst.argval} names"))
    for item in reversed(items):
        tx.push(item)


@handler("UNPACK_EX")
def unpack_ex(tx: InstructionTranslatorBase, inst: Instruction):
    before = inst.arg & 0xFF
    after = inst.arg >> 8
    items = tx.pop().unpack(tx)
    if len(items) < before + after:
        tx.raise_python_exception(ValueError("not enough values to unpack"))
    head = items[:before]
    middle = items[before:len(items) - after]
    tail = items[len(items) - after:]
    for item in reversed(tail):
        tx.push(item)
    tx.push(ListVariable(middle))
    for item in reversed(head):
        tx.push(item)


# -- f-strings ----------------------------------------------------------------

_CONVERSIONS = {0: None, 1: str, 2: repr, 3: ascii}


def _format(tx: InstructionTranslatorBase, value, spec: str) -> ConstantVariable:
    if not value.is_python_constant():
        raise Unsupported(f"formatting {value.describe()} into a string needs its value")
    with tx.output.shape_env.reason("a size formatted into a string"):
        constant = value.as_python_constant()
    return tx.output.wrap_constant_result(tx.run_constant(format, [constant, spec], {}), [value])


@handler("FORMAT_VALUE")
def format_value(tx: InstructionTranslatorBase, inst: Instruction):
    flags = inst.arg
    spec = tx.pop().as_python_constant() if flags & 0x04 else ""
    value = tx.pop()
    convert = _CONVERSIONS[flags & 0x03]
    if convert is not None:
        if not value.is_python_constant():
            raise Unsupported(f"converting {value.describe()} to a string needs its value")
        value = tx.output.wrap_constant_result(tx.run_constant(convert, [value.as_python_constant()], {}),
                                               [value])
    tx.push(_format(tx, value, spec))


@handler("CONVERT_VALUE")
def convert_value(tx: InstructionTranslatorBase, inst: Instruction):
    value = tx.pop()
    if not value.is_python_constant():
        raise Unsupported(f"converting {value.describe()} to a string needs its value")
    tx.push(tx.output.wrap_constant_result(
        tx.run_constant(_CONVERSIONS[inst.arg], [value.as_python_constant()], {}), [value]))


@handler("FORMAT_SIMPLE")
def format_simple(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(_format(tx, tx.pop(), ""))


@handler("FORMAT_WITH_SPEC")
def format_with_spec(tx: InstructionTranslatorBase, inst: Instruction):
    spec = tx.pop().as_python_constant()
    tx.push(_format(tx, tx.pop(), spec))
