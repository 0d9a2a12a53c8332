"""One-pass evaluation of fused regions (compiler/backends/blocked.py, numba_kernels.py,
region_kernel.py) against plain NumPy: values, dtypes, layouts, aliasing, and the
floating-point errors each error state reports.  Blocks are made tiny here so that small
generated programs cross many block boundaries; the numba loop runs where numba is installed."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler.ops as ops
from compiler.backends import blocked, get_backend, numba_kernels
from compiler.exc import Unsupported
from compiler.graph import Graph, TensorMeta
from tests.graph import graphs
from tests.graph.test_backends_numpy import assert_same_results

HAVE_NUMBA = importlib.util.find_spec("numba") is not None
PATHS = ["blocked"] + (["numba"] if HAVE_NUMBA else [])


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Blocks of 7 elements, every fused region of two or more ops evaluated in one pass."""
    monkeypatch.setattr(blocked, "BLOCK_ELEMENTS", 7)
    monkeypatch.setattr(blocked, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(numba_kernels, "MIN_ELEMENTS", 0)


def _use(monkeypatch, path: str) -> None:
    monkeypatch.setattr(numba_kernels, "numba_available", lambda: path == "numba")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("errors", ["ignore", "raise"])
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=graphs.elementwise_programs())
def test_generated_programs_match_plain_numpy(tiny_blocks, monkeypatch, path, errors, program):
    _use(monkeypatch, path)
    graph, inputs = program
    with np.errstate(all=errors):
        assert_same_results(graph, inputs, "numpy")


def _chain(shape, dtype, other_shape=None) -> Graph:
    """(x * y) / z, sqrt, + 1, maximum with x, - y: every kind of floating-point error."""
    g = Graph()
    x = g.placeholder("x", TensorMeta(shape, dtype))
    y = g.placeholder("y", TensorMeta(shape if other_shape is None else other_shape, dtype))
    z = g.placeholder("z", TensorMeta(shape, dtype))
    op, fn = ops.lookup_operator, ops.lookup_function
    b = g.call(op("truediv"), (g.call(op("mul"), (x, y)), z))
    d = g.call(op("add"), (g.call(fn(np.sqrt), (b,)), 1.0))
    e = g.call(fn(np.maximum), (d, x))
    g.output([g.call(op("sub"), (e, y)), b])
    return g


def _special_values(rng, shape, dtype, specials: int):
    data = rng.uniform(0.5, 2.0, size=shape).astype(dtype)
    flat = data.reshape(-1)
    with np.errstate(over="ignore"):  # 1e300 is inf in float32
        for _ in range(specials):
            flat[rng.integers(flat.size)] = rng.choice([0.0, -1.0, np.inf, -np.inf, np.nan, 1e300])
    return data


def _outcome(fn, errors=None, **state):
    if errors is not None:
        state["all"] = errors
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(**state):
            try:
                result = fn()
            except FloatingPointError as error:
                result = error
    return result, [(w.category, str(w.message)) for w in caught]


def _graph_reports(graph, inputs, errors, marker):
    """``_same_reports`` for the graph compiled by the numpy backend (whose source must show
    ``marker``) against plain NumPy."""
    compiled = get_backend("numpy").compile(graph)
    assert marker in compiled.source
    return _same_reports(lambda: compiled(*inputs), lambda: graphs.reference(graph, inputs), errors)


def _same_reports(compiled, plain, errors=None):
    """(compiled result, plain result) run under the error state ``errors`` (None: NumPy's
    default), after checking that both issued the same warnings and, when plain NumPy raised
    a FloatingPointError (then the results are the errors), the same one."""
    expected, expected_warnings = _outcome(plain, errors)
    got, got_warnings = _outcome(compiled, errors)
    assert got_warnings == expected_warnings
    if isinstance(expected, FloatingPointError):
        assert type(got) is FloatingPointError and str(got) == str(expected)
    return got, expected


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("errors", ["ignore", "raise", "warn"])
@pytest.mark.parametrize("size", [6, 7, 8, 13, 14, 15, 50])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("specials", [0, 1, 5])
def test_errors_are_reported_as_plain_numpy_reports_them(tiny_blocks, monkeypatch, path, errors,
                                                         size, dtype, specials):
    _use(monkeypatch, path)
    rng = np.random.default_rng(size * 31 + specials)
    inputs = [_special_values(rng, (size,), dtype, specials) for _ in range(3)]
    graph = _chain((size,), np.dtype(dtype))
    got, expected = _graph_reports(graph, inputs, errors, "_k_group")
    if isinstance(expected, FloatingPointError):
        return
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-5 if dtype == np.float32 else 1e-12, equal_nan=True)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("shapes", [((6, 5), (5,)), ((6, 5), (1, 5)), ((6, 5), (6, 1)),
                                    ((3, 4, 5), (4, 5)), ((9,), ())])
