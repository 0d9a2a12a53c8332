"""Hand-built graphs for the Triton backend's tests, with the kernel count the
fusion rules of compiler/backends/triton/lowering.py call for.

Each case: a builder (Graph), how many kernels it must lower to (0 = the
graph falls back to eager), and an input generator (positive inputs where a
log or sqrt needs them; NaNs where propagation is under test).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional

import numpy as np

from compiler import ops
from compiler.graph import Graph, Node, TensorMeta


def fn(f) -> ops.OpInfo:
    op = ops.lookup_function(f)
    assert op is not None, f
    return op


def method(name: str) -> ops.OpInfo:
    op = ops.lookup_method(name)
    assert op is not None, name
    return op


def oper(name: str) -> ops.OpInfo:
    return ops.lookup_operator(name)


@dataclass
class Case:
    name: str
    build: Callable[[], Graph]
    kernels: int                       # 0: falls back to eager
    inputs: Callable[[Graph, np.random.Generator], List[np.ndarray]]
    fallback_op: Optional[str] = None  # the op named in the fallback reason


def random_inputs(graph: Graph, rng: np.random.Generator, positive: bool = False) -> List[np.ndarray]:
    values = []
    for node in graph.placeholders:
        meta = node.meta
        if meta.dtype.kind == "b":
            value = rng.random(meta.shape) < 0.5
        elif meta.dtype.kind in "iu":
            low = 0 if meta.dtype.kind == "u" else -50
            value = rng.integers(low, 50, size=meta.shape).astype(meta.dtype)
        else:
            value = rng.standard_normal(meta.shape)
            if positive:
                value = np.abs(value) + 0.1
            value = value.astype(meta.dtype)
        values.append(value[()] if meta.kind == "scalar" else np.asarray(value))
    return values


def positive_inputs(graph: Graph, rng: np.random.Generator) -> List[np.ndarray]:
    return random_inputs(graph, rng, positive=True)


def with_nans(graph: Graph, rng: np.random.Generator) -> List[np.ndarray]:
    values = random_inputs(graph, rng)
    first = values[0]
    first.reshape(-1)[:2] = np.nan  # row 0, columns 0 and 1: the other results stay finite
    return values


def negative_signed_inputs(graph: Graph, rng: np.random.Generator) -> List[np.ndarray]:
    """Signed integers all below zero: a max whose masked lanes were filled with
    0 instead of the dtype's minimum would show."""
    values = random_inputs(graph, rng)
    return [-np.abs(v) - 1 if v.dtype.kind == "i" else v for v in values]


def _chain8(dtype) -> Callable[[], Graph]:
    def build() -> Graph:
        g = Graph()
        x = g.placeholder("x", TensorMeta((1000,), dtype))
        y = g.placeholder("y", TensorMeta((1000,), dtype))
        a = g.call(oper("mul"), (x, 2.0), {})
        b = g.call(oper("add"), (a, y), {})
        c = g.call(fn(np.sin), (b,), {})
        d = g.call(oper("mul"), (c, c), {})
        e = g.call(oper("sub"), (d, x), {})
        f = g.call(fn(np.abs), (e,), {})
        h = g.call(fn(np.sqrt), (f,), {})
        i = g.call(fn(np.maximum), (h, y), {})
        g.output([i])
        return g
    return build


def _softmax(shape, dtype=np.float32) -> Callable[[], Graph]:
    def build() -> Graph:
        g = Graph()
        x = g.placeholder("x", TensorMeta(shape, dtype))
        m = g.call(method("max"), (x,), {"axis": -1, "keepdims": True})
        e = g.call(fn(np.exp), (g.call(oper("sub"), (x, m), {}),), {})
        s = g.call(fn(np.sum), (e,), {"axis": -1, "keepdims": True})
        g.output([g.call(oper("truediv"), (e, s), {})])
        return g
    return build


