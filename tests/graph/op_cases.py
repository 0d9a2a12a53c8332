"""Argument builders for every op of the allowlist, by canonical name.

Each builder draws real arguments (arrays, NumPy scalars, constants) for one
call; test_ops_infer.py compares ``op.infer`` on their metadata with what
NumPy returns for them.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

import numpy as np
from hypothesis import strategies as st

from compiler.ops import elementwise, operators, reductions
from tests.graph import arrays as A
from tests.graph.breadth_cases import BREADTH, any_array, array_and_operand

Builder = Callable[[Any], Tuple[tuple, dict]]


_unary = any_array
_binary = array_and_operand


def _binary_arrays(draw):
    x = A.array(draw)
    return (x, A.array(draw, A.broadcastable(draw, np.shape(x)))), {}


def _with_dtype_kw(builder: Builder) -> Builder:
    def build(draw):
        args, kwargs = builder(draw)
        if draw(st.integers(0, 4)) == 0:
            kwargs["dtype"] = draw(st.sampled_from([np.float64, np.float32, np.int64, "complex128"]))
        return args, kwargs
    return build


def _where(draw):
    x = A.array(draw)
    cond = A.array(draw, A.broadcastable(draw, np.shape(x)), np.bool_)
    if draw(st.integers(0, 9)) == 0:
        return (cond,), {}
    return (cond, x, A.operand(draw, np.shape(x))), {}


def _clip(draw):
    x = A.array(draw, dtype=draw(st.sampled_from(A.REAL_DTYPES)))
    lo = draw(st.sampled_from([None, 0, -1.5, 2]))
    hi = draw(st.sampled_from([None, 3, 5.5]))
    if draw(st.booleans()):
        lo = A.array(draw, A.broadcastable(draw, np.shape(x)), np.int64)
    return (x, lo, hi), {}


def _round(draw):
    x = A.array(draw)
    return ((x, draw(st.integers(-1, 2))) if draw(st.booleans()) else (x,)), {}


def _nan_to_num(draw):
    return (A.array(draw),), ({"nan": 1.5} if draw(st.booleans()) else {})


def _reduction(params):
    def build(draw):
        x = A.array(draw)
        kwargs = {}
        if "axis" in params and draw(st.integers(0, 3)):
            kwargs["axis"] = A.axis_for(draw, np.ndim(x),
                                        allow_tuple=params is not reductions.PARAMS.get("argmax"))
        if "keepdims" in params and draw(st.booleans()):
            kwargs["keepdims"] = True
        if "dtype" in params and draw(st.integers(0, 4)) == 0:
            kwargs["dtype"] = draw(st.sampled_from([np.float64, np.int64, np.float32]))
        if "ddof" in params and draw(st.booleans()):
            kwargs["ddof"] = 1
        return (x,), kwargs
    return build


def _cumulative(draw):
    x = A.array(draw)
    kwargs = {}
    if draw(st.booleans()):
        kwargs["axis"] = draw(st.integers(-2, 2))
    return (x,), kwargs


def _reshape(draw):
    x = A.array(draw)
    size = int(np.size(x))
    shape = draw(st.sampled_from([(size,), (-1,), (1, size), (size, 1, -1), (2, -1), (3, 2), ()]))
    return ((x, shape) if draw(st.booleans()) else (x,) + shape), {}


def _transpose(draw):
    x = A.array(draw)
    if np.ndim(x) and draw(st.booleans()):
        return (x, tuple(draw(st.permutations(range(np.ndim(x)))))), {}
    return (x,), {}


def _two_axes(draw):
    x = A.array(draw)
    n = max(np.ndim(x), 1)
    return (x, draw(st.integers(-n, n)), draw(st.integers(-n, n))), {}


def _one_axis(draw):
    x = A.array(draw)
    return (x, draw(st.integers(-np.ndim(x) - 1, np.ndim(x)))), {}


def _squeeze(draw):
    x = A.array(draw, draw(st.lists(st.integers(1, 2), max_size=3).map(tuple)))
    return ((x, draw(st.integers(-2, 2))) if draw(st.booleans()) else (x,)), {}


def _broadcast_to(draw):
    x = A.array(draw)
    return (x, (2,) + tuple(np.shape(x)) if draw(st.booleans()) else draw(A.shapes)), {}


def _flip(draw):
    x = A.array(draw)
    return ((x, draw(st.integers(-2, 2))) if draw(st.booleans()) else (x,)), {}


def _sequence(draw):
    x = A.array(draw, scalar_ok=False)
    other = A.array(draw, draw(st.sampled_from([np.shape(x), np.shape(x)[1:],
                                                 (2,) + np.shape(x)[1:]])), scalar_ok=False)
    kwargs = {"axis": draw(st.integers(-2, 2))} if draw(st.booleans()) else {}
    return ((x, other) if draw(st.booleans()) else [x, other],), kwargs


def _sequence_no_axis(draw):
    args, _ = _sequence(draw)
    return args, {}


def _repeat(draw):
    x = A.array(draw)
    kwargs = {"axis": draw(st.integers(-1, 1))} if draw(st.booleans()) else {}
    return (x, draw(st.integers(0, 3))), kwargs


def _roll(draw):
    x = A.array(draw)
    kwargs = {"axis": draw(st.integers(-1, 1))} if draw(st.booleans()) else {}
    return (x, draw(st.integers(-3, 3))), kwargs


def _sort(draw):
    x = A.array(draw, dtype=draw(st.sampled_from(A.REAL_DTYPES)))
    kwargs = {"axis": draw(st.sampled_from([None, 0, -1, 1]))} if draw(st.booleans()) else {}
    return (x,), kwargs


def _diff(draw):
    x = A.array(draw)
    kwargs = {"axis": draw(st.integers(-2, 1))} if draw(st.booleans()) else {}
    return (x, draw(st.integers(0, 2))), kwargs


def _tile(draw):
    return (A.array(draw), draw(st.sampled_from([2, (2, 1), (1, 2, 2), 0]))), {}


def _like(draw):
    x = A.array(draw)
    kwargs = {}
    if draw(st.booleans()):
        kwargs["dtype"] = draw(st.sampled_from([np.float32, np.int8, bool]))
    if draw(st.integers(0, 3)) == 0:
        kwargs["shape"] = draw(A.shapes)
    return (x,), kwargs


def _full_like(draw):
    (x,), kwargs = _like(draw)
    return (x, draw(st.sampled_from([1, 2.5, True, -3]))), kwargs


def _shaped(fill: bool):
    def build(draw):
        shape = draw(st.one_of(A.shapes, st.integers(0, 4)))
        args = (shape, draw(st.sampled_from([0, 1.5, 7]))) if fill else (shape,)
        kwargs = {"dtype": draw(st.sampled_from([np.float32, np.int64, bool]))} \
            if draw(st.booleans()) else {}
        return args, kwargs
    return build


def _static_n(draw):
    return (draw(st.integers(0, 5)),), {}


def _arange(draw):
    return (draw(st.integers(-2, 3)), draw(st.integers(0, 6))), \
        ({"dtype": np.float32} if draw(st.booleans()) else {})


def _linspace(draw):
    return (0.0, draw(st.sampled_from([1, 2.5])), draw(st.integers(0, 6))), {}


def _matmul(draw):
    k = draw(st.integers(1, 3))
    a_shape = draw(st.sampled_from([(k,), (2, k), (3, 2, k), (2,)]))
    b_shape = draw(st.sampled_from([(k,), (k, 2), (3, k, 4), (1, k, 2), (4,)]))
    return (A.array(draw, a_shape, scalar_ok=False), A.array(draw, b_shape, scalar_ok=False)), {}


def _dot(draw):
    if draw(st.integers(0, 4)) == 0:
        return (A.array(draw, ()), A.array(draw)), {}
    return _matmul(draw)


def _inner(draw):
    k = draw(st.integers(1, 3))
    a = A.array(draw, draw(st.sampled_from([(k,), (2, k), (3, 2, k), ()])))
    b = A.array(draw, draw(st.sampled_from([(k,), (4, k), (2,)])))
    return (a, b), {}


def _tensordot(draw):
    a = A.array(draw, (2, 3, 4), scalar_ok=False)
    axes, b_shape = draw(st.sampled_from([(1, (4, 2)), (2, (3, 4, 5)), (0, (2,)),
                                          (([1, 2], [0, 1]), (3, 4)), (((0,), (1,)), (5, 2)),
                                          (2, (4, 4))]))
    return (a, A.array(draw, b_shape, scalar_ok=False), axes), {}


def _einsum(draw):
    spec, shapes = draw(st.sampled_from([
        ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]),
        ("ij->", [(2, 3)]), ("...j,j->...", [(2, 4, 3), (3,)]), ("i,i", [(3,), (3,)]),
        ("ij,ij->ij", [(2, 3), (2, 3)]), ("ij,kj->ik", [(2, 3), (2, 4)]), ("ba", [(2, 3)]),
        ("i...->...", [(2, 3, 4)])]))
    return (spec,) + tuple(A.array(draw, s, scalar_ok=False) for s in shapes), {}


def _trace(draw):
    return (A.array(draw, draw(st.sampled_from([(2, 3), (3, 3, 2), (3,), (2, 2)])),
                    scalar_ok=False),), {}


def _norm(draw):
    x = A.array(draw, dtype=draw(st.sampled_from(A.FLOAT_DTYPES + [np.dtype(np.int64)])))
    kwargs = {}
    if draw(st.booleans()):
        kwargs["axis"] = draw(st.sampled_from([0, -1, (0, 1), 1]))
    if draw(st.booleans()):
        kwargs["keepdims"] = True
    if draw(st.integers(0, 3)) == 0:
        kwargs["ord"] = draw(st.sampled_from([1, 2, np.inf]))
    return (x,), kwargs


def _diagonal(draw):
    return (A.array(draw, draw(st.sampled_from([(2, 3), (3, 3, 2), (3,)]))),), {}


def _astype(draw):
    return (A.array(draw), draw(st.sampled_from([np.float32, np.int16, bool, "complex64"]))), {}


def _getitem(draw):
    x = A.array(draw)
    return (x, A.index_for(draw, np.ndim(x))), {}


def _triangle(draw):
    x = A.array(draw, draw(st.sampled_from([(), (3,), (2, 3), (3, 3), (2, 3, 4), (0, 2)])))
    kwargs = {"k": draw(st.integers(-3, 3))} if draw(st.booleans()) else {}
    return (x,), kwargs


def _numbers(draw, depth: int) -> Any:
    number = st.one_of(st.integers(-2**40, 2**40), st.floats(allow_nan=False, width=32),
                       st.booleans(), st.complex_numbers(max_magnitude=10))
    if depth == 0:
        return draw(number)
    length = draw(st.integers(0, 3))
    items = [_numbers(draw, depth - 1) for _ in range(length)]  # ragged when depths differ
    return tuple(items) if draw(st.booleans()) else items


def _constant_array(draw):
    value = _numbers(draw, draw(st.integers(1, 3)))
    if draw(st.integers(0, 5)) == 0:  # ragged nesting: NumPy refuses it (or makes an object array)
        value = [value, 1.5]
    kwargs = {}
    if draw(st.booleans()):
        kwargs["dtype"] = draw(st.sampled_from([np.float32, np.int64, "complex64", bool, float]))
    return (value,), kwargs


def _inplace(draw):
    x = A.array(draw, scalar_ok=draw(st.integers(0, 5)) == 0)
    if isinstance(x, np.ndarray):
        x = x.copy()
    return (x, A.operand(draw, np.shape(x))), {}


def _imatmul(draw):
    k = draw(st.integers(1, 3))
    return (A.array(draw, (k, k), scalar_ok=False).copy(), A.array(draw, (k, k))), {}


SPECIAL: Dict[str, Builder] = {
    "numpy.where": _where, "numpy.clip": _clip, "ndarray.clip": _clip, "numpy.round": _round,
    "ndarray.round": _round, "numpy.nan_to_num": _nan_to_num, "numpy.isclose": _binary_arrays,
    "numpy.reshape": _reshape, "ndarray.reshape": _reshape, "numpy.transpose": _transpose,
    "ndarray.transpose": _transpose, "numpy.swapaxes": _two_axes, "ndarray.swapaxes": _two_axes,
    "numpy.moveaxis": _two_axes, "numpy.squeeze": _squeeze, "ndarray.squeeze": _squeeze,
    "numpy.expand_dims": _one_axis, "numpy.broadcast_to": _broadcast_to, "numpy.flip": _flip,
    "numpy.rot90": _unary, "numpy.diagonal": _diagonal, "ndarray.diagonal": _diagonal,
    "numpy.concatenate": _sequence, "numpy.stack": _sequence, "numpy.vstack": _sequence_no_axis,
    "numpy.hstack": _sequence_no_axis, "numpy.dstack": _sequence_no_axis,
    "numpy.column_stack": _sequence_no_axis, "numpy.repeat": _repeat, "ndarray.repeat": _repeat,
    "numpy.roll": _roll, "numpy.sort": _sort, "numpy.argsort": _sort, "ndarray.argsort": _sort,
    "numpy.diff": _diff, "numpy.tile": _tile, "numpy.zeros_like": _like,
    "numpy.ones_like": _like, "numpy.full_like": _full_like, "numpy.zeros": _shaped(False),
    "numpy.ones": _shaped(False), "numpy.full": _shaped(True), "numpy.arange": _arange,
    "numpy.linspace": _linspace, "numpy.eye": _static_n, "numpy.identity": _static_n,
    "numpy.tri": _static_n, "numpy.matmul": _matmul, "operator.matmul": _matmul,
    "numpy.dot": _dot, "ndarray.dot": _dot, "numpy.inner": _inner,
    "numpy.outer": _binary_arrays, "numpy.vdot": _inner, "numpy.tensordot": _tensordot,
    "numpy.einsum": _einsum, "numpy.trace": _trace, "ndarray.trace": _trace,
    "numpy.linalg.norm": _norm, "ndarray.astype": _astype, "operator.getitem": _getitem,
    "operator.imatmul": _imatmul, "numpy.tril": _triangle, "numpy.triu": _triangle,
    "numpy.array": _constant_array, "numpy.asarray": _constant_array,
}


def builder_for(op: Any) -> Builder:
    if op.name in SPECIAL:
        return SPECIAL[op.name]
    if op.name in BREADTH:
        return BREADTH[op.name]
    short = op.name.split(".", 1)[1]
    if op.name.startswith("operator.i") and op.inplace:
        return _inplace
    if op.name.startswith("operator."):
        return _unary if short in operators.UNARY else _binary
    if short in reductions.PARAMS:
        return _reduction(reductions.PARAMS[short])
    if short in reductions.CUMULATIVE:
        return _cumulative
    if op.name.startswith("numpy.") and short in elementwise.UFUNC_NAMES:
        builder = _binary if getattr(np, short).nin == 2 else _unary
        return _with_dtype_kw(builder) if short in ("add", "multiply", "sqrt") else builder
    if op.kind in ("elementwise", "shape") or op.name.startswith("ndarray."):
        return _unary
    raise KeyError(f"no argument builder for {op.name}")
