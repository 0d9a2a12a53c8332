"""The graph IR: deterministic names, canonical text identical on every
Python/NumPy version, metadata and building errors."""
from __future__ import annotations

import numpy as np
import pytest

import compiler.ops as ops
from compiler.exc import Unsupported
from compiler.graph import Graph, TensorMeta
from compiler.graph_text import format_value


def _chain() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((10,), np.float64))
    add = g.call(ops.lookup_function(np.add), (x, x))
    mul = g.call(ops.lookup_function(np.multiply), (add, add))
    g.output([mul])
    return g


def _mixed() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((4, 3), np.float32, layout="F"))
    s = g.placeholder("s", TensorMeta((), np.int64, "scalar"))
    total = g.call(ops.lookup_method("sum"), (x,), {"keepdims": False, "axis": 0})
    whole = g.call(ops.lookup_method("sum"), (x,))
    shifted = g.call(ops.lookup_operator("sub"), (x, total))
    cast = g.call(ops.lookup_method("astype"), (shifted, np.dtype(np.float64)))
    view = g.call(ops.lookup_operator("getitem"), (cast, (slice(None, None, -1), None, Ellipsis)))
    scaled = g.call(ops.lookup_operator("mul"), (view, np.float64(0.1)))
    full = g.call(ops.lookup_function(np.full_like), (x, float("nan")), {"dtype": np.int8})
    pieces = g.call(ops.lookup_function(np.divmod), (cast, 3))
    first = g.call(ops.lookup_operator("getitem"), (pieces, 0))
    g.output([scaled, whole, full, first, s, scaled])
    return g


CHAIN_TEXT = """\
graph(x: float64[10]):
  add = numpy.add(x, x)  # float64[10]
  multiply = numpy.multiply(add, add)  # float64[10]
  return (multiply,)
"""

MIXED_TEXT = """\
graph(x: float32[4, 3] layout=F, s: int64 scalar):
  sum = ndarray.sum(x, axis=0, keepdims=False)  # float32[3]
  sum_1 = ndarray.sum(x)  # float32 scalar
  sub = operator.sub(x, sum)  # float32[4, 3]
  astype = ndarray.astype(sub, dtype(float64))  # float64[4, 3]
  getitem = operator.getitem(astype, (slice(None, None, -1), None, ...))  # float64[4, 1, 3]
  mul = operator.mul(getitem, numpy.float64(0.1))  # float64[4, 1, 3]
  full_like = numpy.full_like(x, nan, dtype=numpy.int8)  # int8[4, 3]
  divmod = numpy.divmod(astype, 3)  # (float64[4, 3], float64[4, 3])
  getitem_1 = operator.getitem(divmod, 0)  # float64[4, 3]
  return (mul, sum_1, full_like, getitem_1, s, mul)
"""


@pytest.mark.parametrize("build, expected", [(_chain, CHAIN_TEXT), (_mixed, MIXED_TEXT)])
def test_text_is_the_stored_expectation_on_every_version(build, expected):
    assert str(build()) == expected


@pytest.mark.parametrize("build", [_chain, _mixed])
def test_same_program_twice_gives_same_text_and_hash(build):
    first, second = build(), build()
    assert str(first) == str(second)
    assert first.graph_hash() == second.graph_hash()
    assert len(first.graph_hash()) == 16 and int(first.graph_hash(), 16) >= 0


def test_hash_differs_when_the_program_differs():
    g = _chain()
    other = Graph()
    x = other.placeholder("x", TensorMeta((10,), np.float64))
    other.output([other.call(ops.lookup_function(np.add), (x, x))])
    assert g.graph_hash() != other.graph_hash()


def test_names_are_unique_identifiers_and_never_start_with_underscore():
    g = Graph()
    a = g.placeholder("add", TensorMeta((2,), np.int64))
    b = g.placeholder("L['x'].y", TensorMeta((2,), np.int64))
    c = g.placeholder("_private", TensorMeta((2,), np.int64))
    d = g.placeholder("lambda", TensorMeta((2,), np.int64))
    calls = [g.call(ops.lookup_operator("add"), (a, b)) for _ in range(3)]
    names = [n.name for n in (a, b, c, d)] + [n.name for n in calls]
    assert names == ["add", "L_x_y", "private", "lambda_", "add_1", "add_2", "add_3"]
    assert all(n.isidentifier() and not n.startswith("_") for n in names)


