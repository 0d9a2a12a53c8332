"""Which graph nodes can do something observable at run time besides computing a value.

An op in a graph can, on some data, raise (an index array out of range, an
integer to a negative integer power, a linear-algebra error, an integer
conversion that overflows) or signal a floating-point error, which NumPy turns
into a warning, an exception, a call of ``np.seterrcall``'s function or a
print, as ``np.errstate`` says.  How the compiled entry keeps those exactly
as the plain function has them is compiler.entry_codegen's docstring; this
module only answers, per node, whether it can happen at all
(``may_fail_at_run_time``), so that an entry whose graph cannot fail pays for
none of it, and so that a node whose result is unused is still run when it
could fail (its error or warning is part of the program's behaviour).

A node cannot fail when its op only moves or copies memory without changing
the dtype (views, copies, constant indexing: their arguments were checked at
trace time), creates zeros or ones, or computes on integers and booleans
with operations that set no floating-point flag (integer arrays wrap on
overflow silently; NumPy *scalars* do not, so a scalar operand makes an
integer op fallible).  Everything else is assumed able to fail.

Separately, ``DATA_DEPENDENT_WARNINGS`` names ops that issue a Python warning
(``warnings.warn``, not a floating-point flag) depending on the values: an
all-NaN slice in ``np.nanmax``.  No errstate can turn that warning into an
error, so the graph could not avoid emitting it at run time: these ops are
never captured (compiler.ops.reductions refuses them).
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from compiler.graph import Node, TensorMeta

# Ops whose warnings.warn depends on the data (all-NaN slices).
DATA_DEPENDENT_WARNINGS = frozenset({"nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
                                     "nanmedian"})

# Views and copies: they move memory and never compute (shape checks were done at trace time).
_MOVES = frozenset({
    "numpy.reshape", "numpy.transpose", "numpy.swapaxes", "numpy.moveaxis", "numpy.squeeze",
    "numpy.expand_dims", "numpy.broadcast_to", "numpy.flip", "numpy.fliplr", "numpy.flipud",
    "numpy.rot90", "numpy.diagonal", "numpy.atleast_1d", "numpy.atleast_2d", "numpy.atleast_3d",
    "numpy.real", "numpy.imag", "numpy.ravel", "numpy.copy", "numpy.ascontiguousarray",
    "numpy.repeat", "numpy.roll", "numpy.tile", "numpy.tril", "numpy.triu",
    "ndarray.reshape", "ndarray.transpose", "ndarray.swapaxes", "ndarray.squeeze",
    "ndarray.diagonal", "ndarray.ravel", "ndarray.flatten", "ndarray.copy", "ndarray.repeat",
    "ndarray.T", "ndarray.real", "ndarray.imag",
})
# Joining: a copy too, unless an operand is cast to the result's dtype.
_JOINS = frozenset({"numpy.concatenate", "numpy.stack", "numpy.vstack", "numpy.hstack",
                    "numpy.dstack", "numpy.column_stack"})
# Creation of constant contents.
_CREATES = frozenset({"numpy.zeros", "numpy.ones", "numpy.zeros_like", "numpy.ones_like",
                      "numpy.identity", "numpy.eye", "numpy.tri"})
# On integer and boolean arrays these set no floating-point flag and cannot raise.
_INTEGER_SAFE = frozenset(
    [f"numpy.{n}" for n in (
        "add", "subtract", "multiply", "negative", "positive", "absolute", "bitwise_and",
        "bitwise_or", "bitwise_xor", "invert", "logical_and", "logical_or", "logical_xor",
        "logical_not", "greater", "greater_equal", "less", "less_equal", "equal", "not_equal",
        "maximum", "minimum", "fmax", "fmin", "sign", "where", "clip", "isnan", "isinf",
        "isfinite", "signbit", "conjugate", "sum", "prod", "max", "min", "all", "any", "argmax",
        "argmin", "cumsum", "cumprod", "count_nonzero", "sort", "argsort", "diff")]
    + [f"operator.{n}" for n in (
        "add", "sub", "mul", "and_", "or_", "xor", "lt", "le", "eq", "ne", "gt", "ge", "neg",
        "pos", "invert", "abs", "iadd", "isub", "imul", "iand", "ior", "ixor")]
    + [f"ndarray.{n}" for n in (
        "sum", "prod", "max", "min", "all", "any", "argmax", "argmin", "cumsum", "cumprod",
        "clip", "conj", "conjugate", "astype", "argsort")])


def _metas(values: Iterable[Any]) -> list:
    found = []
    for value in values:
        if isinstance(value, Node):
            meta = value.meta
            found.extend(meta if isinstance(meta, tuple) else [meta])
        elif isinstance(value, (tuple, list)):
            found.extend(_metas(value))
    return found


def _has_node(value: Any) -> bool:
    if isinstance(value, Node):
        return True
    if isinstance(value, (tuple, list)):
        return any(_has_node(v) for v in value)
    if isinstance(value, slice):
        return any(_has_node(v) for v in (value.start, value.stop, value.step))
    return False


def _integer_constant(value: Any) -> bool:
    return isinstance(value, (bool, int)) and abs(value) < 2 ** 31


def may_fail_at_run_time(node: Any) -> bool:
    """Whether running ``node`` can raise or signal a floating-point error on some data
    (conservative: True unless the op is known not to)."""
    target = getattr(node, "target", None)
    args = getattr(node, "args", ())
    kwargs = getattr(node, "kwargs", {})
    if target == "operator.getitem":
        # An index computed in the graph is checked by NumPy when the graph runs; constant
        # indices were checked at trace time.
        return len(args) < 2 or _has_node(args[1])
    if target == "operator.setitem":
        if len(args) < 3 or _has_node(args[1]):
            return True
        target_meta, value = getattr(args[0], "meta", None), args[2]
        value_meta = getattr(value, "meta", None)
        same_dtype = isinstance(value_meta, TensorMeta) and isinstance(target_meta, TensorMeta) \
            and value_meta.dtype == target_meta.dtype
        return not same_dtype
    if target in _MOVES or target in _CREATES:
        return False
    if target in _JOINS:
        result = node.meta
        return not isinstance(result, TensorMeta) or any(
            m.dtype != result.dtype for m in _metas(args))
    if target in _INTEGER_SAFE:
        metas = _metas(list(args) + list(kwargs.values()))
        results = node.meta if isinstance(node.meta, tuple) else (node.meta,)
        if any(not isinstance(m, TensorMeta) for m in results):
            return True
        if any(m.dtype.kind not in "biu" for m in metas + list(results)):
            return True
        if any(m.kind != "array" for m in metas + list(results)):
            # NumPy scalar integer arithmetic warns on overflow; a Python int input may not
            # fit the array's dtype (OverflowError under NEP 50).
            return True
        constants = [v for v in list(args) + list(kwargs.values()) if not _has_node(v)]
        return not all(_integer_constant(v) or v is None or isinstance(v, (str, np.dtype, type))
                       for v in constants)
    return True
