"""Creating functions (def, lambda, comprehensions before 3.12) and generator bodies.

Generators are traced eagerly when a user generator function (or generator
expression) is called inside the frame: every ``yield`` appends to the
inlined translator's list, and the caller iterates over that list.
"""
from __future__ import annotations

from opcode_tables.instruction import Instruction

from ..tracer import InstructionTranslatorBase
from ..variables.constant import ConstantVariable
from ..variables.containers import DictVariable
from ..variables.functions import NestedFunctionVariable
from .registry import handler


def _make(tx: InstructionTranslatorBase, code, qualname, flags, values) -> NestedFunctionVariable:
    """``values``: attribute name -> tracker, for the flag bits that were set."""
    defaults = values.get("defaults")
    kwdefaults = values.get("kwdefaults")
    closure = values.get("closure")
    fn = NestedFunctionVariable(
        code, qualname, tx.f_globals, tx.globals_source,
        defaults.unpack(tx) if defaults is not None else None,
        dict(kwdefaults.items) if isinstance(kwdefaults, DictVariable) else None,
        closure.unpack(tx) if closure is not None else [],
    )
    fn.annotations = values.get("annotations")
    fn.annotate = values.get("annotate")
    return fn


@handler("MAKE_FUNCTION")
def make_function(tx: InstructionTranslatorBase, inst: Instruction):
    qualname = tx.pop().as_python_constant() if tx.table.fact("make_function_qualname_on_stack") else None
    code = tx.pop().as_python_constant()
    if qualname is None:
        qualname = getattr(code, "co_qualname", code.co_name)
    flags = inst.arg or 0
    values = {}
    attr_flags = tx.table.fact("function_attr_flags")
    if tx.table.fact("function_attrs") == "make_function_flags":
        # Values sit on the stack in flag-bit order, the highest bit on top.
        for bit in reversed(range(len(attr_flags))):
            if flags & (1 << bit):
                values[attr_flags[bit]] = tx.pop()
    tx.push(_make(tx, code, qualname, flags, values))


@handler("SET_FUNCTION_ATTRIBUTE")
def set_function_attribute(tx: InstructionTranslatorBase, inst: Instruction):
    fn = tx.peek()
    if not isinstance(fn, NestedFunctionVariable):
        # A function object made natively (e.g. before a graph break): the attribute must
        # really be set on it.
        raise tx.unsupported(f"setting an attribute of {fn.describe()}, made outside the trace")
    tx.pop()
    value = tx.pop()
    attr_flags = tx.table.fact("function_attr_flags")
    name = attr_flags[(inst.arg or 0).bit_length() - 1]
    if name == "defaults":
        fn._defaults = value.unpack(tx)
    elif name == "kwdefaults":
        fn._kwdefaults = dict(value.items) if isinstance(value, DictVariable) else None
    elif name == "closure":
        fn._closure = value.unpack(tx)
    elif name == "annotations":
        fn.annotations = value
    elif name == "annotate":
        fn.annotate = value
    tx.push(fn)


@handler("YIELD_VALUE")
def yield_value(tx: InstructionTranslatorBase, inst: Instruction):
    if tx.yielded is None:
        raise tx.unsupported("yield outside an inlined generator")
    tx.yielded.append(tx.pop())
    tx.push(ConstantVariable(None))  # the value sent into the generator
    # ir_count: Dynamo runs an inlined generator one next() at a time; each run's last
    # segment (ending at this yield) is not counted, and the next run starts a new one.
    tx.drop_segment()


@handler("GEN_START", stack_effect_exempt=True)
def gen_start(tx: InstructionTranslatorBase, inst: Instruction):
    pass  # the initial send(None): nothing was pushed for it


@handler("RETURN_GENERATOR", stack_effect_exempt=True)
def return_generator(tx: InstructionTranslatorBase, inst: Instruction):
    if tx.yielded is None:
        raise tx.unsupported("generator frame")
    tx.push(ConstantVariable(None))  # resumed by the first send(None); the next POP_TOP drops it
