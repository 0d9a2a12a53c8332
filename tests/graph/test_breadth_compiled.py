"""The generic families of the allowlist (compiler.ops.catalog, queries, inplace,
ufunc_methods, np.empty) run compiled exactly as plain: for generated arguments (shapes
with 0 and 1 sizes, bool / int / float / complex dtypes), on the eager and numpy backends,
the compiled call returns the same types, dtypes, shapes and values (NaN equal to NaN),
leaves the arguments it writes in the same state, issues the same warnings and raises
the same exceptions.  Where the op's inference accepts the arguments, the call must be
captured (fullgraph=True); every op must be captured on some example."""
from __future__ import annotations

import copy
import os
import warnings
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

import compiler
import compiler.ops as ops
from compiler.exc import Unsupported
from compiler.ops.ufunc_methods import method_op
from tests.corpus.compare import assert_same
from tests.graph.breadth_cases import BREADTH, UFUNC_METHOD_BUILDERS
from tests.graph.test_ops_infer import _to_meta

EXAMPLES = int(os.environ.get("GRAPH_EXAMPLES", "6"))
BACKENDS = ("eager", "numpy")
BREADTH_OPS = [op for op in ops.all_ops() if op.name in BREADTH]
# Their contents are uninitialised memory: only type, dtype and shape are compared.
UNINITIALISED = ("numpy.empty", "numpy.empty_like")


def numpy_callable(name: str) -> Callable:
    value: Any = np
    for part in name.split(".")[1:]:
        value = getattr(value, part)
    return value


def caller(fn: Callable, kwargs: dict) -> Callable:
    def call(*args):
        return fn(*args, **kwargs)
    return call


def outcome(fn: Callable, args: tuple) -> tuple:
    """(result or exception, the arguments after the call, warnings issued)."""
    args = copy.deepcopy(args)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            result: Any = ("returned", fn(*args))
        except Exception as error:  # the program's own exception is part of its behaviour
            result = ("raised", type(error), str(error))
    return result, args, [(w.category, str(w.message)) for w in seen]


def assert_same_outcome(plain: tuple, compiled: tuple, uninitialised: bool) -> None:
    (p_result, p_args, p_warnings), (c_result, c_args, c_warnings) = plain, compiled
    assert c_warnings == p_warnings
    assert c_result[0] == p_result[0], (c_result, p_result)
    if p_result[0] == "raised":
        assert c_result == p_result
        return
    if uninitialised:
        assert type(c_result[1]) is type(p_result[1])
        assert (c_result[1].dtype, c_result[1].shape) == (p_result[1].dtype, p_result[1].shape)
    else:
        with np.errstate(all="ignore"):
            assert_same(p_result[1], c_result[1])
    with np.errstate(all="ignore"):
        assert_same(p_args, c_args, path="arguments after the call")


def infers(op, args: tuple, kwargs: dict) -> bool:
    try:
        op.infer(*_to_meta(args), **{k: _to_meta(v) for k, v in kwargs.items()})
    except Unsupported:
        return False
    return True


