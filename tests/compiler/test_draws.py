"""Draws from a numpy.random.Generator as graph ops (compiler.ops.draws): the inferred
metadata is NumPy's own (property test on random parameter shapes, dtypes and sizes, on
whichever NumPy line this interpreter has), and compiled programs that draw equal the
plain ones exactly: the values, the order of draws relative to each other and to Python
code, warnings, exceptions and the generators' states afterwards, on every backend (a
graph with draws runs eagerly under triton)."""
from __future__ import annotations

import io
import contextlib
import warnings
from typing import Any, Callable, List, Tuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
from compiler.exc import BackendUnavailable, Unsupported
from compiler.graph import TensorMeta
from compiler.ops import coverage, draws

BACKENDS = ("eager", "numpy", "triton")
METHODS = sorted(draws.PARAMETERS)


# -- the rule against NumPy ----------------------------------------------------------------

def _real_value(meta: TensorMeta, fill: Any) -> Any:
    """A valid value for a parameter, other than the stand-in's where the method allows
    (a metadata that changed with the values would show here)."""
    if isinstance(fill, float) and meta.dtype.kind == "f":
        fill = fill * 1.5
    return draws._stand_in(meta, fill)


@st.composite
def draw_calls(draw) -> Tuple[str, tuple, dict, tuple, dict]:
    name = draw(st.sampled_from(METHODS))
    base = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    args, metas = [], []
    for position, (param, fill) in enumerate(draws.PARAMETERS[name]):
        if param in ("size", "replace"):
            break
        if draw(st.booleans()) and param not in ("a", "x", "pvals", "mean", "cov", "alpha", "colors"):
            value = fill if isinstance(fill, (int, float)) else 1.0
            args.append(value)
            metas.append(value)
            continue
        # counts mostly as integers (NumPy refuses floats there), the rest of every kind
        dtypes = ["int64", "int32", "float64"] if isinstance(fill, int) else \
            ["float64", "float32", "int64", "int32", "bool"]
        dtype = np.dtype(draw(st.sampled_from(dtypes)))
        if name == "multivariate_normal":
            n = draw(st.integers(1, 3)) if param == "mean" else metas[0].shape[0]
            shape = (n,) if param == "mean" else (n, n)
        elif param in ("pvals", "alpha", "colors", "a", "x"):
            shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
        else:
            ndim = draw(st.integers(0, len(base)))
            shape = tuple(draw(st.sampled_from([d, 1])) for d in base[len(base) - ndim:])
        kind = "array" if shape or draw(st.booleans()) else "scalar"
        meta = TensorMeta(shape, dtype, kind)
        args.append(_real_value(meta, fill))
        metas.append(meta)
    kwargs: dict = {}
    if name not in ("permutation", "permuted") and draw(st.booleans()):
        kwargs["size"] = draw(st.sampled_from([None, 3, (2,) + base, base, (2, 1)]))
    if name in ("random", "standard_normal", "standard_exponential", "standard_gamma") and draw(st.booleans()):
        kwargs["dtype"] = draw(st.sampled_from([np.float32, np.float64, "float32"]))
    if name == "integers" and draw(st.booleans()):
        kwargs["dtype"] = draw(st.sampled_from([np.int8, np.uint16, np.int64, bool]))
        kwargs["endpoint"] = draw(st.booleans())
    if name == "multivariate_normal":
        kwargs["check_valid"] = draw(st.sampled_from(["warn", "ignore", "raise"]))
    return name, tuple(args), kwargs, tuple(metas), dict(kwargs)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(draw_calls())