def _layernorm() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((16, 33), np.float32))
    w = g.placeholder("w", TensorMeta((33,), np.float32))
    b = g.placeholder("b", TensorMeta((33,), np.float32))
    mu = g.call(method("mean"), (x,), {"axis": -1, "keepdims": True})
    d = g.call(oper("sub"), (x, mu), {})
    var = g.call(fn(np.mean), (g.call(oper("pow"), (d, 2), {}),), {"axis": -1, "keepdims": True})
    std = g.call(fn(np.sqrt), (g.call(oper("add"), (var, 1e-5), {}),), {})
    y = g.call(oper("add"), (g.call(oper("mul"), (g.call(oper("truediv"), (d, std), {}), w), {}), b), {})
    g.output([y])
    return g


def _broadcast() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((4, 1, 5), np.float32))
    y = g.placeholder("y", TensorMeta((3, 5), np.float32))
    s = g.placeholder("s", TensorMeta((), np.float32))
    a = g.call(oper("add"), (x, y), {})
    b = g.call(oper("mul"), (a, s), {})
    g.output([g.call(oper("sub"), (b, 1.5), {})])
    return g


def _integers() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((7, 9), np.int32))
    y = g.placeholder("y", TensorMeta((9,), np.int32))
    a = g.call(oper("mul"), (x, 3), {})
    b = g.call(oper("sub"), (a, y), {})
    c = g.call(fn(np.maximum), (b, x), {})
    lt = g.call(oper("lt"), (c, 10), {})
    w = g.call(fn(np.where), (lt, c, y), {})
    q = g.call(oper("truediv"), (w, 4), {})     # int / int -> float64
    g.output([w, lt, q])
    return g


def _bool_logic() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((50,), np.float64))
    y = g.placeholder("y", TensorMeta((50,), np.float64))
    p = g.call(oper("gt"), (x, 0.0), {})
    q = g.call(fn(np.less_equal), (y, x), {})
    both = g.call(fn(np.logical_and), (p, q), {})
    either = g.call(fn(np.logical_xor), (p, g.call(fn(np.logical_not), (q,), {})), {})
    g.output([both, either, g.call(method("astype"), (both, np.float32), {})])
    return g


def _casts_and_clip() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((8, 16), np.float32))
    a = g.call(method("astype"), (x, np.float64), {})
    b = g.call(fn(np.clip), (a, -0.5, 0.5), {})
    c = g.call(method("clip"), (x,), {"min": 0.0})
    d = g.call(method("astype"), (g.call(oper("mul"), (b, 100.0), {}), np.int16), {})
    g.output([b, c, d])
    return g


def _half() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((300,), np.float16))
    y = g.placeholder("y", TensorMeta((300,), np.float16))
    e = g.call(fn(np.exp), (g.call(oper("mul"), (x, y), {}),), {})
    g.output([g.call(oper("add"), (e, 1.0), {})])
    return g


def _sum_axis0() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((64, 33), np.float32))
    sq = g.call(oper("mul"), (x, x), {})
    g.output([g.call(method("sum"), (sq,), {"axis": 0})])
    return g


def _mean_middle_axes() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((3, 4, 5, 6), np.float64))
    g.output([g.call(fn(np.mean), (x,), {"axis": (1, 2), "keepdims": True})])
    return g


def _max_all_scalar() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((40, 30), np.float32))
    g.output([g.call(method("max"), (x,), {})])
    return g


def _nan_reductions() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((6, 21), np.float64))
    g.output([g.call(fn(np.max), (x,), {"axis": -1}), g.call(method("min"), (x,), {"axis": 0}),
              g.call(fn(np.maximum), (x, 0.0), {})])
    return g


def _int_reductions() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((12, 10), np.int32))
    u = g.placeholder("u", TensorMeta((12, 10), np.uint8))
    flags = g.placeholder("flags", TensorMeta((12, 10), np.bool_))
    big = g.placeholder("big", TensorMeta((12, 10), np.int64))
    ubig = g.placeholder("ubig", TensorMeta((12, 10), np.uint64))
    g.output([g.call(method("min"), (x,), {"axis": -1}),      # row kernel
              g.call(fn(np.max), (u,), {"axis": 0}),           # reduce kernel
              g.call(fn(np.sum), (flags,), {"axis": 1}),       # bool -> int count
              g.call(method("sum"), (u,), {}),                 # uint8 -> uint64 scalar
              g.call(method("mean"), (x,), {"axis": 0}),       # int -> float64
              g.call(method("max"), (big,), {"axis": -1}),     # identity: int64 min
              g.call(fn(np.min), (ubig,), {"axis": 0})])       # identity: uint64 max
    return g


