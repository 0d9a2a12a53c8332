"""Calls and returns, for every version's call sequence.

Where NULL sits in a call sequence is the table fact ``call_null_layout``:
None (up to 3.10), "null_first" (3.11, 3.12: ``[NULL|callable, callable|self,
args...]``) or "callable_first" (3.13: ``[callable, NULL|self, args...]``);
how keyword names arrive is the fact ``kw_names``.
"""
from __future__ import annotations

from typing import Dict, List

from opcode_tables.instruction import Instruction

from ..tracer import InstructionTranslatorBase
from ..variables.base import NULL, VariableTracker
from ..variables.containers import DictVariable, TupleVariable
from ..variables.operators import unary_op
from .registry import handler


def _kwargs_from(names: tuple, values: List[VariableTracker]):
    n = len(names)
    if n == 0:
        return values, {}
    return values[:-n], dict(zip(names, values[-n:]))


def _pop_callable_pair(tx: InstructionTranslatorBase):
    """The callable and the self argument (if any) below a call's arguments."""
    layout = tx.table.fact("call_null_layout")
    upper = tx.pop()
    lower = tx.pop()
    if layout == "callable_first":
        fn, self_arg = lower, upper
    else:
        fn, self_arg = upper, lower
        if lower is not NULL:
            # [method, self]: the lower slot holds the function
            fn, self_arg = lower, upper
    return fn, (None if self_arg is NULL else self_arg)


def _call(tx: InstructionTranslatorBase, fn, args, kwargs) -> None:
    tx.push(tx.call_function(fn, args, kwargs))


@handler("CALL_FUNCTION")
def call_function(tx: InstructionTranslatorBase, inst: Instruction):
    args = tx.popn(inst.argval)
    fn = tx.pop()
    _call(tx, fn, args, {})


@handler("CALL_FUNCTION_KW")
def call_function_kw(tx: InstructionTranslatorBase, inst: Instruction):
    names = tx.pop().as_python_constant()
    values = tx.popn(inst.argval)
    fn = tx.pop()
    args, kwargs = _kwargs_from(names, values)
    _call(tx, fn, args, kwargs)


@handler("CALL_METHOD")
def call_method(tx: InstructionTranslatorBase, inst: Instruction):
    args = tx.popn(inst.argval)
    fn, self_arg = _pop_callable_pair(tx)
    _call(tx, fn, ([self_arg] if self_arg is not None else []) + args, {})


@handler("KW_NAMES")
def kw_names(tx: InstructionTranslatorBase, inst: Instruction):
    names = inst.argval
    if not isinstance(names, tuple):
        # dis (and so the decoded argval) leaves KW_NAMES' constant unresolved on 3.11
        names = tx.code.co_consts[inst.arg]
    tx.kw_names = names


@handler("CALL")
def call(tx: InstructionTranslatorBase, inst: Instruction):
    values = tx.popn(inst.argval)
    names = tx.kw_names or ()
    tx.kw_names = None
    fn, self_arg = _pop_callable_pair(tx)
    args, kwargs = _kwargs_from(names, values)
    _call(tx, fn, ([self_arg] if self_arg is not None else []) + args, kwargs)


@handler("CALL_KW")
def call_kw(tx: InstructionTranslatorBase, inst: Instruction):
    names = tx.pop().as_python_constant()
    values = tx.popn(inst.argval)
    fn, self_arg = _pop_callable_pair(tx)
    args, kwargs = _kwargs_from(names, values)
    _call(tx, fn, ([self_arg] if self_arg is not None else []) + args, kwargs)


@handler("CALL_FUNCTION_EX")
def call_function_ex(tx: InstructionTranslatorBase, inst: Instruction):
    if tx.table.fact("call_function_ex_kwargs") == "slot":
        kwargs_var = tx.pop()
        kwargs_var = None if kwargs_var is NULL else kwargs_var
    else:
        kwargs_var = tx.pop() if inst.argval & 1 else None
    args_var = tx.pop()
    layout = tx.table.fact("call_null_layout")
    if layout == "callable_first":
        null = tx.pop()
        fn = tx.pop()
    else:
        fn = tx.pop()
        if layout == "null_first":
            null = tx.pop()
            if null is not NULL:
                raise tx.unsupported("CALL_FUNCTION_EX with a method pair")
    args = args_var.unpack(tx)
    kwargs: Dict[str, VariableTracker] = {}
    if kwargs_var is not None:
        if not isinstance(kwargs_var, DictVariable):
            raise tx.unsupported(f"**{kwargs_var.describe()} in a call")
        if not all(isinstance(k, str) for k in kwargs_var.items):
            # CPython raises "keywords must be strings", worded per callee and version: the
            # native call raises it exactly.
            raise tx.unsupported("** mapping with keys that are not strings")
        kwargs = {k: v for k, v in kwargs_var.items.items()}
    _call(tx, fn, args, kwargs)


@handler("CALL_INTRINSIC_1")
def call_intrinsic_1(tx: InstructionTranslatorBase, inst: Instruction):
    name = tx.table.fact("intrinsics_1")[inst.arg]
    if name == "INTRINSIC_LIST_TO_TUPLE":
        tx.push(TupleVariable(tx.pop().unpack(tx)))
    elif name == "INTRINSIC_UNARY_POSITIVE":
        tx.push(unary_op(tx, "pos", tx.pop()))
    elif name == "INTRINSIC_STOPITERATION_ERROR":
        raise tx.unsupported("StopIteration raised inside a generator")
    else:
        raise tx.unsupported(f"CALL_INTRINSIC_1 {name}")


@handler("CALL_INTRINSIC_2")
def call_intrinsic_2(tx: InstructionTranslatorBase, inst: Instruction):
    raise tx.unsupported(f"CALL_INTRINSIC_2 {tx.table.fact('intrinsics_2')[inst.arg]}")


@handler("RETURN_VALUE")
def return_value(tx: InstructionTranslatorBase, inst: Instruction):
    tx.do_return(tx.pop())
