"""The methods of allow-listed ufuncs: ``reduce``, ``accumulate``, ``outer``, ``reduceat``
and the in-place ``at``.

``np.add.reduce`` is a new bound method object on every attribute access, so these ops
cannot be found by identity like functions: the tracker of a ufunc asks
``method_op(ufunc, name)`` when the attribute is loaded (compiler.variables.numpy_functions).

``at`` writes into its first argument.  Its op returns that argument after the write
(``inplace``, never lowered to generated code), and the tracker rebinds the array to the
result the way item assignment does (compiler.variables.array.ArrayVariable.check_inplace:
a private temporary, or an input array whose write the cache entry replays and undoes when
the graph fails).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

import numpy as np

from compiler.exc import Unsupported
from compiler.graph import TensorMeta
from compiler.ops import evaluated, rules, shapes
from compiler.ops.opinfo import OpInfo
from compiler.ops.standins import evaluate

METHOD_NAMES = ("reduce", "accumulate", "outer", "reduceat", "at")

_OPS: Dict[Tuple[int, str], Tuple[np.ufunc, OpInfo]] = {}


def _miniature_then(shape_of: Callable[[Any, tuple, dict], Tuple[int, ...]]) -> Callable:
    """Dtype and kind from a miniature run; the shape from ``shape_of`` (exact from the
    miniature when every operand is no bigger than it)."""
    def rule(op: Any, args: tuple, kwargs: dict) -> Any:
        rules.reject_kwargs(op, kwargs, ("out",))
        array = rules.first_array(op, args)
        meta = evaluate(op.fn, args, kwargs, op.name)
        if all(d <= 1 for m in (array,) + tuple(a for a in args[1:] if isinstance(a, TensorMeta))
               for d in m.shape):
            return meta
        return rules.with_shape(meta, shape_of(array, args, kwargs), op.name)
    return rule


def _reduced(array: TensorMeta, args: tuple, kwargs: dict) -> Tuple[int, ...]:
    bound = shapes.bind(("axis", "dtype", "out", "keepdims", "initial", "where"), args[1:],
                        kwargs, "ufunc.reduce")
    return shapes.reduce(array.shape, bound.get("axis", 0), bool(bound.get("keepdims", False)),
                         "ufunc.reduce")


def _accumulated(array: TensorMeta, args: tuple, kwargs: dict) -> Tuple[int, ...]:
    return array.shape


def _outer(array: TensorMeta, args: tuple, kwargs: dict) -> Tuple[int, ...]:
    if len(args) != 2:
        raise Unsupported("ufunc.outer: expected two operands")
    return array.shape + rules.operand_shape(args[1], "ufunc.outer")


def _at_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    """The first argument, unchanged in metadata; the call is validated on a zero copy
    (NumPy's casting and index checks that do not depend on the values)."""
    array = rules.first_array(op, args)
    if array.kind != "array":
        raise Unsupported(f"{op.name}: the first argument must be an array, not a NumPy scalar")
    evaluated.run_on_stand_ins(op, args, kwargs)
    return TensorMeta(array.shape, array.dtype, "array", array.layout)


def _bound(ufunc: np.ufunc, name: str) -> Callable:
    if name != "at":
        method = getattr(ufunc, name)
        return method

    def at(a: np.ndarray, indices: Any, *b: Any) -> np.ndarray:
        ufunc.at(a, indices, *b)
        return a
    at.__name__ = at.__qualname__ = f"{ufunc.__name__}_at"
    return at


_RULES = {"reduce": _miniature_then(_reduced), "accumulate": _miniature_then(_accumulated),
          "outer": _miniature_then(_outer), "reduceat": evaluated.evaluated_rule(), "at": _at_rule}


def method_op(ufunc: np.ufunc, name: str) -> OpInfo:
    """The op of ``ufunc.<name>`` (one of METHOD_NAMES); NumPy rejects the methods a ufunc
    does not have (``np.sin.reduce``) when the op is inferred, as the plain call does."""
    key = (id(ufunc), name)
    entry = _OPS.get(key)
    if entry is None or entry[0] is not ufunc:
        op = OpInfo(f"numpy.{ufunc.__name__}.{name}", _bound(ufunc, name),
                    "other" if name == "at" else "reduction" if name != "outer" else "elementwise",
                    _RULES[name], inplace=name == "at", lowerable=name != "at",
                    source=f"numpy.{ufunc.__name__}.{name}")
        entry = _OPS[key] = (ufunc, op)
    return entry[1]
