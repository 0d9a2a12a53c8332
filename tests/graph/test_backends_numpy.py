"""The eager and numpy backends return what plain NumPy returns: same types,
dtypes, shapes, layouts, aliasing and values (integers exactly; floats within
a per-dtype tolerance, as fused code may take other SIMD paths for
transcendental functions), and the numpy backend fuses elementwise chains."""
from __future__ import annotations

import logging

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import compiler.ops as ops
from compiler.backends import available_backends, get_backend
from compiler.graph import Graph, TensorMeta
from compiler.ops.opinfo import OpInfo
from tests.graph import graphs

# Relative tolerance per float dtype between a backend and plain NumPy.
RTOL = {"e": 1e-3, "f": 1e-5, "d": 1e-12, "F": 1e-5, "D": 1e-12}


def _copy(value):
    return value.copy(order="K") if isinstance(value, np.ndarray) else value


def assert_same_results(graph: Graph, inputs: list, backend: str) -> None:
    try:
        _assert_same_results(graph, inputs, backend)
    except AssertionError as error:  # show the program and the generated code
        source = get_backend(backend).compile(graph).source
        raise AssertionError(f"{error}\n{graph}\n{source}\ninputs: {inputs!r}") from None


def _assert_same_results(graph: Graph, inputs: list, backend: str) -> None:
    ref_inputs = [_copy(v) for v in inputs]
    run_inputs = [_copy(v) for v in inputs]
    compiled = get_backend(backend).compile(graph)
    try:
        expected = graphs.reference(graph, ref_inputs)
    except Exception as error:  # data-dependent (int ** -1): the backend raises it too
        with pytest.raises(type(error)):
            compiled(*run_inputs)
        return
    got = compiled(*run_inputs)
    # The comparisons run under no error state of the caller's (a tolerance of a float16
    # result under errstate(all="raise") underflows inside assert_allclose itself).
    with np.errstate(all="ignore"):
        _compare(got, expected, ref_inputs, run_inputs)


def _compare(got: tuple, expected: tuple, ref_inputs: list, run_inputs: list) -> None:
    assert isinstance(got, tuple) and len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert type(g) is type(e), (i, type(g), type(e))
        assert g.dtype == e.dtype and np.shape(g) == np.shape(e)
        if isinstance(e, np.ndarray):
            assert (g.flags.c_contiguous, g.flags.f_contiguous) == \
                (e.flags.c_contiguous, e.flags.f_contiguous), f"output {i} layout"
            for j, (ri, gi) in enumerate(zip(ref_inputs, run_inputs)):
                if isinstance(ri, np.ndarray):
                    assert np.shares_memory(g, gi) == np.shares_memory(e, ri), \
                        f"output {i} aliasing of input {j}"
        code = e.dtype.char
        if code in RTOL:
            np.testing.assert_allclose(g, e, rtol=RTOL[code], atol=0, equal_nan=True)
        else:
            assert np.array_equal(g, e), (i, g, e)
    for i, e in enumerate(expected):
        for j, other in enumerate(expected):
            assert (got[i] is got[j]) == (e is other), f"outputs {i} and {j} identity"
    for ri, gi in zip(ref_inputs, run_inputs):
        if isinstance(ri, np.ndarray):
            assert np.array_equal(ri, gi, equal_nan=True), "inputs changed differently"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # mean of empty slices, as plain NumPy warns
@pytest.mark.parametrize("backend", ["eager", "numpy"])
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=graphs.elementwise_programs())
def test_generated_programs_match_plain_numpy(backend, program):
    graph, inputs = program
    with np.errstate(all="ignore"):
        assert_same_results(graph, inputs, backend)