def test_late_placeholder_goes_before_the_calls():
    g = Graph()
    x = g.placeholder("x", TensorMeta((2,), np.float64))
    neg = g.call(ops.lookup_operator("neg"), (x,))
    y = g.placeholder("y", TensorMeta((2,), np.float64))
    g.output([g.call(ops.lookup_operator("add"), (neg, y))])
    assert [n.name for n in g.placeholders] == ["x", "y"]
    assert [n.op for n in g.nodes] == ["placeholder", "placeholder", "call", "call", "output"]


@pytest.mark.parametrize("value, text", [
    (1.5, "1.5"), (np.float64(1.5), "numpy.float64(1.5)"), (np.float32(0.5), "numpy.float32(0.5)"),
    (np.int64(3), "numpy.int64(3)"), (np.bool_(True), "numpy.bool(True)"), (float("-inf"), "-inf"),
    (np.dtype(np.int32), "dtype(int32)"), (np.float16, "numpy.float16"), (float, "float"),
    (slice(1, None), "slice(1, None, None)"), ((1,), "(1,)"), ([1, (2, 3)], "[1, (2, 3)]"),
    (Ellipsis, "..."), (1j, "complex(0.0, 1.0)"), ("ij->i", "'ij->i'"), (np.dtype(">f8"), "dtype(>float64)"),
])
def test_constants_have_a_canonical_text(value, text):
    assert format_value(value) == text


def test_unknown_constant_is_unsupported():
    g = Graph()
    x = g.placeholder("x", TensorMeta((3,), np.float64))
    with pytest.raises(Unsupported, match="object"):
        g.call(ops.lookup_operator("add"), (x, object()))


def test_infer_errors_reach_the_caller_as_unsupported():
    g = Graph()
    x = g.placeholder("x", TensorMeta((3,), np.float64))
    y = g.placeholder("y", TensorMeta((4,), np.float64))
    with pytest.raises(Unsupported, match="broadcast"):
        g.call(ops.lookup_operator("add"), (x, y))
    assert g.call_nodes == []


def test_output_rules():
    g = _chain()
    with pytest.raises(ValueError, match="already has its output"):
        g.output([g.placeholders[0]])
    fresh = Graph()
    with pytest.raises(TypeError, match="nodes of this graph"):
        fresh.output([g.placeholders[0]])
    with pytest.raises(ValueError, match="no output"):
        _ = Graph().outputs


def test_tensor_meta_of_values():
    assert TensorMeta.of(np.zeros((2, 3), np.float32)) == TensorMeta((2, 3), np.float32, "array", "C")
    assert TensorMeta.of(np.zeros((2, 3), order="F")).layout == "F"
    assert TensorMeta.of(np.zeros((4, 4))[:, ::2]).layout == "A"
    assert TensorMeta.of(np.float64(1)) == TensorMeta((), np.float64, "scalar")
    assert TensorMeta.of(np.zeros(()))  .kind == "array"
    with pytest.raises(TypeError, match="ndarray or a NumPy scalar"):
        TensorMeta.of(1.0)
    with pytest.raises(ValueError, match="kind"):
        TensorMeta((), np.float64, "list")
    # A Python int / float graph input (a dynamic scalar): shape (), never an array.
    assert TensorMeta((), np.float64, "python").kind == "python"
    with pytest.raises(ValueError, match="shape"):
        TensorMeta((2,), np.float64, "python")


def test_users_and_input_nodes():
    g = _chain()
    users = g.users()
    assert [u.name for u in users["x"]] == ["add"]
    assert [u.name for u in users["add"]] == ["multiply"]
    assert [u.name for u in users["multiply"]] == ["output"]
    assert [n.name for n in g.call_nodes[1].input_nodes()] == ["add"]