def _long_row_softmax() -> Graph:
    # rows longer than the in-register limit: max (loop) | sub+exp+sum (loop, exp stored) | div
    return _softmax((2, 10000))()


def _cycle_guard() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((8, 12), np.float32))
    a = g.call(oper("mul"), (x, 2.0), {})
    m = g.call(method("max"), (a,), {"axis": -1, "keepdims": True})
    t = g.call(fn(np.sum), (a,), {"axis": 0})
    # merging c into {a, m} would need t, which needs a: three kernels, not two
    c = g.call(oper("add"), (g.call(oper("sub"), (a, m), {}), t), {})
    g.output([c])
    return g


def _inplace() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((33,), np.float32))
    y = g.placeholder("y", TensorMeta((33,), np.float32))
    t = g.call(oper("mul"), (x, 2.0), {})
    g.output([g.call(oper("iadd"), (t, y), {})])
    return g


def _passthrough() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((5,), np.float32))
    a = g.call(oper("neg"), (x,), {})
    g.output([x, a, a])
    return g


def _unsupported_cumsum() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((10,), np.float32))
    a = g.call(oper("mul"), (x, 2.0), {})
    g.output([g.call(fn(np.cumsum), (a,), {})])
    return g


def _unsupported_matmul() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((4, 4), np.float64))
    a = g.call(fn(np.exp), (x,), {})
    g.output([g.call(oper("matmul"), (a, x), {})])
    return g


CASES: List[Case] = [
    Case("chain8_f32", _chain8(np.float32), 1, random_inputs),
    Case("chain8_f64", _chain8(np.float64), 1, random_inputs),
    Case("softmax", _softmax((16, 100)), 1, random_inputs),
    Case("layernorm", _layernorm, 1, random_inputs),
    Case("broadcast", _broadcast, 1, random_inputs),
    Case("integers", _integers, 1, random_inputs),
    Case("bool_logic", _bool_logic, 1, random_inputs),
    Case("casts_and_clip", _casts_and_clip, 2, random_inputs),  # x.clip() is a separate chain
    Case("half", _half, 1, random_inputs),
    Case("sum_axis0", _sum_axis0, 1, random_inputs),
    Case("mean_middle_axes", _mean_middle_axes, 1, random_inputs),
    Case("max_all_scalar", _max_all_scalar, 1, random_inputs),
    Case("nan_reductions", _nan_reductions, 3, with_nans),
    Case("int_reductions", _int_reductions, 7, negative_signed_inputs),
    Case("long_row_softmax", _long_row_softmax, 3, random_inputs),
    Case("cycle_guard", _cycle_guard, 3, random_inputs),
    Case("inplace", _inplace, 1, random_inputs),
    Case("passthrough", _passthrough, 1, random_inputs),
    Case("unsupported_cumsum", _unsupported_cumsum, 0, random_inputs, "numpy.cumsum"),
    Case("unsupported_matmul", _unsupported_matmul, 0, random_inputs, "operator.matmul"),
]

LOWERED = [case for case in CASES if case.kernels > 0]


def eager_outputs(graph: Graph, inputs: List[np.ndarray]) -> tuple:
    from compiler.backends import get_backend
    return tuple(get_backend("eager").compile(graph)(*inputs))


def node_named(graph: Graph, name: str) -> Node:
    return next(n for n in graph.nodes if n.name == name)


# ---------------------------------------------------------------------------
# generated programs: an elementwise prologue, a reduction, an epilogue

GENERATED_DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int32,
                                          np.uint8, np.bool_)]


