"""Inference rules shared by the op families.

A rule is ``rule(op, args, kwargs) -> TensorMeta | tuple``: it computes the
shape by a shape rule (``shapes.py``) and asks NumPy, on miniature stand-ins,
for dtype and kind (``standins.py``).  Rules that evaluate on stand-ins of the
full shape say so in their name (``view_rule``, ``full_eval_rule``).
"""
from __future__ import annotations

from typing import Any, Callable, List, Sequence, Tuple

import numpy as np

from compiler.exc import Unsupported
from compiler.graph import TensorMeta
from compiler.ops import shapes
from compiler.ops.standins import evaluate, evaluate_full, evaluate_view, metas_in

# Keyword arguments that write into caller-provided memory or leave parts of
# the result uninitialised: never captured.
_FORBIDDEN_KWARGS = ("out", "where")


def with_shape(meta: Any, shape: Tuple[int, ...], what: str) -> TensorMeta:
    """``meta`` (from a miniature evaluation) with the rule's full shape."""
    if not isinstance(meta, TensorMeta):
        raise Unsupported(f"{what}: expected one array result, got {len(meta)} results")
    if len(shape) != meta.ndim:
        raise Unsupported(f"{what}: internal shape rule disagrees with NumPy "
                          f"({len(shape)}-d vs {meta.ndim}-d); please report")
    return TensorMeta(shape, meta.dtype, meta.kind, "A")


def exact_or_shaped(op: Any, args: tuple, kwargs: dict, shape: Tuple[int, ...]) -> TensorMeta:
    """The miniature evaluation, which is exact when every operand is already
    no bigger than its miniature (0-d inputs, where NumPy's special cases such
    as ``np.cumsum(0-d) -> (1,)`` live); else ``shape`` from the rule."""
    meta = evaluate(op.fn, args, kwargs, op.name)
    if all(d <= 1 for m in metas_in((args, kwargs)) for d in m.shape):
        return meta
    return with_shape(meta, shape, op.name)


def reject_kwargs(op: Any, kwargs: dict, names: Sequence[str] = _FORBIDDEN_KWARGS) -> None:
    for name in names:
        if kwargs.get(name) is not None:
            raise Unsupported(f"{op.name}: the {name}= argument is not supported in a graph "
                              f"(it writes into or leaves uninitialised existing memory)")


def first_array(op: Any, args: tuple) -> TensorMeta:
    if not args or not isinstance(args[0], TensorMeta):
        raise Unsupported(f"{op.name}: the first argument must be an array traced in the graph")
    return args[0]


def operand_shape(value: Any, what: str) -> Tuple[int, ...]:
    if isinstance(value, TensorMeta):
        return value.shape
    if metas_in(value):
        raise Unsupported(f"{what}: arrays nested in a Python sequence are not supported here")
    try:
        return tuple(np.shape(value))
    except Exception as error:
        raise Unsupported(f"{what}: cannot use {type(value).__name__} as an operand: {error}")


# -- elementwise ---------------------------------------------------------------
def elementwise_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    reject_kwargs(op, kwargs)
    shape = shapes.broadcast([operand_shape(a, op.name) for a in args], op.name)
    meta = evaluate(op.fn, args, kwargs, op.name)
    if isinstance(meta, tuple):
        return tuple(with_shape(m, shape, op.name) for m in meta)
    return with_shape(meta, shape, op.name)


def where_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    if len(args) + len(kwargs) != 3:
        raise Unsupported(f"{op.name}: the one-argument form (nonzero) has a data-dependent shape")
    return elementwise_rule(op, args, kwargs)


def clip_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    reject_kwargs(op, kwargs)
    operands = list(args) + [kwargs[k] for k in ("a_min", "a_max", "min", "max") if k in kwargs]
    shape = shapes.broadcast([operand_shape(a, op.name) for a in operands], op.name)
    return with_shape(evaluate(op.fn, args, kwargs, op.name), shape, op.name)


def no_copy_false_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    """nan_to_num: copy=False would write into the input."""
    if kwargs.get("copy") is False or (len(args) > 1 and args[1] is False):
        raise Unsupported(f"{op.name}: copy=False writes into the input array")
    return elementwise_rule(op, args, kwargs)


