"""Python operators on arrays (``operator.add`` ...), their in-place forms, and
indexing with constant indices.

Reflected operators need no entry: the tracer passes the operands in source
order (``2 - x`` is ``operator.sub(2, x)``), and ``fn`` is the operator
itself, so NumPy's own dispatch decides, exactly as in the plain function.
"""
from __future__ import annotations

import operator
from typing import Any, List

import numpy as np

from compiler.exc import Unsupported
from compiler.graph import TensorMeta
from compiler.ops import rules, shapes
from compiler.ops.opinfo import OpInfo
from compiler.ops.standins import evaluate, evaluate_view

# operator name -> (ufunc the operator dispatches to on arrays, source symbol).
# ``pow`` has no ufunc: ndarray.__pow__ takes fast paths (x**2 is
# np.square, x**0.5 np.sqrt), so a backend must call the operator itself.
BINARY = {
    "add": ("add", "+"), "sub": ("subtract", "-"), "mul": ("multiply", "*"),
    "truediv": ("divide", "/"), "floordiv": ("floor_divide", "//"), "mod": ("remainder", "%"),
    "pow": (None, "**"), "and_": ("bitwise_and", "&"), "or_": ("bitwise_or", "|"),
    "xor": ("bitwise_xor", "^"), "lshift": ("left_shift", "<<"), "rshift": ("right_shift", ">>"),
    "lt": ("less", "<"), "le": ("less_equal", "<="), "eq": ("equal", "=="),
    "ne": ("not_equal", "!="), "gt": ("greater", ">"), "ge": ("greater_equal", ">="),
}
UNARY = {"neg": ("negative", "-"), "pos": ("positive", "+"), "invert": ("invert", "~"),
         "abs": ("absolute", "abs")}
INPLACE = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and_", "or_", "xor",
           "lshift", "rshift", "matmul")


def _inplace_name(name: str) -> str:
    return "i" + name.rstrip("_")


def _index_items(index: Any) -> tuple:
    return index if isinstance(index, tuple) else (index,)


def _is_basic_item(item: Any) -> bool:
    if item is None or item is Ellipsis:
        return True
    if isinstance(item, slice):
        return all(v is None or _is_int(v) for v in (item.start, item.stop, item.step))
    return _is_int(item)


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_int_list(value: Any) -> bool:
    """A constant (nested) list of ints: an integer index array spelled in Python."""
    if not isinstance(value, list):
        return False
    return all(_is_int(v) or _is_int_list(v) for v in value)


def _is_graph_int_array(value: Any) -> bool:
    return isinstance(value, TensorMeta) and value.dtype.kind in "iu"


def is_advanced_item(item: Any) -> bool:
    """An integer index array (advanced indexing): the result's shape is the
    index's broadcast shape plus the remaining dimensions, so it is static."""
    return _is_int_list(item) or _is_graph_int_array(item)


def getitem_rule(op: OpInfo, args: tuple, kwargs: dict) -> Any:
    if len(args) != 2 or kwargs:
        raise Unsupported(f"{op.name}: expected (value, index)")
    value, index = args
    if isinstance(value, tuple) and all(isinstance(m, TensorMeta) for m in value):
        if not _is_int(index) or not -len(value) <= index < len(value):
            raise Unsupported(f"{op.name}: a multi-output node takes a constant int index")
        return value[index]
    if not isinstance(value, TensorMeta):
        raise Unsupported(f"{op.name}: only arrays in the graph are indexed here")
    items = _index_items(index)
    if not all(_is_basic_item(item) or is_advanced_item(item) for item in items):
        raise Unsupported(f"{op.name}: index {type(index).__name__} is not a constant int, slice, "
                          "None, ..., or an integer list/array (boolean masks have "
                          "data-dependent results)")
    # Advanced indexing copies, so its stand-in result is allocated at full size (trace time
    # only).  A constant index out of range raises NumPy's IndexError here: the frame runs
    # natively and NumPy raises it.  An index array from the graph is checked when the graph
    # runs (see compiler.ops.effects).
    return evaluate_view(operator.getitem, args, {}, op.name)


def pow_rule(op: OpInfo, args: tuple, kwargs: dict) -> Any:
    """``a ** b``: ndarray.__pow__ takes fast paths for a 0-d exponent by its value (2 ->
    square, 0 -> ones_like, ...) on several NumPy releases; they keep the base's dtype where
    power would promote (float16 ** int16(3) is float32, ** int16(2) float16): refused."""
    if len(args) == 2 and all(isinstance(a, TensorMeta) for a in args):
        base, exponent = args
        if exponent.shape == () and np.result_type(base.dtype, exponent.dtype) != base.dtype:
            raise Unsupported(f"{op.name}: the result dtype is data-dependent: it depends on the "
                              f"value of the 0-d {exponent.dtype.name} exponent (NumPy's power "
                              "fast paths)")
    return rules.elementwise_rule(op, args, kwargs)


def inplace_rule(out_of_place: OpInfo):
    def rule(op: OpInfo, args: tuple, kwargs: dict) -> Any:
        target = rules.first_array(op, args)
        result = out_of_place.infer(*args, **kwargs)
        if target.kind == "scalar":
            return result  # NumPy scalars are immutable: x += y rebinds
        if result.shape != target.shape:
            raise Unsupported(f"{op.name}: non-broadcastable output operand with shape "
                              f"{target.shape} doesn't match the broadcast shape {result.shape}")
        if not np.can_cast(result.dtype, target.dtype, "same_kind"):
            raise Unsupported(f"{op.name}: cannot cast {result.dtype.name} to {target.dtype.name} "
                              "with casting rule 'same_kind'")
        evaluate(op.fn, args, kwargs, op.name)  # NumPy's own checks (e.g. @= support)
        return TensorMeta(target.shape, target.dtype, "array", "A")
    return rule


def ops() -> List[OpInfo]:
    found = {}
    for name, (ufunc, symbol) in BINARY.items():
        found[name] = OpInfo(f"operator.{name}", getattr(operator, name), "elementwise",
                             pow_rule if name == "pow" else rules.elementwise_rule,
                             ufunc=getattr(np, ufunc) if ufunc else None,
                             source=f"binop:{symbol}")
    found["matmul"] = OpInfo("operator.matmul", operator.matmul, "linalg",
                             rules.binary_shape_rule(shapes.matmul), source="binop:@")
    for name, (ufunc, symbol) in UNARY.items():
        found[name] = OpInfo(f"operator.{name}", getattr(operator, name), "elementwise",
                             rules.elementwise_rule, ufunc=getattr(np, ufunc),
                             source="call:abs" if symbol == "abs" else f"unop:{symbol}")
    for name in INPLACE:
        iname = _inplace_name(name)
        symbol = found[name].source.split(":", 1)[1]
        found[iname] = OpInfo(f"operator.{iname}", getattr(operator, iname),
                              found[name].kind, inplace_rule(found[name]), inplace=True,
                              source=f"inplace:{symbol}=")
    found["getitem"] = OpInfo("operator.getitem", operator.getitem, "shape", getitem_rule,
                              source="getitem")
    return list(found.values())