def check_compiled_call(op, fn: Callable, args: tuple, kwargs: dict, backend: str) -> None:
    """Compiled (twice: the trace, then the cache entry) against plain; captured in one
    graph whenever the op's inference accepts the arguments."""
    compiler.reset()
    call = caller(fn, kwargs)
    plain = outcome(call, args)
    fullgraph = infers(op, args, kwargs)
    compiled = compiler.compile(call, backend=backend, fullgraph=fullgraph)
    for _ in range(2):
        assert_same_outcome(plain, outcome(compiled, args), op.name in UNINITIALISED)
    internal = [e.internal_error for e in compiler.events() if getattr(e, "internal_error", None)]
    assert not internal, internal[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", BREADTH_OPS, ids=[op.name for op in BREADTH_OPS])
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_compiled_matches_plain(op, backend, data):
    args, kwargs = BREADTH[op.name](data.draw)
    check_compiled_call(op, numpy_callable(op.name), args, kwargs, backend)


def _example_that_infers(op, builder) -> tuple:
    strategy = st.composite(lambda draw: builder(draw))()
    return find(strategy, lambda example: infers(op, *example),
                settings=settings(max_examples=300, database=None, deadline=None,
                                  suppress_health_check=list(HealthCheck)))


@pytest.mark.parametrize("op", BREADTH_OPS, ids=[op.name for op in BREADTH_OPS])
def test_every_op_is_captured_on_some_example(op):
    args, kwargs = _example_that_infers(op, BREADTH[op.name])
    for backend in BACKENDS:
        check_compiled_call(op, numpy_callable(op.name), args, kwargs, backend)


UFUNCS = ("add", "subtract", "multiply", "maximum", "logical_and", "arctan2", "bitwise_or",
          "negative", "divide")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", sorted(UFUNC_METHOD_BUILDERS))
@pytest.mark.parametrize("ufunc", UFUNCS)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_ufunc_methods_compiled_match_plain(ufunc, method, backend, data):
    universal = getattr(np, ufunc)
    args, kwargs = UFUNC_METHOD_BUILDERS[method](data.draw)
    if universal.nin == 1 and method == "at":
        args = args[:2]
    op = method_op(universal, method)

    def call(*a):
        return getattr(universal, method)(*a, **kwargs)
    compiler.reset()
    plain = outcome(call, args)
    compiled = compiler.compile(call, backend=backend, fullgraph=infers(op, args, kwargs))
    for _ in range(2):
        assert_same_outcome(plain, outcome(compiled, args), False)


def test_add_at_on_an_input_writes_the_callers_array_once():
    def accumulate(counts, idx):
        np.add.at(counts, idx, 1)
        return counts.sum()
    compiled = compiler.compile(accumulate, fullgraph=True)
    counts = np.zeros(3, np.int64)
    assert compiled(counts, np.array([0, 0, 2])) == 3
    assert compiled(counts, np.array([1])) == 4
    assert counts.tolist() == [2, 1, 1]


def test_add_at_out_of_range_raises_like_plain_and_leaves_the_input_unchanged():
    def accumulate(counts, idx):
        np.add.at(counts, idx, 1)
        return counts
    compiled = compiler.compile(accumulate)
    counts = np.zeros(3, np.int64)
    with pytest.raises(IndexError):
        compiled(counts, np.array([0, 5]))
    assert counts.tolist() == [0, 0, 0]  # NumPy checks every index before writing


def test_singular_matrix_raises_linalgerror_like_plain():
    def invert(a):
        return np.linalg.inv(a) * 2
    compiled = compiler.compile(invert, fullgraph=True)
    assert_same(invert(np.eye(2) * 2), compiled(np.eye(2) * 2))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        compiled(np.zeros((2, 2)))


def test_empty_is_called_at_run_time_and_returns_a_fresh_array_per_call():
    def make(n):
        return np.empty((n, 2))
    compiled = compiler.compile(make, fullgraph=True)
    first, second = compiled(3), compiled(3)
    assert first is not second and not np.shares_memory(first, second)
    assert (first.shape, first.dtype) == ((3, 2), np.float64)


def test_data_dependent_shapes_are_refused_with_a_reason():
    from compiler.graph import TensorMeta
    condition = TensorMeta((3,), np.bool_)
    with pytest.raises(Unsupported, match="data-dependent"):
        ops.lookup_function(np.compress).infer(condition, TensorMeta((3,), np.float64))
    with pytest.raises(Unsupported, match="data-dependent"):
        ops.lookup_function(np.histogram).infer(TensorMeta((5,), np.float64), "auto")
    for fn in (np.unique, np.nonzero, np.flatnonzero, np.argwhere, np.bincount, np.extract,
               np.trim_zeros, np.linalg.eig, np.linalg.lstsq, np.real_if_close):
        assert ops.lookup_function(fn) is None, fn


def test_sequence_results_keep_their_type():
    def parts(x):
        return np.split(x, 2), np.meshgrid(x, x), np.linalg.eigh(np.eye(2) + x[:2, None] * 0)
    x = np.arange(4.0)
    compiled = compiler.compile(parts, fullgraph=True)
    assert_same(parts(x), compiled(x))


def test_triton_runs_graphs_with_new_ops_through_eager_and_names_the_op():
    # Triton lowers elementwise / reduction regions only; a graph with another op runs
    # whole through the eager backend, with the op named in the fallback reason.
    from compiler.backends import get_backend
    from compiler.graph import Graph, TensorMeta
    graph = Graph()
    x = graph.placeholder("x", TensorMeta((3, 3), np.float64))
    inverse = graph.call(ops.lookup_function(np.linalg.inv), (x,))
    spectrum = graph.call(ops.lookup_function(np.fft.rfft), (inverse,))
    graph.output([spectrum])
    compiled = get_backend("triton").compile(graph)
    assert compiled.backend == "eager" and "numpy.linalg.inv" in compiled.fallback_reason
    value = np.eye(3) * 2
    assert_same((np.fft.rfft(np.linalg.inv(value)),), compiled(value))


@pytest.mark.parametrize("make_alias", [
    lambda x: np.meshgrid(x, x, sparse=True, copy=False)[0],
    lambda x: np.linalg.matrix_power(x.reshape(2, 2), 1),
    lambda x: np.require(x),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_write_into_a_result_that_may_alias_an_argument_behaves_as_plain(make_alias, backend):
    # results that can be views of (or be) an argument are not treated as private
    # temporaries (their kinds say so in compiler.ops.catalog): the write reaches the
    # argument, and what is computed from the argument afterwards sees it, as plainly
    def write(x):
        y = make_alias(x)
        y[..., 0] = 7.0
        return x * 1, x
    x = np.arange(4.0)
    assert_same(write(x.copy()), compiler.compile(write, backend=backend)(x.copy()))
