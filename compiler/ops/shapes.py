"""Shape rules: the result shape of an op from its operands' shapes.

Each rule raises ``Unsupported`` with the reason NumPy would raise for (so
the tracer can run the frame natively and NumPy raises its own error).
"""
from __future__ import annotations

import operator
from typing import Any, List, Optional, Sequence, Tuple

from compiler.exc import Unsupported

Shape = Tuple[int, ...]


def broadcast(shapes: Sequence[Shape], what: str) -> Shape:
    """np.broadcast_shapes, which NumPy 1.22 lacks in the form we need."""
    ndim = max((len(s) for s in shapes), default=0)
    result: List[int] = []
    for axis in range(ndim):
        size = 1
        for shape in shapes:
            index = axis - (ndim - len(shape))
            if index < 0:
                continue
            dim = shape[index]
            if dim == 1:
                continue
            if size != 1 and dim != size:
                raise Unsupported(f"{what}: operands could not be broadcast together with shapes "
                                  + " ".join(str(tuple(s)) for s in shapes))
            size = dim
        result.append(size)
    return tuple(result)


def as_index(value: Any, what: str) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise Unsupported(f"{what}: expected an integer, got {type(value).__name__}") from None


def normalize_axis(axis: Any, ndim: int, what: str) -> int:
    axis = as_index(axis, what)
    if not -ndim <= axis < ndim:
        raise Unsupported(f"{what}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def normalize_axes(axis: Any, ndim: int, what: str) -> Tuple[int, ...]:
    """``axis`` of a reduction (None, an int or a tuple of ints) as sorted axes."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(normalize_axis(a, ndim, what) for a in items)
    if len(set(axes)) != len(axes):
        raise Unsupported(f"{what}: repeated axis in {axis!r}")
    return tuple(sorted(axes))


def reduce(shape: Shape, axis: Any, keepdims: bool, what: str) -> Shape:
    if len(shape) == 0 and axis not in (None, 0, -1, (), (0,), (-1,)):
        raise Unsupported(f"{what}: axis {axis!r} is out of bounds for a 0-d array")
    axes = normalize_axes(axis, len(shape), what) if shape else ()
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def concatenate(shapes: Sequence[Shape], axis: Any, what: str) -> Shape:
    if not shapes:
        raise Unsupported(f"{what}: need at least one array to concatenate")
    if axis is None:
        return (sum(_size(s) for s in shapes),)
    ndim = len(shapes[0])
    if ndim == 0:
        raise Unsupported(f"{what}: zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(axis, ndim, what)
    for shape in shapes:
        if len(shape) != ndim or any(a != b for i, (a, b) in enumerate(zip(shape, shapes[0]))
                                     if i != axis):
            raise Unsupported(f"{what}: array shapes {[tuple(s) for s in shapes]} do not match "
                              f"outside axis {axis}")
    total = sum(s[axis] for s in shapes)
    return shapes[0][:axis] + (total,) + shapes[0][axis + 1:]


def stack(shapes: Sequence[Shape], axis: Any, what: str) -> Shape:
    if not shapes:
        raise Unsupported(f"{what}: need at least one array to stack")
    if any(s != shapes[0] for s in shapes):
        raise Unsupported(f"{what}: all input arrays must have the same shape, got "
                          f"{[tuple(s) for s in shapes]}")
    axis = normalize_axis(axis, len(shapes[0]) + 1, what)
    return shapes[0][:axis] + (len(shapes),) + shapes[0][axis:]


def at_least(shape: Shape, ndim: int) -> Shape:
    """np.atleast_1d/2d/3d shapes."""
    if len(shape) >= ndim:
        return shape
    if ndim == 1:
        return (1,)
    if ndim == 2:
        return (1,) * (2 - len(shape)) + shape if len(shape) < 2 else shape
    # atleast_3d: (N,) -> (1, N, 1); (M, N) -> (M, N, 1); () -> (1, 1, 1)
    if len(shape) == 0:
        return (1, 1, 1)
    if len(shape) == 1:
        return (1, shape[0], 1)
    return shape + (1,)


def matmul(a: Shape, b: Shape, what: str) -> Shape:
    if not a or not b:
        raise Unsupported(f"{what}: matmul does not accept 0-d operands")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise Unsupported(f"{what}: matmul core dimensions mismatch: {a} @ {b}")
    batch = broadcast([a2[:-2], b2[:-2]], what)
    core = (a2[-2],) if len(a) > 1 else ()
    core += (b2[-1],) if len(b) > 1 else ()
    return batch + core


def dot(a: Shape, b: Shape, what: str) -> Shape:
    if not a or not b:
        return broadcast([a, b], what)
    contract_b = 0 if len(b) == 1 else len(b) - 2
    if a[-1] != b[contract_b]:
        raise Unsupported(f"{what}: shapes {a} and {b} not aligned")
    return a[:-1] + b[:contract_b] + b[contract_b + 1:]


def inner(a: Shape, b: Shape, what: str) -> Shape:
    if not a or not b:
        return broadcast([a, b], what)
    if a[-1] != b[-1]:
        raise Unsupported(f"{what}: shapes {a} and {b} not aligned on the last axis")
    return a[:-1] + b[:-1]


def tensordot(a: Shape, b: Shape, axes: Any, what: str) -> Shape:
    if isinstance(axes, (tuple, list)) and len(axes) == 2:
        axes_a = list(axes[0]) if isinstance(axes[0], (tuple, list)) else [axes[0]]
        axes_b = list(axes[1]) if isinstance(axes[1], (tuple, list)) else [axes[1]]
    else:
        n = as_index(axes, what)
        if n > min(len(a), len(b)):
            raise Unsupported(f"{what}: axes={n} exceeds the operands' dimensions")
        axes_a = list(range(len(a) - n, len(a)))
        axes_b = list(range(n))
    if len(axes_a) != len(axes_b):
        raise Unsupported(f"{what}: shape-mismatch for sum over axes {axes!r}")
    axes_a = [normalize_axis(x, len(a), what) for x in axes_a]
    axes_b = [normalize_axis(x, len(b), what) for x in axes_b]
    if any(a[i] != b[j] for i, j in zip(axes_a, axes_b)):
        raise Unsupported(f"{what}: shape-mismatch for sum over axes {axes!r}")
    return (tuple(d for i, d in enumerate(a) if i not in axes_a)
            + tuple(d for j, d in enumerate(b) if j not in axes_b))


def einsum(subscripts: Any, shapes: Sequence[Shape], what: str) -> Shape:
    """Result shape of np.einsum in its string form (with ``...`` support)."""
    if not isinstance(subscripts, str):
        raise Unsupported(f"{what}: only the string form of einsum subscripts is supported")
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise Unsupported(f"{what}: {len(terms)} subscripts for {len(shapes)} operands")
    sizes: dict = {}
    ellipsis_shapes: List[Shape] = []
    counts: dict = {}
    for term, shape in zip(terms, shapes):
        head, has_ellipsis, tail = term.partition("...")
        labels = head + tail
        if not labels.isalpha() and labels:
            raise Unsupported(f"{what}: invalid subscripts {subscripts!r}")
        if len(labels) > len(shape) or (not has_ellipsis and len(labels) != len(shape)):
            raise Unsupported(f"{what}: subscripts {term!r} do not match operand shape {shape}")
        n_ell = len(shape) - len(labels)
        dims = list(shape[:len(head)]) + list(shape[len(head) + n_ell:])
        ellipsis_shapes.append(tuple(shape[len(head):len(head) + n_ell]))
        for label, dim in zip(labels, dims):
            counts[label] = counts.get(label, 0) + 1
            known = sizes.get(label)
            if known is not None and known != dim:
                raise Unsupported(f"{what}: label {label!r} has sizes {known} and {dim}")
            sizes[label] = dim
    ellipsis = broadcast(ellipsis_shapes, what)
    if not arrow:
        return ellipsis + tuple(sizes[c] for c in sorted(sizes) if counts[c] == 1)
    head, has_ellipsis, tail = output.partition("...")
    if any(c not in sizes for c in head + tail):
        raise Unsupported(f"{what}: output label not among the inputs in {subscripts!r}")
    if not has_ellipsis and ellipsis:
        raise Unsupported(f"{what}: output subscripts drop broadcast dimensions")
    return (tuple(sizes[c] for c in head) + (ellipsis if has_ellipsis else ())
            + tuple(sizes[c] for c in tail))


def _size(shape: Shape) -> int:
    size = 1
    for d in shape:
        size *= d
    return size


def size_of(shape: Shape) -> int:
    return _size(shape)


def bind(params: Sequence[str], args: tuple, kwargs: dict, what: str) -> dict:
    """Positional and keyword arguments (after the array) bound to names, like
    Python does for ``def f(a, <params>)``; unknown names raise Unsupported."""
    if len(args) > len(params):
        raise Unsupported(f"{what}: too many positional arguments")
    bound = dict(zip(params, args))
    for key, value in kwargs.items():
        if key not in params or key in bound:
            raise Unsupported(f"{what}: unexpected or repeated argument {key!r}")
        bound[key] = value
    return bound


def optional(bound: dict, name: str, default: Optional[Any] = None) -> Any:
    return bound.get(name, default)