# -- reductions ----------------------------------------------------------------
def reduction_rule(params: Sequence[str], *, cumulative: bool = False) -> Callable:
    """Rule for ``fn(a, <params>)``: reductions with axis/keepdims (or the
    cumulative ones, whose shape is the input's or its flattening)."""
    def rule(op: Any, args: tuple, kwargs: dict) -> Any:
        array = first_array(op, args)
        bound = shapes.bind(params, args[1:], kwargs, op.name)
        reject_kwargs(op, bound, ("out",))
        axis = bound.get("axis")
        if cumulative:
            if axis is None:
                shape: Tuple[int, ...] = (array.size,)
            else:
                shapes.normalize_axis(axis, max(array.ndim, 1), op.name)
                shape = array.shape
            return exact_or_shaped(op, args, kwargs, shape)
        shape = shapes.reduce(array.shape, axis, bool(bound.get("keepdims", False)), op.name)
        if "ddof" in bound:
            args, kwargs = _without_ddof(op, array, axis, bound)
        return with_shape(evaluate(op.fn, args, kwargs, op.name), shape, op.name)
    return rule


def _without_ddof(op: Any, array: TensorMeta, axis: Any, bound: dict) -> Tuple[tuple, dict]:
    """std / var: NumPy warns "Degrees of freedom <= 0" when the count of reduced values
    minus ddof is not positive, which the full shape decides (refused: the graph would
    warn on every run); the miniature's count is 1, so it is evaluated without ddof (the
    result dtype does not depend on it)."""
    ddof = bound["ddof"]
    if metas_in(ddof) or not isinstance(ddof, (int, float, np.integer, np.floating)):
        raise Unsupported(f"{op.name}: ddof must be a constant number")
    if axis is None:
        count = array.size
    else:
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
        count = 1
        for a in {shapes.normalize_axis(a, max(array.ndim, 1), op.name) for a in axes}:
            count *= array.shape[a] if array.ndim else 1
    if count - ddof <= 0:
        raise Unsupported(f"{op.name} issues a warning for these argument types or shapes "
                          f"(RuntimeWarning: Degrees of freedom <= 0 for slice); it runs natively")
    return (array,), {k: v for k, v in bound.items() if k != "ddof"}


def norm_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    array = first_array(op, args)
    bound = shapes.bind(("ord", "axis", "keepdims"), args[1:], kwargs, op.name)
    axis = bound.get("axis")
    if axis is not None and not isinstance(axis, (tuple, list)):
        axis = (axis,)
    if axis is not None and len(axis) > 2 or (axis is None and array.ndim > 2
                                              and bound.get("ord") is not None):
        raise Unsupported(f"{op.name}: improper number of dimensions to norm")
    shape = shapes.reduce(array.shape, axis, bool(bound.get("keepdims", False)), op.name)
    return with_shape(evaluate(op.fn, args, kwargs, op.name), shape, op.name)


# -- shape ---------------------------------------------------------------------
def view_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    """Exact metadata from zero-strided stand-ins (ops that return views)."""
    first_array(op, args)
    return evaluate_view(op.fn, args, kwargs, op.name)


def same_shape_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    array = first_array(op, args)
    reject_kwargs(op, kwargs, ("out",))
    return exact_or_shaped(op, args, kwargs, array.shape)


def triangle_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    """tril / triu: the input's shape; a 1-d input of length n gives an (n, n) result
    (NumPy masks it with tri(n))."""
    array = first_array(op, args)
    bound = shapes.bind(("k",), args[1:], kwargs, op.name)
    if metas_in(bound.get("k")):
        raise Unsupported(f"{op.name}: the diagonal offset k must be a constant")
    shapes.as_index(bound.get("k", 0), op.name)
    shape = array.shape * 2 if array.ndim == 1 else array.shape
    return exact_or_shaped(op, args, kwargs, shape)


def flatten_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    array = first_array(op, args)
    return exact_or_shaped(op, args, kwargs, (array.size,))


def _sequence_of_arrays(op: Any, args: tuple) -> List[TensorMeta]:
    if not args or not isinstance(args[0], (tuple, list)):
        raise Unsupported(f"{op.name}: expected a tuple or list of arrays as first argument")
    items = list(args[0])
    if not all(isinstance(m, TensorMeta) for m in items):
        raise Unsupported(f"{op.name}: every item of the sequence must be an array in the graph")
    return items


