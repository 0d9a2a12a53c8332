"""Graphs for the backend tests: hypothesis-generated elementwise chains and a
few hand-built programs (softmax, layer norm), plus a reference interpreter
that is independent of the backends."""
from __future__ import annotations

import operator
from typing import Any, List, Tuple

import numpy as np
from hypothesis import strategies as st

import compiler.ops as ops
from compiler.exc import Unsupported
from compiler.graph import Graph, Node, TensorMeta, map_args
from tests.graph import arrays as A

UNARY = [ops.lookup_operator("neg"), ops.lookup_operator("abs")] + \
    [ops.lookup_function(f) for f in (np.sqrt, np.exp, np.sin, np.tanh, np.square, np.negative,
                                      np.floor, np.logical_not, np.isnan, np.sign)]
BINARY = [ops.lookup_operator(n) for n in ("add", "sub", "mul", "truediv", "floordiv", "pow",
                                           "gt", "eq", "and_")] + \
    [ops.lookup_function(f) for f in (np.maximum, np.minimum, np.hypot, np.add, np.multiply,
                                      np.where, np.clip)]
OTHER = [("sum", {"axis": -1, "keepdims": True}), ("T", {}), ("getitem", {}), ("iadd", {}),
         ("reshape", {}), ("mean", {})]
CHAIN_DTYPES = [np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.bool_,
                                      np.float16, np.uint8, np.complex128)]


@st.composite
def elementwise_programs(draw) -> Tuple[Graph, List[Any]]:
    """A graph of 1-10 ops over 1-3 inputs, and real input values for it."""
    base = draw(st.lists(st.integers(1, 5), min_size=0, max_size=3).map(tuple))
    g = Graph()
    inputs, values = [], []
    for i in range(draw(st.integers(1, 3))):
        shape = base if i == 0 else A.broadcastable(draw, base)
        value = A.values(draw, shape, draw(st.sampled_from(CHAIN_DTYPES)))
        inputs.append(g.placeholder(f"x{i}", TensorMeta.of(value)))
        values.append(value)
    pool: List[Node] = list(inputs)
    for _ in range(draw(st.integers(1, 10))):
        recent = pool[-1] if draw(st.integers(0, 3)) else draw(st.sampled_from(pool))
        choice = draw(st.integers(0, 9))
        try:
            if choice < 3:
                node = g.call(draw(st.sampled_from(UNARY)), (recent,))
            elif choice < 8:
                op = draw(st.sampled_from(BINARY))
                other = draw(st.sampled_from(pool)) if draw(st.booleans()) else \
                    draw(st.sampled_from([2, 0.5, -1, True, np.float32(1.5), 3]))
                args = (recent, other) if draw(st.booleans()) else (other, recent)
                if op.name == "numpy.where":
                    cond = g.call(ops.lookup_operator("gt"), (recent, 0))
                    args = (cond,) + args
                elif op.name == "numpy.clip":
                    args = (recent, 0, other)
                if not any(isinstance(a, Node) for a in args):
                    continue
                node = g.call(op, args)
            else:
                node = _other(draw, g, recent, inputs)
        except Unsupported:
            continue
        pool.append(node)
    outputs = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))
    g.output(outputs)
    return g, values


def _other(draw, g: Graph, value: Node, inputs: List[Node]) -> Node:
    name, kwargs = draw(st.sampled_from(OTHER))
    meta = value.meta
    if name == "T":
        return g.call(ops.lookup_method("T"), (value,))
    if name == "getitem":
        return g.call(ops.lookup_operator("getitem"), (value, A.index_for(draw, meta.ndim)))
    if name == "reshape":
        return g.call(ops.lookup_method("reshape"), (value, -1))
    if name == "iadd":
        if value in inputs:  # in-place only on temporaries, as the tracer does
            raise Unsupported("in-place on an input")
        return g.call(ops.lookup_operator("iadd"), (value, 1))
    return g.call(ops.lookup_method(name), (value,), kwargs)


def reference(graph: Graph, inputs: List[Any]) -> tuple:
    """Run ``graph`` node by node with each op's function: plain NumPy."""
    env = {n.name: v for n, v in zip(graph.placeholders, inputs)}
    for node in graph.call_nodes:
        args = map_args(node.args, lambda n: env[n.name])
        kwargs = map_args(node.kwargs, lambda n: env[n.name])
        env[node.name] = node.opinfo.fn(*args, **kwargs)
    return tuple(env[n.name] for n in graph.outputs)


def softmax() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((64, 33), np.float32))
    m = g.call(ops.lookup_method("max"), (x,), {"axis": -1, "keepdims": True})
    e = g.call(ops.lookup_function(np.exp), (g.call(ops.lookup_operator("sub"), (x, m)),))
    s = g.call(ops.lookup_method("sum"), (e,), {"axis": -1, "keepdims": True})
    g.output([g.call(ops.lookup_operator("truediv"), (e, s))])
    return g


def layer_norm() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((16, 40), np.float64))
    w = g.placeholder("w", TensorMeta((40,), np.float64))
    b = g.placeholder("b", TensorMeta((40,), np.float64))
    op = ops.lookup_operator
    mu = g.call(ops.lookup_method("mean"), (x,), {"axis": -1, "keepdims": True})
    d = g.call(op("sub"), (x, mu))
    var = g.call(ops.lookup_method("mean"), (g.call(op("mul"), (d, d)),),
                 {"axis": -1, "keepdims": True})
    inv = g.call(ops.lookup_function(np.sqrt), (g.call(op("add"), (var, 1e-5)),))
    y = g.call(op("add"), (g.call(op("mul"), (g.call(op("truediv"), (d, inv)), w)), b))
    g.output([y])
    return g


def chain(n_ops: int, size: int = 1000, dtype: Any = np.float64) -> Graph:
    """x -> n_ops alternating elementwise ops (the benchmark's shape of program)."""
    g = Graph()
    x = g.placeholder("x", TensorMeta((size,), dtype))
    steps = [(operator.mul, 2.0), (operator.add, 1.0), (np.sin, None), (operator.mul, "self"),
             (operator.sub, 0.5), (np.abs, None), (operator.mul, "x"), (operator.add, 1.0)]
    value = x
    for i in range(n_ops):
        fn, arg = steps[i % len(steps)]
        if arg is None:
            value = g.call(ops.lookup_function(fn), (value,))
        else:
            other = value if arg == "self" else (x if arg == "x" else arg)
            value = g.call(ops.lookup_operator(fn.__name__.strip("_")), (value, other))
    g.output([value])
    return g