@pytest.mark.parametrize("backend", ["eager", "numpy"])
@pytest.mark.parametrize("build", [graphs.softmax, graphs.layer_norm, lambda: graphs.chain(8)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_programs_match_plain_numpy(backend, build, order):
    graph = build()
    rng = np.random.default_rng(0)
    inputs = [np.asarray(rng.standard_normal(p.meta.shape), p.meta.dtype, order=order)
              for p in graph.placeholders]
    assert_same_results(graph, inputs, backend)


@pytest.mark.parametrize("n_ops", [1, 2, 8, 20])
def test_elementwise_chain_is_one_kernel(n_ops):
    compiled = get_backend("numpy").compile(graphs.chain(n_ops))
    assert compiled.kernel_count == 1
    assert compiled.source.count("out=") == n_ops - 1


def test_softmax_and_layer_norm_kernel_counts():
    # softmax: max | sub+exp | sum | truediv
    assert get_backend("numpy").compile(graphs.softmax()).kernel_count == 4
    # layer norm: mean | sub+mul | mean | add+sqrt | truediv+mul+add
    assert get_backend("numpy").compile(graphs.layer_norm()).kernel_count == 5


def test_reduction_splits_a_chain():
    g = Graph()
    x = g.placeholder("x", TensorMeta((8, 8), np.float64))
    a = g.call(ops.lookup_operator("mul"), (x, 2.0))
    b = g.call(ops.lookup_operator("add"), (a, 1.0))
    s = g.call(ops.lookup_method("sum"), (b,), {"axis": 0})
    c = g.call(ops.lookup_operator("mul"), (s, s))
    d = g.call(ops.lookup_function(np.exp), (c,))
    g.output([d, b])
    compiled = get_backend("numpy").compile(g)
    assert compiled.kernel_count == 3
    assert get_backend("eager").compile(g).kernel_count == 0


def test_outputs_and_values_used_later_are_never_overwritten():
    g = Graph()
    x = g.placeholder("x", TensorMeta((5,), np.float64))
    a = g.call(ops.lookup_operator("add"), (x, 1.0))
    b = g.call(ops.lookup_operator("mul"), (a, 3.0))
    c = g.call(ops.lookup_operator("sub"), (b, a))
    g.output([a, c, x])
    compiled = get_backend("numpy").compile(g)
    data = np.arange(5.0)
    a_out, c_out, x_out = compiled(data)
    assert x_out is data and np.array_equal(data, np.arange(5.0))
    assert np.array_equal(a_out, np.arange(5.0) + 1)
    assert np.array_equal(c_out, (np.arange(5.0) + 1) * 2)
    assert "out=x" not in compiled.source and "out=a)" not in compiled.source


def test_view_of_an_input_stays_a_view():
    g = Graph()
    x = g.placeholder("x", TensorMeta((4, 4), np.float64))
    v = g.call(ops.lookup_operator("getitem"), (x, (slice(1, None), 0)))
    t = g.call(ops.lookup_method("T"), (x,))
    g.output([v, t])
    data = np.zeros((4, 4))
    v_out, t_out = get_backend("numpy").compile(g)(data)
    data[2, 0] = 7.0
    assert v_out[1] == 7.0 and t_out[0, 2] == 7.0


def test_generated_source_is_valid_python_and_readable():
    compiled = get_backend("numpy").compile(graphs.softmax())
    compile(compiled.source, "<test>", "exec")
    assert compiled.source.startswith("def compiled_graph(x):")
    assert "_np.exp(sub, out=sub)" in compiled.source


def test_unlowerable_graph_falls_back_to_eager_with_a_logged_reason(caplog):
    base = ops.lookup_function(np.negative)
    opaque = OpInfo("test.opaque_negative", np.negative, "elementwise", base.rule, lowerable=False)
    g = Graph()
    x = g.placeholder("x", TensorMeta((3,), np.float64))
    g.output([g.call(opaque, (x,))])
    with caplog.at_level(logging.WARNING, logger="compiler.backends"):
        compiled = get_backend("numpy").compile(g)
    assert compiled.backend == "eager" and "not lowerable" in compiled.fallback_reason
    assert any("running it eagerly" in r.getMessage() for r in caplog.records)
    assert np.array_equal(compiled(np.arange(3.0))[0], -np.arange(3.0))


def test_backend_registry():
    assert {"eager", "numpy"} <= set(available_backends())
    with pytest.raises(ValueError, match="accepted: eager, numpy, triton"):
        get_backend("cuda")
    assert get_backend("numpy").name == "numpy"


def test_triton_reports_why_it_is_unavailable():
    triton = get_backend("triton")
    if triton.available():
        pytest.skip("a GPU with triton is present: the stub's unavailable path is not taken")
    reason = triton.unavailable_reason()
    assert isinstance(reason, str) and reason
    assert "triton" not in available_backends()


def test_wrong_number_of_inputs_is_a_type_error():
    for backend in ("eager", "numpy"):
        with pytest.raises(TypeError):
            get_backend(backend).compile(graphs.softmax())()


def test_a_buffer_seen_by_a_view_is_never_reused():
    g = Graph()
    x = g.placeholder("x", TensorMeta((6,), np.float64))
    a = g.call(ops.lookup_operator("add"), (x, 1.0))
    view = g.call(ops.lookup_operator("getitem"), (a, slice(1, None)))
    b = g.call(ops.lookup_operator("mul"), (x, 3.0))
    c = g.call(ops.lookup_operator("sub"), (b, 1.0))
    g.output([view, c])
    compiled = get_backend("numpy").compile(g)
    assert "out=a" not in compiled.source
    view_out, c_out = compiled(np.arange(6.0))
    assert np.array_equal(view_out, np.arange(1.0, 6.0) + 1)
    assert np.array_equal(c_out, np.arange(6.0) * 3 - 1)


def test_dead_temporaries_are_reused_across_regions():
    source = get_backend("numpy").compile(graphs.softmax()).source
    # exp dies at the division (its users: sum, a reduction, and the division)
    assert "_np.divide(exp, sum, out=exp)" in source


def _misc_graph() -> Graph:
    """Calls with nested node arguments, node keywords, tuple results, creation."""
    g = Graph()
    x = g.placeholder("x", TensorMeta((3, 4), np.float32))
    s = g.placeholder("s", TensorMeta((), np.float32, "scalar"))
    fn, op, method = ops.lookup_function, ops.lookup_operator, ops.lookup_method
    cat = g.call(fn(np.concatenate), ((x, x),), {"axis": 0})
    stacked = g.call(fn(np.stack), ([x, x],))
    filled = g.call(fn(np.full_like), (x,), {"fill_value": s})
    pieces = g.call(fn(np.divmod), (cat, 2.5))
    quotient = g.call(op("getitem"), (pieces, 0))
    zeros = g.call(fn(np.zeros), ((2, 3),), {"dtype": np.dtype(np.int16)})
    ein = g.call(fn(np.einsum), ("ij,kj->ik", x, x))
    norm = g.call(fn(np.linalg.norm), (x,), {"axis": 1})
    where = g.call(fn(np.where), (g.call(op("gt"), (x, 0)), x, s))
    total = g.call(method("sum"), (x,))
    scaled = g.call(op("mul"), (where, total))
    g.output([cat, stacked, filled, quotient, zeros, ein, norm, scaled, total, pieces])
    return g


@pytest.mark.parametrize("backend", ["eager", "numpy"])
def test_nested_arguments_tuples_and_creation_match_plain_numpy(backend):
    graph = _misc_graph()
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    outputs = graph.outputs
    assert graph.outputs[-1].meta[0].shape == (6, 4)
    inputs = [x, np.float32(0.25)]
    expected = graphs.reference(graph, inputs)
    got = get_backend(backend).compile(graph)(*inputs)
    for g, e in zip(got[:-1], expected[:-1]):
        assert type(g) is type(e) and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-5)
    assert len(got[-1]) == len(outputs[-1].meta) == 2


def test_negative_constants_keep_their_precedence():
    g = Graph()
    x = g.placeholder("x", TensorMeta((3,), np.int64))
    g.output([g.call(ops.lookup_operator("pow"), (-1, x))])
    compiled = get_backend("numpy").compile(g)
    assert np.array_equal(compiled(np.array([1, 2, 3]))[0], [-1, 1, -1])


def _indexing_triangles_and_constants_graph() -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((4, 3), np.float64))
    idx = g.placeholder("idx", TensorMeta((2,), np.int64))
    getitem = ops.lookup_operator("getitem")
    eye = g.call(ops.lookup_function(np.eye), (3,))
    onehot = g.call(getitem, (eye, idx))                        # index array from the graph
    rows = g.call(getitem, (x, [0, 2]))                         # constant integer lists
    cols = g.call(getitem, (x, (slice(None), [[1], [0]])))
    lower = g.call(ops.lookup_function(np.tril), (x,))
    upper = g.call(ops.lookup_function(np.triu), (x,), {"k": -1})
    mean = g.call(ops.lookup_function(np.array), ([0.25, 0.5, 1.0],), {"dtype": np.float32})
    centred = g.call(ops.lookup_operator("sub"), (rows, mean))
    nested = g.call(ops.lookup_function(np.asarray), (((1, 2), (3, 4)),))
    g.output([onehot, rows, cols, lower, upper, centred, nested, mean])
    return g


@pytest.mark.parametrize("backend", ["eager", "numpy"])
@pytest.mark.parametrize("idx", [[2, 0], [-3, 1], [3, 0], [0, -4]])
def test_advanced_indexing_triangles_and_constant_arrays_match_plain_numpy(backend, idx):
    """In range: the same values; an index array out of range: the graph raises NumPy's
    IndexError at run time (the compiled frame then runs the plain function)."""
    graph = _indexing_triangles_and_constants_graph()
    x = np.random.default_rng(2).standard_normal((4, 3))
    assert_same_results(graph, [x, np.array(idx, np.int64)], backend)


@pytest.mark.parametrize("backend", ["eager", "numpy"])
def test_constant_arrays_are_fresh_on_every_call(backend):
    """np.array of a constant makes a new array per call, as the plain call does: a caller
    writing into one result must not change the next."""
    g = Graph()
    g.output([g.call(ops.lookup_function(np.array), ([1, 2, 3],))])
    compiled = get_backend(backend).compile(g)
    first = compiled()[0]
    first[0] = 100
    assert compiled()[0].tolist() == [1, 2, 3]