def reduction_programs():
    """A hypothesis strategy: (graph, inputs) with one reduction over a random
    axis choice (None, an int, contiguous axes), keepdims or not, between
    random elementwise ops; float inputs sometimes hold NaNs."""
    from hypothesis import strategies as st

    @st.composite
    def build(draw):
        ndim = draw(st.integers(1, 3))
        shape = tuple(draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim)))
        if draw(st.booleans()):
            shape = shape[:-1] + (draw(st.sampled_from([17, 64, 300])),)
        dtype = draw(st.sampled_from(GENERATED_DTYPES))
        g = Graph()
        x = g.placeholder("x", TensorMeta(shape, dtype))
        rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
        value = random_inputs(g, rng)[0]
        if dtype.kind == "f" and draw(st.booleans()):
            value.reshape(-1)[draw(st.integers(0, value.size - 1))] = np.nan
        inputs = [value]
        source: Node = x
        if draw(st.booleans()) and dtype.kind != "b":
            source = g.call(oper("mul"), (source, draw(st.sampled_from([2, 3]))), {})
        if draw(st.booleans()):
            other_shape = shape[-1:] if draw(st.booleans()) else shape
            y = g.placeholder("y", TensorMeta(other_shape, dtype))
            inputs.append(random_inputs(g, rng)[1])
            source = g.call(fn(np.maximum), (source, y), {})
        op = draw(st.sampled_from(["sum", "mean", "max", "min"]))
        axis_kind = draw(st.sampled_from(["none", "last", "int", "range"]))
        kwargs: dict = {}
        if axis_kind == "last":
            kwargs["axis"] = -1
        elif axis_kind == "int":
            kwargs["axis"] = draw(st.integers(0, ndim - 1))
        elif axis_kind == "range":
            first = draw(st.integers(0, ndim - 1))
            kwargs["axis"] = tuple(range(first, draw(st.integers(first, ndim - 1)) + 1))
        keepdims = draw(st.booleans())
        if keepdims:
            kwargs["keepdims"] = True
        if draw(st.booleans()):
            reduced = g.call(method(op), (source,), kwargs)
        else:
            reduced = g.call(fn(getattr(np, op)), (source,), kwargs)
        outputs = [reduced]
        if keepdims and draw(st.booleans()):
            outputs.append(g.call(oper("sub" if dtype.kind != "b" else "eq"), (source, reduced), {}))
        if draw(st.booleans()) and reduced.meta.dtype.kind != "b":
            outputs.append(g.call(oper("mul"), (reduced, 2), {}))
        g.output(outputs)
        return g, inputs

    return build()


def lowered_programs(strategy, max_examples: int) -> list:
    """(graph, inputs, program, eager outputs) for each example of ``strategy`` that
    lowers (derandomized: the same examples every run); the others are the eager
    fallback, tested elsewhere."""
    import warnings

    from hypothesis import HealthCheck, given, settings

    from compiler.backends.triton.codegen import build_program
    from compiler.backends.triton.lowering import NotLowerable

    collected = []

    @settings(max_examples=max_examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def gather(program):
        graph, inputs = program
        try:
            lowered = build_program(graph)
        except NotLowerable:
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # overflow / invalid value: the same in both
            collected.append((graph, inputs, lowered, eager_outputs(graph, inputs)))

    gather()
    return collected


def assert_matches_eager(graph: Graph, got: tuple, want: tuple) -> None:
    """Same types, dtypes and shapes; integers and bools equal; floats within
    the tolerance of the least precise float dtype anywhere in the graph."""
    from compiler.backends.triton import TOLERANCES

    floats = [n.meta.dtype for n in graph.nodes
              if isinstance(n.meta, TensorMeta) and n.meta.dtype.kind == "f"]
    loosest = min(floats, key=lambda d: d.itemsize).name if floats else "float64"
    assert len(got) == len(want)
    for value, reference in zip(got, want):
        assert type(value) is type(reference), str(graph)
        assert np.asarray(value).dtype == np.asarray(reference).dtype, str(graph)
        assert np.shape(value) == np.shape(reference), str(graph)
        if np.asarray(reference).dtype.kind == "f":
            rtol, atol = TOLERANCES[loosest]
            np.testing.assert_allclose(value, reference, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=str(graph))
        else:
            np.testing.assert_array_equal(value, reference, err_msg=str(graph))
