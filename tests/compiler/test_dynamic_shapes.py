"""Dynamic shapes (compiler.symbolic_shapes): compile counts per ``dynamic`` option, symbols
in graphs and guards, and compiled == plain for many sizes (0, 1, 2 and broadcasting
included) through elementwise, broadcasting, reductions, indexing, reshape, concatenate and
sizes read into Python."""
from __future__ import annotations


import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
from tests.corpus.registry import Call
from tests.corpus.runner import assert_same_outcome, run

BACKENDS = ["eager", "numpy"]


def _scaled_sum(x, y):
    return np.sin(x) * 2.0 + y * y - 1.0, (x + y).sum()


def _compiles(fn_name: str) -> list:
    return [e for e in compiler.events() if e.frame_name.rsplit(".", 1)[-1] == fn_name
            and e.fallback_reason is None]


# -- compile counts --------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_twenty_lengths_compile_twice_by_default(backend):
    f = compiler.compile(_scaled_sum, backend=backend)
    for n in range(2, 22):
        x, y = np.arange(float(n)), np.ones(n)
        assert_same_outcome(run(_scaled_sum, Call((x, y))), run(f, Call((x, y))), close=None, where=f"n={n}")
    compiles = _compiles("_scaled_sum")
    assert len(compiles) == 2
    assert compiles[1].recompile_reason == "L['x'].shape == (2,)"
    assert "float64[s0]" in compiles[1].graph_texts[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_dynamic_true_compiles_once(backend):
    f = compiler.compile(_scaled_sum, backend=backend, dynamic=True)
    for n in range(2, 22):
        x, y = np.arange(float(n)), np.ones(n)
        assert_same_outcome(run(_scaled_sum, Call((x, y))), run(f, Call((x, y))), close=None, where=f"n={n}")
    compiles = _compiles("_scaled_sum")
    assert len(compiles) == 1
    guards = compiles[0].guards
    assert "L['x'].shape == (s0,) with s0 >= 2" in guards
    assert "s0 == s1" in guards  # x + y broadcasts only for equal lengths: a relation, not a value


def test_dynamic_false_compiles_per_size_up_to_the_cache_limit():
    f = compiler.compile(_scaled_sum, dynamic=False, cache_limit=5)
    for n in range(2, 22):
        x, y = np.arange(float(n)), np.ones(n)
        assert f(x, y)[1] == _scaled_sum(x, y)[1]
    assert len(_compiles("_scaled_sum")) == 5
    assert any("cache limit reached" in (e.fallback_reason or "") for e in compiler.events())


def test_sizes_zero_and_one_stay_specialized():
    f = compiler.compile(_scaled_sum, dynamic=True)
    for n in (5, 0, 1, 7, 0, 1, 3):
        x, y = np.arange(float(n)), np.ones(n)
        assert_same_outcome(run(_scaled_sum, Call((x, y))), run(f, Call((x, y))), close=None, where=f"n={n}")
    compiles = _compiles("_scaled_sum")
    assert len(compiles) == 3
    assert "L['x'].shape == (0,)" in compiles[1].guards
    assert "L['x'].shape == (1,)" in compiles[2].guards


def test_automatic_dynamic_marks_only_the_dimension_that_changed():
    def f(x):
        return x.sum(axis=1) * 2

    cf = compiler.compile(f)
    for n in (3, 4, 5, 6):
        x = np.ones((n, 4))
        assert_same_outcome(run(f, Call((x,))), run(cf, Call((x,))), close=None, where=f"n={n}")
    compiles = _compiles("f")
    assert len(compiles) == 2
    assert "L['x'].shape == (s0, 4) with s0 >= 2" in compiles[1].guards
    assert "graph(L_x: float64[s0, 4])" in compiles[1].graph_texts[0]
    # a change of the other dimension later makes it dynamic too (one more compile)
    for m in (5, 6, 7):
        x = np.ones((3, m))
        assert_same_outcome(run(f, Call((x,))), run(cf, Call((x,))), close=None, where=f"m={m}")
    assert len(_compiles("f")) == 3
    assert "L['x'].shape == (s0, s1) with s0 >= 2, s1 >= 2" in _compiles("f")[2].guards


def test_a_size_read_into_python_stays_symbolic_as_an_operand():
    # (tests/compiler/test_symbolic_sizes.py: the other uses of such a size)
    def f(x):
        return x * x.shape[0]

    cf = compiler.compile(f, dynamic=True)
    for n in (3, 3, 4, 5):
        x = np.arange(float(n))
        assert_same_outcome(run(f, Call((x,))), run(cf, Call((x,))), close=None, where=f"n={n}")
    compiles = _compiles("f")
    assert len(compiles) == 1
    assert "operator.mul(L_x, L_x_shape_0)" in compiles[0].graph_texts[0]
    assert not [g for g in compiles[0].guards if "specialized" in g]


def test_broadcasting_decisions_are_guards():
    def f(x, y):
        return x + y

    cf = compiler.compile(f, dynamic=True)
    calls = [(4, 4), (5, 5), (4, 1), (6, 1), (3, 5), (7, 7)]
    for n, m in calls:
        x, y = np.ones((n, 1)) * np.arange(n)[:, None], np.arange(float(m))
        assert_same_outcome(run(f, Call((x, y))), run(cf, Call((x, y))), close=None, where=f"{n},{m}")
    # (n, 1) + (m,) -> (n, m): no relation between n and m needed
    compiles = _compiles("f")
    assert "float64[s0, s1]" in compiles[0].graph_texts[0]
    assert len(compiles) == 2  # m == 1 is specialized


def test_native_entries_and_breaks_stay_correct_with_dynamic_sizes():
    def f(x):
        y = x * 2
        print(len(y))  # a graph break with a size read into Python
        return y[1:] + y[:-1]

    cf = compiler.compile(f)
    for n in (2, 3, 4, 5, 6, 9):
        x = np.arange(float(n))
        assert_same_outcome(run(f, Call((x,))), run(cf, Call((x,))), close=None, where=f"n={n}")


def test_graph_text_shows_symbolic_sizes_of_views_and_joins():
    def f(x, y):
        return x[1:] - x[:-1], np.concatenate([x, y]), x.reshape(-1, 2).T

    cf = compiler.compile(f, dynamic=True)
    x, y = np.arange(8.0), np.ones(3)
    assert_same_outcome(run(f, Call((x, y))), run(cf, Call((x, y))), close=None, where="n=8")
    text = _compiles("f")[0].graph_texts[0]
    assert "float64[s0 - 1]" in text and "float64[s0 + s1]" in text and "float64[2, s0 // 2]" in text
    assert "s0 % 2 == 0" in _compiles("f")[0].guards
    for n, m in ((10, 2), (6, 7), (7, 2), (12, 12)):
        x, y = np.arange(float(n)), np.ones(m)
        assert_same_outcome(run(f, Call((x, y))), run(cf, Call((x, y))), close=None, where=f"{n},{m}")


# -- differential: many sizes ------------------------------------------------------------
def _elementwise(x, y):
    return np.exp(x * 0.1) - y / 3.0


def _row_col(x, y):
    return x[:, None] * y[None, :] + 1.0


def _reductions(x):
    return x.sum(axis=0), x.mean(axis=1), x.max(), np.argmin(x, axis=0), x.std(ddof=1)


def _slicing(x):
    return x[1:] - x[:-1], x[::2], x[-1], x[2:-2:3], x[..., None]


def _reshape(x):
    return x.reshape(-1, 2).sum(axis=1), x.reshape(2, -1).T


def _views(x):
    m = x.reshape(2, -1)
    return (np.flip(m, axis=1), np.swapaxes(m, 0, 1)[::-1], np.expand_dims(m, (0, 2)).sum(axis=3),
            m[:, None].squeeze(), np.squeeze(m[None], axis=0), m.T.real)


def _joins(x, y):
    return np.concatenate([x, y, x]), np.stack([x, x]), np.hstack([y, x])


def _python_sizes(x):
    total = 0.0
    for i in range(len(x)):
        total += float(i)
    return x * total, x.size, x.shape


def _matmul(a, b):
    return a @ b, np.dot(a, b.T) if a.shape[1] == b.shape[1] else a


def _mixed(x, y):
    z = np.where(x > 2, x, y[: len(x)])
    return z.cumsum(), np.sort(z)[::-1], z.astype(np.float32).sum()


def _sizes():
    return st.integers(min_value=0, max_value=12)


PROGRAMS = {
    "elementwise": (_elementwise, lambda n, m: (np.arange(float(n)), np.linspace(0, 1, n))),
    "broadcast_mismatch": (_elementwise, lambda n, m: (np.arange(float(n)), np.ones(m))),
    "row_col": (_row_col, lambda n, m: (np.arange(float(n)), np.arange(float(m)))),
    "reductions": (_reductions, lambda n, m: (np.arange(float(n * m)).reshape(n, m) % 7,)),
    "slicing": (_slicing, lambda n, m: (np.arange(float(n)),)),
    "reshape": (_reshape, lambda n, m: (np.arange(float(2 * n)),)),
    "reshape_odd": (_reshape, lambda n, m: (np.arange(float(n)),)),
    "views": (_views, lambda n, m: (np.arange(float(2 * n)),)),
    "joins": (_joins, lambda n, m: (np.arange(float(n)), np.ones(n))),
    "joins_mismatch": (_joins, lambda n, m: (np.arange(float(n)), np.ones(m))),
    "python_sizes": (_python_sizes, lambda n, m: (np.arange(float(n)),)),
    "matmul": (_matmul, lambda n, m: (np.ones((n, 3)), np.ones((3, m)))),
    "mixed": (_mixed, lambda n, m: (np.arange(float(n)), np.arange(float(m)) * 0.5)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.tuples(_sizes(), _sizes()), min_size=1, max_size=8))
def test_compiled_equals_plain_over_many_sizes(name, dynamic, backend, sizes):
    fn, make = PROGRAMS[name]
    compiler.reset()
    cf = compiler.compile(fn, backend=backend, dynamic=dynamic)
    for n, m in sizes:
        plain = run(fn, Call(make(n, m)))
        compiled = run(cf, Call(make(n, m)))
        assert_same_outcome(plain, compiled, close=None, where=f"{name} n={n} m={m}")


def test_entry_dispatch_with_dynamic_entries_picks_a_matching_entry():
    # From 3 entries on the hit path is one dispatcher keyed on dtype and shape: an entry
    # with a dynamic shape has no shape key and must be found for every size.
    def f(x):
        return x * 2 + 1

    cf = compiler.compile(f)
    dtypes = [np.float64, np.float32, np.int64, np.int32]
    for dtype in dtypes:
        cf(np.arange(3, dtype=dtype))  # four static entries
    cf(np.arange(5.0))  # float64 again, another length: a dynamic entry (no shape key)
    assert len(cf._tracematrix_cache.hit_entries) == 1  # the dispatcher
    compiles = len(compiler.events())
    for n in (2, 3, 5, 9, 4):
        x = np.arange(float(n))
        assert_same_outcome(run(f, Call((x,))), run(cf, Call((x,))), close=None, where=f"float64 {n}")
    for dtype in dtypes[1:]:
        x = np.arange(3, dtype=dtype)
        assert_same_outcome(run(f, Call((x,))), run(cf, Call((x,))), close=None, where=f"{dtype} 3")
    assert len(compiler.events()) == compiles


def test_sizes_combined_with_floats_specialize():
    def f(x):
        return x.std(ddof=1.5), x.var(ddof=1)

    cf = compiler.compile(f, dynamic=True)
    for n in (2, 4, 6, 2, 3):
        x = np.arange(float(n))
        assert_same_outcome(run(f, Call((x,))), run(cf, Call((x,))), close=None, where=f"n={n}")


def test_triton_lowering_specializes_dynamic_sizes_with_a_guard():
    # Triton kernels, buffers and grids are sized when generated: a graph with symbols is
    # specialized (and the guard recorded) before lowering.  (No GPU needed to lower.)
    from compiler.backends.triton import TritonBackend

    def f(x):
        return np.sin(x) * 2.0 + 1.0

    cf = compiler.compile(f, dynamic=True)
    cf(np.arange(5.0))
    graph = cf._tracematrix_cache.cache_entries[0].graph
    symbol = graph.placeholders[0].meta.shape[0]
    assert "float64[s0]" in str(graph)
    program = TritonBackend().lower(graph)
    assert "float64[5]" in str(graph) and "s0" not in str(graph)
    assert all(isinstance(d, int) for spec in program.buffers.values() for d in spec.shape)
    assert any(g.name.startswith("s0 == 5 (specialized: the triton backend")
               for g in symbol.env.guards.guards)


def test_the_recompiles_log_says_which_dimensions_became_dynamic(caplog):
    def f(x):
        return x + 1.0

    cf = compiler.compile(f)
    with caplog.at_level("INFO", logger="tracematrix.recompiles"):
        cf(np.ones((3, 4)))
        cf(np.ones((5, 4)))
    assert "L['x'] was (3, 4), now (5, 4); dimensions [0] are dynamic from now on" in caplog.text
