"""Result shapes of view ops (basic indexing, reshape, transposes, flips, squeeze,
expand_dims) over dynamic dimensions.

Views are otherwise evaluated on zero-strided stand-ins of the full shape
(compiler.ops.standins.evaluate_view), which needs every size as an int.  For
the common views this module computes the result shape with SymInts, in plain
Python that follows NumPy's rules (each comparison it makes is recorded as a
guard by compiler.symbolic_shapes).  Dtype and kind still come from NumPy, on
stand-ins of the trace-time sizes, and the symbolic shape must agree with
NumPy's result there.  Any other view op, or a disagreement, specializes the
operands' dynamic dimensions (guarded): never a shape that might be wrong.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .graph import TensorMeta
from .symbolic_shapes import SymInt, has_symbols, hint_of

Shape = Tuple[Any, ...]


def has_symbolic_metas(metas: Sequence[TensorMeta]) -> bool:
    return any(has_symbols(m.shape) for m in metas)


def hint_meta(meta: TensorMeta) -> TensorMeta:
    """``meta`` with every dimension at its trace-time size (nothing recorded)."""
    return TensorMeta(tuple(hint_of(d) for d in meta.shape), meta.dtype, meta.kind, meta.layout)


def specialize_meta(meta: TensorMeta, reason: str) -> TensorMeta:
    shape = tuple(d.specialize(reason) if isinstance(d, SymInt) else d for d in meta.shape)
    return TensorMeta(shape, meta.dtype, meta.kind, meta.layout)


def evaluate_view(exact: Callable[[Callable, tuple, Dict[str, Any], str], Any], fn: Callable, args: tuple,
                  kwargs: Dict[str, Any], what: str, map_metas: Callable) -> Any:
    """The metadata of view op ``what`` whose operands have dynamic dimensions.  ``exact``
    is the zero-strided evaluation (for ints only), ``map_metas`` standins.map_metas."""
    def specialize_operands(reason: str) -> None:
        map_metas((args, kwargs), lambda m: specialize_meta(m, reason))

    try:
        hinted = exact(fn, map_metas(args, hint_meta), map_metas(kwargs, hint_meta), what)
    except BaseException:
        # It fails at these sizes (NumPy's error, or not traceable): so it does for exactly
        # these sizes, as far as the entry made from the failure knows.
        specialize_operands(f"{what} fails at the trace-time sizes")
        raise
    shape = _symbolic_shape(what, args, kwargs)
    if isinstance(hinted, TensorMeta) and shape is not None and \
            tuple(hint_of(d) for d in shape) == hinted.shape:
        return TensorMeta(shape, hinted.dtype, hinted.kind, hinted.layout)
    # No rule here (or one that disagrees with NumPy): the operands' sizes become exact.
    specialize_operands(f"{what} has no symbolic shape rule")
    return hinted


def _symbolic_shape(what: str, args: tuple, kwargs: Dict[str, Any]) -> Optional[Shape]:
    if not args or not isinstance(args[0], TensorMeta) or args[0].kind != "array":
        return None
    shape = args[0].shape
    if what == "operator.getitem" and len(args) == 2 and not kwargs:
        return basic_index_shape(shape, args[1])
    if what in ("ndarray.reshape", "numpy.reshape"):
        return _reshape(shape, args[1:], kwargs, method=what.startswith("ndarray"))
    if what == "ndarray.T" and len(args) == 1 and not kwargs:
        return tuple(reversed(shape))
    if what in _SAME_SHAPE:
        return shape  # flips and the real / imaginary parts keep the shape (errors: at the hint)
    if what in ("numpy.swapaxes", "ndarray.swapaxes") and len(args) == 3 and not kwargs:
        first, second = (_axis(a, len(shape)) for a in args[1:])
        if first is None or second is None:
            return None
        swapped = list(shape)
        swapped[first], swapped[second] = shape[second], shape[first]
        return tuple(swapped)
    if what in ("numpy.squeeze", "ndarray.squeeze"):
        return _squeeze(shape, args[1:], kwargs)
    if what == "numpy.expand_dims":
        return _expand_dims(shape, args[1:], kwargs)
    if what in ("ndarray.transpose", "numpy.transpose") and not kwargs:
        axes: Any = args[1:]
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        if not axes:
            return tuple(reversed(shape))
        if sorted(_as_int(a) for a in axes) != list(range(len(shape))):
            return None
        return tuple(shape[a] for a in axes)
    return None


_SAME_SHAPE = frozenset({"numpy.flip", "numpy.fliplr", "numpy.flipud", "numpy.real", "numpy.imag",
                         "ndarray.real", "ndarray.imag"})


def _axis(value: Any, ndim: int) -> Optional[int]:
    """``value`` as an axis of ``ndim`` dimensions (negative counted from the end), else None."""
    if not _is_int(value) or not -ndim <= int(value) < ndim:
        return None
    return int(value) % ndim


def _axes(value: Any, ndim: int) -> Optional[List[int]]:
    items = value if isinstance(value, (tuple, list)) else (value,)
    axes = [_axis(a, ndim) for a in items]
    if any(a is None for a in axes) or len(set(axes)) != len(axes):
        return None
    return axes  # type: ignore[return-value]


def _squeeze(shape: Shape, args: tuple, kwargs: Dict[str, Any]) -> Optional[Shape]:
    if set(kwargs) - {"axis"} or len(args) + len(kwargs) > 1:
        return None
    axis = args[0] if args else kwargs.get("axis")
    if axis is None:
        return tuple(d for d in shape if d != 1)
    axes = _axes(axis, len(shape))
    if axes is None or any(shape[a] != 1 for a in axes):
        return None  # NumPy raises (the evaluation at the hint did already)
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _expand_dims(shape: Shape, args: tuple, kwargs: Dict[str, Any]) -> Optional[Shape]:
    if set(kwargs) - {"axis"} or len(args) + len(kwargs) != 1:
        return None
    axis = args[0] if args else kwargs["axis"]
    count = len(axis) if isinstance(axis, (tuple, list)) else 1
    axes = _axes(axis, len(shape) + count)
    if axes is None:
        return None
    dims = iter(shape)
    return tuple(1 if i in axes else next(dims) for i in range(len(shape) + count))


def _as_int(value: Any) -> int:
    try:
        return operator.index(value)
    except TypeError:
        return -10 ** 9  # never an axis: the caller gives up


# -- basic indexing -------------------------------------------------------------------
def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def basic_index_shape(shape: Shape, index: Any) -> Optional[Shape]:
    """The shape of ``array[index]`` for a basic index (ints, slices of ints, None, ...),
    else None."""
    items = index if isinstance(index, tuple) else (index,)
    if any(not (item is None or item is Ellipsis or _is_int(item) or
                isinstance(item, slice) and all(v is None or _is_int(v) for v in
                                                (item.start, item.stop, item.step)))
           for item in items):
        return None
    if sum(item is Ellipsis for item in items) > 1:
        return None
    consumed = sum(item is not None and item is not Ellipsis for item in items)
    if consumed > len(shape):
        return None
    if any(item is Ellipsis for item in items):
        at = next(k for k, i in enumerate(items) if i is Ellipsis)
        items = items[:at] + (slice(None),) * (len(shape) - consumed) + items[at + 1:]
    else:
        items = items + (slice(None),) * (len(shape) - consumed)
    result: List[Any] = []
    axis = 0
    for item in items:
        if item is None:
            result.append(1)
            continue
        size = shape[axis]
        axis += 1
        if isinstance(item, slice):
            length = slice_length(size, item)
            if length is None:
                return None
            result.append(length)
        elif not -size <= int(item) < size:
            return None  # NumPy raises IndexError (the hint evaluation did already)
    return tuple(result)


def slice_length(size: Any, item: slice) -> Any:
    """len(range(*item.indices(size))) for a size that may be symbolic (CPython's
    PySlice_AdjustIndices, step by step)."""
    step = 1 if item.step is None else int(item.step)
    if step == 0:
        return None
    start = _adjust(item.start, size, step, default_forward=0, default_backward=size - 1)
    stop = _adjust(item.stop, size, step, default_forward=size, default_backward=-1)
    if step > 0:
        return (stop - start - 1) // step + 1 if start < stop else 0
    return (start - stop - 1) // (-step) + 1 if stop < start else 0


def _adjust(bound: Any, size: Any, step: int, default_forward: Any, default_backward: Any) -> Any:
    if bound is None:
        return default_forward if step > 0 else default_backward
    value = int(bound)
    if value < 0:
        value = value + size
        if value < 0:
            return -1 if step < 0 else 0
        return value
    if value >= size:
        return size - 1 if step < 0 else size
    return value


# -- reshape --------------------------------------------------------------------------
def _reshape(shape: Shape, args: tuple, kwargs: Dict[str, Any], method: bool) -> Optional[Shape]:
    if set(kwargs) - {"order", "shape", "newshape"} or kwargs.get("order", "C") not in ("C", "F", "A"):
        return None
    if "shape" in kwargs or "newshape" in kwargs:
        if args:
            return None
        target: Any = kwargs.get("shape", kwargs.get("newshape"))
    elif method and len(args) != 1:
        target = args
    elif len(args) == 1:
        target = args[0]
    else:
        return None
    target = tuple(target) if isinstance(target, (tuple, list)) else (target,)
    if not all(_is_int(d) for d in target):
        return None
    dims = [int(d) for d in target]
    if sum(d == -1 for d in dims) > 1 or any(d < -1 for d in dims):
        return None
    total = 1
    for d in shape:
        total = total * d
    known = 1
    for d in dims:
        if d != -1:
            known *= d
    if -1 not in dims:
        return tuple(dims) if total == known else None
    if known == 0 or total % known != 0:
        return None
    return tuple(total // known if d == -1 else d for d in dims)
