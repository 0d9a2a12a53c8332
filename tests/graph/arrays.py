"""Hypothesis strategies for the graph tests: arrays of many dtypes and
shapes (0-d and NumPy scalars included), broadcast-compatible operands."""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np
from hypothesis import strategies as st

DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                np.uint32, np.float16, np.float32, np.float64, np.complex64,
                                np.complex128)]
REAL_DTYPES = [d for d in DTYPES if d.kind != "c"]
FLOAT_DTYPES = [np.dtype(t) for t in (np.float16, np.float32, np.float64)]

dtypes = st.sampled_from(DTYPES)
shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


def values(draw: Any, shape: Tuple[int, ...], dtype: np.dtype, scalar_ok: bool = True) -> Any:
    """A real array (or NumPy scalar when shape is () and drawn so) with small
    random values, some negative, some zero."""
    size = int(np.prod(shape, dtype=np.int64))
    raw = draw(st.lists(st.integers(-5, 9), min_size=size, max_size=size))
    with np.errstate(all="ignore"):
        data = np.array(raw, dtype=np.int64).astype(dtype).reshape(shape)
    if shape == () and scalar_ok and draw(st.booleans()):
        return data[()]
    order = draw(st.sampled_from(["C", "C", "F", "strided"]))
    if order == "F":
        return np.asfortranarray(data)
    if order == "strided" and data.ndim:
        wide = np.repeat(data, 2, axis=-1)
        return wide[..., ::2]
    return data


def array(draw: Any, shape: Any = None, dtype: Any = None, scalar_ok: bool = True) -> Any:
    shape = draw(shapes) if shape is None else shape
    dtype = draw(dtypes) if dtype is None else np.dtype(dtype)
    return values(draw, shape, dtype, scalar_ok)


def broadcastable(draw: Any, base: Tuple[int, ...]) -> Tuple[int, ...]:
    """A shape that broadcasts with ``base`` (mostly), or a random one."""
    if draw(st.integers(0, 9)) == 0:
        return draw(shapes)
    keep = draw(st.integers(0, len(base)))
    tail = base[len(base) - keep:]
    return tuple(1 if draw(st.integers(0, 3)) == 0 else d for d in tail)


def operand(draw: Any, base: Tuple[int, ...], python_scalars: bool = True) -> Any:
    """Another operand for an elementwise op with ``base``: an array, a NumPy
    scalar or a Python scalar."""
    pick = draw(st.integers(0, 5))
    if python_scalars and pick == 0:
        return draw(st.sampled_from([2, -1, 0, 300, 2.5, -0.5, True, 1j, 70000]))
    return array(draw, broadcastable(draw, base))


def axis_for(draw: Any, ndim: int, allow_tuple: bool = True, allow_none: bool = True) -> Any:
    choices = [st.integers(-max(ndim, 1) - 1, max(ndim, 1))]
    if allow_none:
        choices.append(st.none())
    if allow_tuple and ndim:
        choices.append(st.lists(st.integers(-ndim, ndim - 1), min_size=0, max_size=ndim,
                                unique=True).map(tuple))
    return draw(st.one_of(*choices))


def index_for(draw: Any, ndim: int) -> Any:
    """An index: ints, slices, None, Ellipsis, integer lists (constants) and integer
    arrays (graph values: advanced indexing), boolean lists/arrays (masks), tuples of them."""
    int_list = st.lists(st.integers(-3, 3), max_size=3)
    item = st.one_of(st.integers(-3, 3),
                     st.builds(slice, st.none() | st.integers(-3, 3), st.none() | st.integers(-3, 3),
                               st.none() | st.sampled_from([1, 2, -1, 3])),
                     st.none(), st.just(Ellipsis), int_list, st.lists(int_list, min_size=1, max_size=2),
                     st.lists(st.booleans(), min_size=1, max_size=3),
                     st.builds(lambda v, dt: np.array(v, np.int64).astype(dt), int_list,
                               st.sampled_from([np.int64, np.int32, np.uint8, np.bool_])))
    items = draw(st.lists(item, min_size=0, max_size=ndim + 1))
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)