def test_inferred_metadata_is_numpys(call):
    name, args, kwargs, metas, meta_kwargs = call
    op = draws.draw_op(name)
    try:
        inferred = op.infer(draws.generator_meta(), *metas, **meta_kwargs)
    except Unsupported:
        inferred = None
    rng = np.random.default_rng(7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            result = getattr(rng, name)(*args, **kwargs)
        except Exception:
            # NumPy refuses these arguments: so must the rule (else the graph would fail at
            # run time on every call, which is still exact, but the rule is wrong)
            assert inferred is None, (name, metas, meta_kwargs)
            return
    if inferred is None:
        # refused: a Python scalar result, or one of the documented refusals
        assert not isinstance(result, np.ndarray) or name == "multivariate_normal" or \
            any(isinstance(m, TensorMeta) and m.shape == () for m in metas[:1]), (name, metas, meta_kwargs)
        return
    assert isinstance(result, (np.ndarray, np.generic))
    assert result.shape == inferred.shape and result.dtype == inferred.dtype, (name, result, inferred)
    assert inferred.kind == ("array" if isinstance(result, np.ndarray) else "scalar")


def test_refusals_name_their_reason():
    g = draws.generator_meta()
    f64 = TensorMeta((3,), np.float64)
    cases = [
        (draws.draw_op("normal"), (g,), {}, "returns a float"),
        (draws.draw_op("random"), (g,), {"size": 3, "out": f64}, "out="),
        (draws.draw_op("normal"), (g, 0.0, 1.0), {"size": TensorMeta((), np.int64)}, "size"),
        (draws.draw_op("permutation"), (g, TensorMeta((), np.int64)), {}, "count"),
        (draws.draw_op("multivariate_normal"), (g, f64, TensorMeta((3, 3), np.float64)), {},
         "check_valid"),
    ]
    for op, args, kwargs, words in cases:
        with pytest.raises(Unsupported, match=words):
            op.infer(*args, **kwargs)


def test_coverage_of_generator_methods():
    found = coverage.numpy_coverage()["numpy.random.Generator"]
    assert found.percent >= 80
    assert set(found.missing) <= set(draws.DRAW_EXCLUDED)
    assert all(coverage.exclusion_reason("numpy.random.Generator", n) for n in found.missing)


# -- compiled programs against plain ones -----------------------------------------------------

def _outcome(fn: Callable, args: tuple, gens: List[Any]) -> tuple:
    """(result or exception, warnings, printed text, generator states, array arguments after)."""
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as seen, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        try:
            result: Any = ("returned", fn(*args))
        except Exception as error:
            result = ("raised", type(error), str(error))
    states = [g.bit_generator.state for g in gens]
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    return result, [(w.category, str(w.message)) for w in seen], out.getvalue(), states, arrays


def _same(a: Any, b: Any) -> None:
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert type(a) is type(b) and list(a) == list(b), (a, b)
        for key in a:
            _same(a[key], b[key])
    elif isinstance(a, (np.ndarray, np.generic)):
        assert type(a) is type(b) and a.dtype == b.dtype and np.shape(a) == np.shape(b), (a, b)
        np.testing.assert_allclose(a, b, rtol=1e-12, equal_nan=True)
    else:
        assert a == b, (a, b)


def check(fn: Callable, make_args: Callable[[], tuple], backend: str, calls: int = 3) -> None:
    """``fn`` compiled equals ``fn`` plain on ``calls`` calls with fresh arguments; the
    generators among the arguments end in the same states."""
    compiled = compiler.compile(fn, backend=backend)
    for _ in range(calls):
        plain_args, compiled_args = make_args(), make_args()
        plain_gens = [a for a in plain_args if isinstance(a, np.random.Generator)]
        compiled_gens = [a for a in compiled_args if isinstance(a, np.random.Generator)]
        got = _outcome(compiled, compiled_args, compiled_gens)
        if got[0][0] == "raised" and issubclass(got[0][1], BackendUnavailable):
            pytest.skip(f"a graph without draws needs the backend's device: {got[0][2]}")
        _same(_outcome(fn, plain_args, plain_gens), got)


def _rng(seed: int = 0, bit_generator: Callable = np.random.PCG64) -> np.random.Generator:
    return np.random.Generator(bit_generator(seed))


def passed_in(x, rng):
    y = x * 2.0
    z = rng.normal(0.0, 1.0, size=x.shape)
    u = rng.uniform(x, x + 1.0)
    k = rng.integers(0, 10, size=(2, 3))
    rng.standard_normal(4)              # unused: still drawn
    return y + z, u, k


def passed_twice(a, b):
    return a.normal(size=3) + b.normal(size=3), a.integers(5, size=2)


def created_inside(x):
    rng = np.random.default_rng(0)      # a graph break: the continuation draws in its graph
    return x + rng.normal(size=x.shape), rng.random(3)


def with_prints(x, rng):
    a = rng.normal(size=2)
    print("between", a.sum())           # a graph break between draws
    b = rng.normal(size=2) * x[:2]
    print("after")
    return a, b, rng.poisson(3.0, size=4)


def in_a_loop(x, rng):
    trace = []
    for _ in range(3):
        x = x * 0.5 + rng.standard_normal(x.shape)
        trace.append(float(x.sum()))
    return x, trace


def failing_graph(x, rng):
    a = rng.normal(size=x.shape)
    b = np.log(a + x)                   # invalid (warns) where a + x < 0: the graph fails
    c = rng.exponential(2.0, size=3)
    return b, c


def failing_under_try(x, rng):
    try:
        with np.errstate(all="raise"):
            a = rng.normal(size=x.shape)
            b = np.sqrt(a - x)
    except FloatingPointError as error:
        return "caught", str(error), rng.random(2)
    return b, rng.random(2)


def bad_parameter(x, rng):
    a = rng.normal(size=3)
    return a, rng.normal(0.0, x)        # a negative scale raises ValueError in the graph


def reads_state_between(x, rng):
    a = rng.normal(size=2)
    state = rng.bit_generator.state["state"]["state"]   # a break: the graph ran its draws
    return a, state, rng.normal(size=2)


def every_kind(x, rng):
    p = np.full(3, 1 / 3)
    return (rng.choice(x, size=2), rng.choice(3, size=4, p=p), rng.permutation(x),
            rng.permuted(np.stack([x, x]), axis=1), rng.multinomial(5, p, size=2),
            rng.dirichlet(np.ones(3)), rng.binomial(4, 0.3, size=3), rng.gamma(x + 1.0),
            rng.random(3, dtype=np.float32), rng.integers(0, 5, size=3, dtype=np.int8),
            rng.multivariate_normal(np.zeros(2), np.eye(2), size=2, check_valid="ignore"),
            rng.hypergeometric(3, 4, 2, size=3), rng.triangular(0.0, 0.5, 1.0, size=2))


def shuffles(x, rng):
    y = x * 2.0
    rng.shuffle(y)                      # a temporary of the graph
    rng.shuffle(x)                      # the caller's array: written in place, as plain
    return y, x.sum(), rng.normal(size=2), np.log(x)   # log fails on negatives: native rerun


def shuffles_a_list(x, rng):
    items = [1, 2, 3, 4]
    rng.shuffle(items)                  # a list: runs natively
    return items, x + rng.random(x.shape)


def legacy(x, state):
    a = np.random.normal(size=3)        # the global RandomState: runs natively
    b = state.normal(size=3) + x
    return a, b


class Holder:
    def __init__(self, rng):
        self.rng = rng


def attribute(x, holder):
    return x + holder.rng.normal(size=x.shape)


def gen_body(rng):
    def items():
        for _ in range(2):
            yield rng.normal(size=2)
    first = next(iter(items()))
    return first, rng.normal(size=2)


def one_d():
    return (np.linspace(-1.0, 1.0, 5),)


PROGRAMS = [
    (passed_in, lambda: (np.linspace(0.0, 1.0, 6), _rng(1))),
    (created_inside, one_d),
    (with_prints, lambda: (np.arange(4.0), _rng(2))),
    (in_a_loop, lambda: (np.ones(3), _rng(3))),
    (failing_graph, lambda: (np.linspace(-0.5, 0.5, 5), _rng(0))),
    (failing_under_try, lambda: (np.linspace(-0.5, 0.5, 5), _rng(0))),
    (bad_parameter, lambda: (np.array([1.0, -1.0]), _rng(4))),
    (reads_state_between, lambda: (np.ones(2), _rng(5))),
    (every_kind, lambda: (np.arange(3.0), _rng(6))),
    (every_kind, lambda: (np.arange(3.0), _rng(6, np.random.MT19937))),
    (every_kind, lambda: (np.arange(3.0), _rng(6, np.random.Philox))),
    (every_kind, lambda: (np.arange(3.0), _rng(6, np.random.SFC64))),
    (attribute, lambda: (np.ones(2), Holder(_rng(8)))),
    (shuffles, lambda: (np.arange(1.0, 9.0).reshape(4, 2), _rng(3))),
    (shuffles, lambda: (np.arange(-3.0, 5.0), _rng(3))),
    (shuffles_a_list, lambda: (np.ones(3), _rng(4))),
    (gen_body, lambda: (_rng(9),)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, make_args", PROGRAMS,
                         ids=[f"{p[0].__name__}-{i}" for i, p in enumerate(PROGRAMS)])
def test_compiled_draws_equal_plain(fn, make_args, backend):
    check(fn, make_args, backend)


def _legacy_run(fn: Callable) -> Any:
    np.random.seed(11)
    state = np.random.RandomState(3)
    try:
        result = [fn(np.ones(3), state) for _ in range(3)]
    except BackendUnavailable as error:
        pytest.skip(f"a graph without draws needs the backend's device: {error}")
    return result, np.random.get_state()[1].copy(), state.get_state()[1].copy()


@pytest.mark.parametrize("backend", BACKENDS)
def test_legacy_random_state_and_module_functions_equal_plain(backend):
    # np.random.* and RandomState methods are not captured: they run natively, in order
    _same(_legacy_run(legacy), _legacy_run(compiler.compile(legacy, backend=backend)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_generator_passed_twice(backend):
    def make():
        rng = _rng(10)
        return rng, rng
    check(passed_twice, make, backend)
    check(passed_twice, lambda: (_rng(10), _rng(11)), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_generator_shared_by_two_compiled_functions(backend):
    def first(x, rng):
        return x + rng.normal(size=x.shape)

    def second(x, rng):
        return x * rng.random(x.shape)

    f, g = compiler.compile(first, backend=backend), compiler.compile(second, backend=backend)
    plain_rng, compiled_rng = _rng(12), _rng(12)
    for _ in range(3):
        x = np.ones(4)
        _same((first(x, plain_rng), second(x, plain_rng)), (f(x, compiled_rng), g(x, compiled_rng)))
    assert plain_rng.bit_generator.state == compiled_rng.bit_generator.state


def test_draws_are_captured_in_the_graph():
    explained = compiler.explain(passed_in, np.ones(3), _rng(0))
    assert explained.graph_count == 1 and explained.graph_break_count == 0
    text = "\n".join(str(g) for g in explained.graphs)
    assert "L_rng: numpy.random.Generator" in text
    assert "Generator.normal(L_rng" in text and "Generator.standard_normal(L_rng, 4)" in text


def test_every_kind_of_draw_is_captured_in_one_graph():
    explained = compiler.explain(every_kind, np.arange(3.0), _rng(6))
    assert explained.graph_count == 1 and explained.graph_break_count == 0
    assert str(explained.graphs[0]).count("= Generator.") == 13


def test_a_failed_graph_restores_the_state_before_the_native_run():
    # seed 0: the first normal draw is negative, so log() fails inside the graph
    compiled = compiler.compile(failing_graph, backend="eager")
    plain_rng, compiled_rng = _rng(0), _rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(failing_graph(np.zeros(3), plain_rng), compiled(np.zeros(3), compiled_rng))
    assert plain_rng.bit_generator.state == compiled_rng.bit_generator.state


def test_foreign_bit_generator_runs_natively():
    class Counting(np.random.PCG64):
        reads = 0

    def f(rng):
        return rng.normal(size=2)

    compiled = compiler.compile(f, backend="eager")
    a, b = np.random.Generator(Counting(1)), np.random.Generator(Counting(1))
    _same(f(a), compiled(b))
    assert a.bit_generator.state == b.bit_generator.state
    graphs = compiler.explain(f, np.random.Generator(Counting(1))).graphs or []
    assert all("Generator.normal" not in str(g) for g in graphs)


@pytest.mark.parametrize("backend", ("eager", "numpy"))
def test_the_generator_is_not_kept_alive(backend):
    import gc
    import sys
    compiled = compiler.compile(passed_in, backend=backend)
    plain_rng, compiled_rng = _rng(1), _rng(1)
    for _ in range(2):
        passed_in(np.ones(3), plain_rng)
        compiled(np.ones(3), compiled_rng)
    gc.collect()
    assert sys.getrefcount(plain_rng) == sys.getrefcount(compiled_rng)
    assert sys.getrefcount(plain_rng.bit_generator) == sys.getrefcount(compiled_rng.bit_generator)