def joining_rule(shape_rule: Callable) -> Callable:
    """concatenate / stack: ``fn(arrays, axis=..., dtype=..., casting=...)``."""
    def rule(op: Any, args: tuple, kwargs: dict) -> Any:
        items = _sequence_of_arrays(op, args)
        bound = shapes.bind(("axis", "out", "dtype", "casting"), args[1:], kwargs, op.name)
        reject_kwargs(op, bound, ("out",))
        shape = shape_rule([m.shape for m in items], bound.get("axis", 0), op.name)
        return with_shape(evaluate(op.fn, args, kwargs, op.name), shape, op.name)
    return rule


def stacking_rule(promote: int, axis_for: Callable[[int], int]) -> Callable:
    """vstack/hstack/dstack/column_stack: promote each item to ``promote``
    dims, then concatenate along ``axis_for(ndim)``."""
    def rule(op: Any, args: tuple, kwargs: dict) -> Any:
        items = _sequence_of_arrays(op, args)
        reject_kwargs(op, kwargs, ("out",))
        promoted = [_column(m.shape) if promote == -2 else shapes.at_least(m.shape, promote)
                    for m in items]
        ndim = len(promoted[0]) if promoted else 0
        shape = shapes.concatenate(promoted, axis_for(ndim), op.name)
        return with_shape(evaluate(op.fn, args, kwargs, op.name), shape, op.name)
    return rule