def test_broadcast_and_zero_dimensional_operands(tiny_blocks, monkeypatch, path, shapes):
    _use(monkeypatch, path)
    shape, other = shapes
    rng = np.random.default_rng(0)
    graph = _chain(shape, np.dtype(np.float64), other)
    inputs = [rng.uniform(0.5, 2, shape), rng.uniform(0.5, 2, other), rng.uniform(0.5, 2, shape)]
    assert_same_results(graph, inputs, "numpy")


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("order", ["F", "strided"])
def test_inputs_not_c_contiguous_keep_numpys_layouts(tiny_blocks, monkeypatch, path, order):
    _use(monkeypatch, path)
    rng = np.random.default_rng(1)
    base = rng.uniform(0.5, 2, (8, 10))
    data = np.asfortranarray(base) if order == "F" else base[:, ::2]
    graph = _chain(data.shape, np.dtype(np.float64))
    assert_same_results(graph, [data, data.copy(order="K"), data.copy(order="K")], "numpy")


def test_independent_chains_of_one_shape_run_in_one_pass(tiny_blocks):
    g = Graph()
    a = g.placeholder("a", TensorMeta((40,), np.float64))
    b = g.placeholder("b", TensorMeta((40,), np.float64))
    op = ops.lookup_operator
    left = g.call(op("add"), (g.call(op("mul"), (a, 1.5)), g.call(op("mul"), (b, b))))
    g.output([g.call(op("add"), (g.call(op("sub"), (left, g.call(op("mul"), (a, b)))), 2))])
    compiled = get_backend("numpy").compile(g)
    assert compiled.source.count("_k_group1(") == 1 and "_k_group2" not in compiled.source
    rng = np.random.default_rng(2)
    assert_same_results(g, [rng.standard_normal(40), rng.standard_normal(40)], "numpy")


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.uint8, np.float16, np.complex128, np.bool_])
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(size=st.integers(1, 40), scalar=st.sampled_from([2, -1, 300, 2.5, True, np.float32(1.5)]))
def test_dtypes_follow_numpys_casting(tiny_blocks, dtype, size, scalar):
    g = Graph()
    x = g.placeholder("x", TensorMeta((size,), dtype))
    op = ops.lookup_operator
    try:
        a = g.call(op("mul"), (x, scalar))
    except Unsupported:  # NumPy rejects it (300 in int8 under NEP 50): never traced
        return
    g.output([g.call(op("add"), (a, x))])
    values = (np.arange(size) % 7).astype(dtype)
    with np.errstate(all="ignore"):
        assert_same_results(g, [values], "numpy")


def _divided(x, y):
    a = x / y
    b = np.sqrt(a) + 1.0
    return b * x - y


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("errors", [None, "ignore", "raise"])
def test_compiled_functions_warn_and_raise_as_plain_ones(tiny_blocks, monkeypatch, path, errors):
    import compiler
    _use(monkeypatch, path)
    compiled = compiler.compile(_divided, backend="numpy")
    rng = np.random.default_rng(3)
    for specials in (0, 1, 3, 0):
        x = _special_values(rng, (30,), np.float64, specials)
        y = _special_values(rng, (30,), np.float64, specials)
        got, expected = _same_reports(lambda: compiled(x, y), lambda: _divided(x, y), errors=errors)
        if not isinstance(expected, FloatingPointError):
            np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True)


def _summed(x, y):
    d = x - y
    return (d * (d / y)).sum(), d


def _one_pass_kernel(compiled):
    """The region kernel of the compiled function's newest cache entry, checking that the
    entry's graph has a dynamic size."""
    entry = compiled._tracematrix_cache.cache_entries[0]
    graph = entry.fn.__globals__["_graph"]
    assert "[s0]" in str(entry.graph) and "_k_group1(" in graph.source
    return graph.fn.__globals__["_k_group1"]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("errors", [None, "ignore", "raise"])
@pytest.mark.parametrize("fn", [_divided, _summed])
def test_dynamic_sizes_run_in_one_pass(tiny_blocks, monkeypatch, path, errors, fn):
    """One entry for every size (automatic dynamic shapes) still runs its regions in one pass:
    the kernels read the size at run time; values and reports as the plain function's."""
    import compiler
    _use(monkeypatch, path)
    compiler.reset()  # entries are kept per code object: this test's from its first call
    compiled = compiler.compile(fn, backend="numpy")
    rng = np.random.default_rng(4)
    for size, specials in [(20, 0), (33, 0), (9, 1), (50, 3), (64, 0), (2, 0)]:
        x = _special_values(rng, (size,), np.float64, specials)
        y = _special_values(rng, (size,), np.float64, specials)
        got, expected = _same_reports(lambda: compiled(x, y), lambda: fn(x, y), errors=errors)
        if not isinstance(expected, FloatingPointError):
            for g, e in zip(got, expected):
                assert type(g) is type(e) and g.dtype == e.dtype and g.shape == e.shape
                np.testing.assert_allclose(g, e, rtol=1e-12, equal_nan=True)
    assert len(compiled._tracematrix_cache.cache_entries) == 2  # static for 20, then any size
    with np.errstate(all="ignore"):
        done = _one_pass_kernel(compiled)(np.ones(40), np.ones(40))
    assert done is not None and all(np.shape(r) in ((40,), ()) for r in done)  # ran for size 40


