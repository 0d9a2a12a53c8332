"""Sizes read into Python (compiler.variables.sizes): ``len(x)``, ``x.shape[i]``, ``x.size`` of a
dynamic dimension stay symbolic through arithmetic, as operands and in a reshape's target;
the uses that need the value specialize with a guard named for the use; every call equals
the plain function (value, type, exception, warnings)."""
from __future__ import annotations

from typing import Any, Callable, List

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
from tests.corpus.registry import Call
from tests.corpus.runner import assert_same_outcome, run

BACKENDS = ["eager", "numpy"]


def mean_by_length(x):
    n = x.shape[0]
    return (x * 2).sum() / n


def pairs_by_len(x):
    return x.reshape(len(x) // 2, 2).sum(0)


def _compiles(fn: Callable[..., Any]) -> list:
    return [e for e in compiler.events() if e.frame_name.rsplit(".", 1)[-1] == fn.__name__]


def _check(fn: Callable[..., Any], compiled: Callable[..., Any], arrays: List[np.ndarray]) -> None:
    for x in arrays:
        assert_same_outcome(run(fn, Call((x,))), run(compiled, Call((x,))), close=None,
                            where=f"{fn.__name__} shape {x.shape}")


# -- the examples: 20 lengths ---------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dynamic, most", [(None, 2), (True, 1)])
@pytest.mark.parametrize("fn", [mean_by_length, pairs_by_len], ids=lambda f: f.__name__)
def test_twenty_lengths_compile_at_most_twice(fn, dynamic, most, backend):
    compiler.reset()
    compiled = compiler.compile(fn, backend=backend, dynamic=dynamic)
    _check(fn, compiled, [np.arange(float(2 * n)) for n in range(2, 22)])
    compiles = _compiles(fn)
    assert len(compiles) == most and all(e.fallback_reason is None for e in compiles)
    assert not [g for e in compiles for g in e.guards if "specialized" in g]


def test_the_size_is_a_graph_input_read_from_the_array():
    compiler.reset()
    compiled = compiler.compile(mean_by_length, dynamic=True)
    compiled(np.ones(5))
    text = _compiles(mean_by_length)[0].graph_texts[0]
    assert "L_x_shape_0" in text and "operator.truediv" in text


def test_a_reshape_target_size_becomes_minus_one_under_a_guard():
    compiler.reset()
    compiled = compiler.compile(pairs_by_len, dynamic=True)
    compiled(np.ones(6))
    event = _compiles(pairs_by_len)[0]
    assert "ndarray.reshape(L_x, -1, 2)  # float64[s0 // 2, 2]" in event.graph_texts[0]
    assert "s0 % 2 == 0" in event.guards
    # An odd length fails that guard: a new entry, which raises NumPy's own error as plain does.
    _check(pairs_by_len, compiled, [np.ones(7), np.ones(8)])


# -- uses that need the value: specialized, the guard named for the use -------------------
LIST = list(range(40))


def _range_of_size(x):
    total = 0.0
    for i in range(len(x) // 3):
        total += float(i)
    return x * total


def _formatted(x):
    return f"{x.shape[0]} rows", x + 1.0


def _container_index(x):
    return LIST[len(x)], x + 1.0


def _numpy_size_argument(x):
    return np.zeros(x.shape[0]) + x


def _int_of_size(x):
    return int(x.size) * x


SPECIALIZING = [
    (_range_of_size, "s0 // 3 == 1 (specialized: range() of a size)"),
    (_formatted, "s0 == 5 (specialized: a size formatted into a string)"),
    (_container_index, "s0 == 5 (specialized: a size used as a Python int (_container_index, line"),
    (_numpy_size_argument, "s0 == 5 (specialized: numpy.zeros takes a size as an argument)"),
    (_int_of_size, "s0 == 5 (specialized: int() of a size)"),
]


@pytest.mark.parametrize("fn, guard", SPECIALIZING, ids=lambda v: getattr(v, "__name__", ""))
def test_a_use_that_needs_the_value_specializes_with_its_reason(fn, guard):
    compiler.reset()
    compiled = compiler.compile(fn, dynamic=True)
    _check(fn, compiled, [np.arange(5.0), np.arange(5.0), np.arange(6.0)])
    compiles = _compiles(fn)
    assert [g for g in compiles[0].guards if g.startswith(guard)], compiles[0].guards
    assert len(compiles) == 2  # 6 fails the specialization guard
    assert compiles[1].recompile_reason.startswith(guard)


def _branch(x):
    n = len(x)
    if n > 6:
        return x * 2
    return x - 1


def _truth(x):
    return x * 2 if x.shape[0] - 4 else x


@pytest.mark.parametrize("fn, relation", [(_branch, "s0 <= 6"), (_truth, "s0 != 4")],
                         ids=["compare", "truth"])
def test_a_branch_on_a_size_guards_the_relation_not_the_value(fn, relation):
    compiler.reset()
    compiled = compiler.compile(fn, dynamic=True)
    _check(fn, compiled, [np.arange(float(n)) for n in (2, 3, 5, 6, 4, 7, 9, 12, 4)])
    compiles = _compiles(fn)
    assert relation in compiles[0].guards
    assert len(compiles) <= 3  # one entry per side of the branch (and 4 == 4 for _truth)


def _identity(x):
    n = x.shape[0]
    return n is len(x), n is n, x + 1.0


def test_is_between_sizes_equals_plain_small_and_large():
    compiler.reset()
    compiled = compiler.compile(_identity, dynamic=True)
    _check(_identity, compiled, [np.ones(n) for n in (3, 300, 5, 1000)])


def _is_none(x):
    n = len(x)
    return x * 2.0 if n is not None and n is not True else x


def test_is_none_needs_no_value():
    compiler.reset()
    compiled = compiler.compile(_is_none, dynamic=True)
    _check(_is_none, compiled, [np.ones(n) for n in (3, 4, 300)])
    compiles = _compiles(_is_none)
    assert len(compiles) == 1 and compiles[0].graph_break_count == 0
    assert not [g for g in compiles[0].guards if "specialized" in g]


def _returned(x):
    n, m = x.shape
    return x.shape, x.size, len(x) * 3 - 1, n / 4, -m, n // m, n % 3, (n * m) // 2


def test_returned_sizes_are_ints_and_floats_as_plain():
    compiler.reset()
    compiled = compiler.compile(_returned, dynamic=True)
    arrays = [np.ones((n, m)) for n, m in ((3, 2), (5, 7), (4, 4), (9, 2))]
    _check(_returned, compiled, arrays)
    for x in arrays:
        assert [type(v) for v in compiled(x)] == [type(v) for v in _returned(x)]
    assert len(_compiles(_returned)) == 1


# -- property-based: compiled == plain over random lengths ------------------------------
def _scale_by_size(x):
    return x / x.size + len(x)


def _halves(x):
    n = len(x)
    return x.reshape(n // 2, 2).mean(axis=1) * n


def _thirds(x):
    return np.reshape(x, (x.shape[0] // 3, 3)).T.sum(0)


def _arithmetic(x):
    n = x.shape[0]
    k = (n * 3 - 1) // 2 + n % 4
    return x * k - n, -n, k


def _compare_and_branch(x):
    n = len(x)
    if n >= 5 and n != 7:
        return x[:2] * n
    return x * (n + 0.5)


PROPERTY_PROGRAMS = [mean_by_length, pairs_by_len, _scale_by_size, _halves, _thirds, _arithmetic,
                     _compare_and_branch, _range_of_size, _formatted, _identity, _is_none]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("fn", PROPERTY_PROGRAMS, ids=lambda f: f.__name__)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lengths=st.lists(st.integers(min_value=0, max_value=30), min_size=1, max_size=10))
def test_compiled_equals_plain_over_random_lengths(fn, dynamic, backend, lengths):
    compiler.reset()
    compiled = compiler.compile(fn, backend=backend, dynamic=dynamic)
    _check(fn, compiled, [np.arange(float(n)) for n in lengths])