def _column(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    # column_stack turns 1-d arrays into columns
    return (shape[0], 1) if len(shape) == 1 else shapes.at_least(shape, 2)


def repeat_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    array = first_array(op, args)
    bound = shapes.bind(("repeats", "axis"), args[1:], kwargs, op.name)
    repeats, axis = bound.get("repeats"), bound.get("axis")
    if isinstance(repeats, TensorMeta) or isinstance(repeats, (list, tuple)):
        raise Unsupported(f"{op.name}: only a constant integer count of repeats is supported")
    count = shapes.as_index(repeats, op.name)
    if count < 0:
        raise Unsupported(f"{op.name}: negative dimensions are not allowed")
    if axis is None:
        shape: Tuple[int, ...] = (array.size * count,)
    else:
        axis = shapes.normalize_axis(axis, max(array.ndim, 1), op.name)
        dims = array.shape or (1,)
        shape = dims[:axis] + (dims[axis] * count,) + dims[axis + 1:]
    return with_shape(evaluate(op.fn, args, kwargs, op.name), shape, op.name)


def diff_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    array = first_array(op, args)
    bound = shapes.bind(("n", "axis", "prepend", "append"), args[1:], kwargs, op.name)
    if "prepend" in bound or "append" in bound:
        return full_eval_rule(op, args, kwargs)
    n = shapes.as_index(bound.get("n", 1), op.name)
    if n == 0:  # NumPy returns the input unchanged
        return exact_or_shaped(op, args, kwargs, array.shape)
    if array.ndim == 0:
        raise Unsupported(f"{op.name}: diff requires input that is at least one dimensional")
    axis = shapes.normalize_axis(bound.get("axis", -1), array.ndim, op.name)
    if n < 0:
        raise Unsupported(f"{op.name}: order must be non-negative but got {n}")
    shape = list(array.shape)
    shape[axis] = max(shape[axis] - n, 0)
    return with_shape(evaluate(op.fn, args, kwargs, op.name), tuple(shape), op.name)


# -- linalg --------------------------------------------------------------------
def binary_shape_rule(shape_rule: Callable) -> Callable:
    def rule(op: Any, args: tuple, kwargs: dict) -> Any:
        reject_kwargs(op, kwargs, ("out",))
        if len(args) != 2:
            raise Unsupported(f"{op.name}: expected two operands")
        a, b = (operand_shape(x, op.name) for x in args)
        return with_shape(evaluate(op.fn, args, kwargs, op.name), shape_rule(a, b, op.name), op.name)
    return rule


def outer_shape(a: Tuple[int, ...], b: Tuple[int, ...], what: str) -> Tuple[int, ...]:
    return (shapes.size_of(a), shapes.size_of(b))


def vdot_shape(a: Tuple[int, ...], b: Tuple[int, ...], what: str) -> Tuple[int, ...]:
    if shapes.size_of(a) != shapes.size_of(b):
        raise Unsupported(f"{what}: vectors have different lengths")
    return ()


def tensordot_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    if len(args) < 2:
        raise Unsupported(f"{op.name}: expected two operands")
    bound = shapes.bind(("axes",), args[2:], kwargs, op.name)
    a, b = (operand_shape(x, op.name) for x in args[:2])
    shape = shapes.tensordot(a, b, bound.get("axes", 2), op.name)
    return with_shape(evaluate(op.fn, args, kwargs, op.name), shape, op.name)


def einsum_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    reject_kwargs(op, kwargs, ("out",))
    if not args or not isinstance(args[0], str):
        raise Unsupported(f"{op.name}: only the string form of einsum subscripts is supported")
    shape = shapes.einsum(args[0], [operand_shape(a, op.name) for a in args[1:]], op.name)
    return with_shape(evaluate(op.fn, args, kwargs, op.name), shape, op.name)


def trace_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    array = first_array(op, args)
    bound = shapes.bind(("offset", "axis1", "axis2", "dtype", "out"), args[1:], kwargs, op.name)
    reject_kwargs(op, bound, ("out",))
    if array.ndim < 2:
        raise Unsupported(f"{op.name}: diag requires an array of at least two dimensions")
    axes = {shapes.normalize_axis(bound.get("axis1", 0), array.ndim, op.name),
            shapes.normalize_axis(bound.get("axis2", 1), array.ndim, op.name)}
    if len(axes) != 2:
        raise Unsupported(f"{op.name}: axis1 and axis2 cannot be the same")
    shape = tuple(d for i, d in enumerate(array.shape) if i not in axes)
    return with_shape(evaluate(op.fn, args, kwargs, op.name), shape, op.name)


# -- creation ------------------------------------------------------------------
def like_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    """zeros_like / ones_like / full_like, with an optional shape= override."""
    array = first_array(op, args)
    shape = kwargs.get("shape")
    if shape is None:
        return with_shape(evaluate(op.fn, args, kwargs, op.name), array.shape, op.name)
    dims = (shapes.as_index(shape, op.name),) if not isinstance(shape, (tuple, list)) else \
        tuple(shapes.as_index(d, op.name) for d in shape)
    mini_kwargs = dict(kwargs, shape=tuple(min(d, 1) for d in dims))
    return with_shape(evaluate(op.fn, args, mini_kwargs, op.name), dims, op.name)


def shaped_creation_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    """zeros / ones / full: the shape is a static first argument."""
    if metas_in(args[:1]) or not args:
        raise Unsupported(f"{op.name}: the shape must be a constant")
    shape = args[0]
    dims = (shapes.as_index(shape, op.name),) if not isinstance(shape, (tuple, list)) else \
        tuple(shapes.as_index(d, op.name) for d in shape)
    if any(d < 0 for d in dims):
        raise Unsupported(f"{op.name}: negative dimensions are not allowed")
    mini_args = (tuple(min(d, 1) for d in dims),) + tuple(args[1:])
    return with_shape(evaluate(op.fn, mini_args, kwargs, op.name), dims, op.name)


def _is_number_sequence(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_is_number_sequence(v) for v in value)
    return isinstance(value, (bool, int, float, complex))


def constant_array_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    """array / asarray of a constant Python number or nested list or tuple of them (the
    constant is small: it is written in the program), with an optional dtype."""
    bound = shapes.bind(("object", "dtype"), args, kwargs, op.name)
    value = bound.get("object")
    if not _is_number_sequence(value):
        raise Unsupported(f"{op.name}: only a constant (nested) list or tuple of numbers is "
                          "captured; arrays and other objects run natively")
    meta = evaluate_full(op.fn, args, kwargs, op.name)
    if meta.dtype.kind not in "biufc":  # ragged nesting, ints beyond int64 -> object
        raise Unsupported(f"{op.name}: the constant gives a {meta.dtype} array, not a numeric one")
    return TensorMeta(meta.shape, meta.dtype, meta.kind, "C")


def full_eval_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    """Run the op on zero-filled stand-ins of the full shape (documented per op:
    arange, linspace, eye, identity, tri, tile, and user ops from allow_in_graph)."""
    reject_kwargs(op, kwargs, ("out",))
    return evaluate_full(op.fn, args, kwargs, op.name)


def sort_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    """sort / argsort: the input's shape, flattened when axis=None."""
    array = first_array(op, args)
    bound = shapes.bind(("axis", "kind", "order", "stable"), args[1:], kwargs, op.name)
    if "axis" in bound and bound["axis"] is None:
        shape: Tuple[int, ...] = (array.size,)
    else:
        shapes.normalize_axis(bound.get("axis", -1), max(array.ndim, 1), op.name)
        shape = array.shape
    return exact_or_shaped(op, args, kwargs, shape)