@pytest.mark.parametrize("path", PATHS)
def test_a_dynamic_size_under_the_minimum_runs_over_whole_arrays(tiny_blocks, monkeypatch, path):
    import compiler
    _use(monkeypatch, path)
    monkeypatch.setattr(blocked, "MIN_ELEMENTS", 30)
    monkeypatch.setattr(numba_kernels, "MIN_ELEMENTS", 30)
    compiler.reset()
    compiled = compiler.compile(_divided, backend="numpy", dynamic=True)
    x, y = np.arange(1.0, 41.0), np.arange(2.0, 42.0)
    np.testing.assert_allclose(compiled(x, y), _divided(x, y), rtol=1e-12)
    kernel = _one_pass_kernel(compiled)
    with np.errstate(all="ignore"):
        assert kernel(x[:29], y[:29]) is None  # the caller's whole-array code runs instead
        got, = kernel(x[:30], y[:30])
    np.testing.assert_allclose(got, _divided(x[:30], y[:30]), rtol=1e-12)
    np.testing.assert_allclose(compiled(x[:29], y[:29]), _divided(x[:29], y[:29]), rtol=1e-12)


def _summed_chain(size, dtype, method: bool) -> Graph:
    g = Graph()
    x = g.placeholder("x", TensorMeta((size,), dtype))
    y = g.placeholder("y", TensorMeta((size,), dtype))
    op = ops.lookup_operator
    d = g.call(op("sub"), (x, y))
    sq = g.call(op("mul"), (d, g.call(op("truediv"), (d, y))))
    total = g.call(ops.lookup_method("sum"), (sq,)) if method else \
        g.call(ops.lookup_function(np.sum), (sq,))
    g.output([total, d])
    return g


@pytest.mark.parametrize("errors", ["ignore", "raise", "warn"])
@pytest.mark.parametrize("size", [6, 7, 8, 15, 50])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("specials", [0, 2])
@pytest.mark.parametrize("method", [True, False])
def test_a_sum_ending_the_chain_is_folded_into_the_pass(tiny_blocks, errors, size, dtype,
                                                         specials, method):
    rng = np.random.default_rng(size + 100 * specials)
    inputs = [_special_values(rng, (size,), dtype, specials) for _ in range(2)]
    graph = _summed_chain(size, np.dtype(dtype), method)
    got, expected = _graph_reports(graph, inputs, errors, "_parts")
    if isinstance(expected, FloatingPointError):
        return
    (total, d), (expected_total, expected_d) = got, expected
    assert type(total) is type(expected_total) and total.dtype == expected_total.dtype
    np.testing.assert_array_equal(d, expected_d)
    # Summation order differs (pairwise per block, then over the blocks): rounding only.
    with np.errstate(all="ignore"):
        magnitude = np.abs(graphs.reference(graph, inputs)[1]).sum() or 1.0
        scale = float(np.nansum(np.abs(inputs[0] - inputs[1]) * np.abs((inputs[0] - inputs[1]) / inputs[1])))
    tolerance = (1e-5 if dtype == np.float32 else 1e-12) * max(scale, float(magnitude), 1.0)
    if np.isfinite(expected_total):
        assert abs(float(total) - float(expected_total)) <= tolerance
    else:
        assert np.isnan(total) == np.isnan(expected_total) and (np.isnan(total) or total == expected_total)


def test_error_modes_follow_every_change_of_the_error_state():
    from compiler.backends.region_kernel import error_modes
    old = np.seterr()
    try:
        for change in ({"all": "raise"}, {"over": "ignore"}, {"under": "warn"}, {"all": "ignore"}):
            np.seterr(**change)
            assert error_modes() == np.geterr()
            with np.errstate(divide="call" if change.get("all") == "ignore" else "raise"):
                assert error_modes() == np.geterr()
            assert error_modes() == np.geterr()
    finally:
        np.seterr(**old)
    assert error_modes() == np.geterr()


@pytest.mark.parametrize("use_numba", [True, False])
def test_config_use_numba_chooses_the_path(tiny_blocks, monkeypatch, use_numba):
    from compiler import config
    made = []
    monkeypatch.setattr(numba_kernels, "numba_available", lambda: True)
    monkeypatch.setattr(numba_kernels, "NumbaKernel", lambda *args: made.append(args))
    monkeypatch.setattr(config, "use_numba", use_numba)
    compiled = get_backend("numpy").compile(_chain((20,), np.dtype(np.float64)))
    assert "_k_group1(" in compiled.source and "def _blocked_group1" in compiled.source
    assert len(made) == (1 if use_numba else 0)


def test_the_environment_switches_numba_off():
    env = dict(os.environ, TRACEMATRIX_NO_NUMBA="1")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", "import compiler; print(compiler.config.use_numba)"],
                         env=env, cwd=root, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
