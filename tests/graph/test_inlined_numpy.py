"""NumPy functions the tracer inlines through their own source (compiler.ops.catalog.INLINED:
np.fromfunction, np.apply_over_axes) run compiled exactly as plain, and are captured; an
argument that overrides NumPy's dispatch (__array_function__) makes the call run natively.
Also np.asarray of an array (the array itself) and np.array of a Python number."""
from __future__ import annotations

import numpy as np
import pytest

import compiler
from tests.corpus.compare import assert_same

BACKENDS = ("eager", "numpy")


def from_function(x):
    return np.fromfunction(lambda i, j: i * x[0] + j, (3, 4), dtype=float) + 1.0


def from_function_int(x):
    return np.fromfunction(lambda i: i * 2, (4,), dtype=int), x


def over_axes_sum(x):
    return np.apply_over_axes(np.sum, x, [0, 2]) * 2


def over_axes_lambda(x):
    return np.apply_over_axes(lambda a, axis: a.max(axis=axis, keepdims=True), x, -1)


def over_axes_wrong_shape(x):
    try:
        return np.apply_over_axes(lambda a, axis: a.ravel(), x, 0)
    except ValueError as error:
        return str(error)


def over_axes_list(x):
    try:
        return np.apply_over_axes(np.sum, [[1.0, 2.0]], 0)   # a list has no .ndim
    except AttributeError as error:
        return str(error)


def asarray_identity(x):
    y = np.asarray(x)
    return y is x, y * 2, np.array(3.0) + x, np.array(2, dtype=np.int8)


PROGRAMS = [from_function, from_function_int, over_axes_sum, over_axes_lambda,
            over_axes_wrong_shape, over_axes_list, asarray_identity]
CAPTURED = [from_function, from_function_int, over_axes_sum, over_axes_lambda, asarray_identity]


def _argument():
    return np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_inlined_numpy_functions_compiled_match_plain(fn, backend):
    compiled = compiler.compile(fn, backend=backend)
    for _ in range(2):
        assert_same(fn(_argument()), compiled(_argument()))


@pytest.mark.parametrize("fn", CAPTURED, ids=[p.__name__ for p in CAPTURED])
def test_inlined_numpy_functions_are_captured(fn):
    explained = compiler.explain(fn, _argument())
    assert explained.graph_count == 1 and explained.graph_break_count == 0, explained.break_reasons


class Overrides:
    """An object that takes over NumPy's dispatch: np.apply_over_axes must reach it."""

    def __array_function__(self, func, types, args, kwargs):
        return ("dispatched", func.__name__)


def over_axes_dispatched(x, other):
    return np.apply_over_axes(np.sum, other, 0), x + 1


def test_an_override_of_the_dispatch_runs_natively():
    compiled = compiler.compile(over_axes_dispatched, backend="eager")
    assert compiled(np.ones(2), Overrides())[0] == ("dispatched", "apply_over_axes")
    explained = compiler.explain(over_axes_dispatched, np.ones(2), Overrides())
    assert any("__array_function__" in reason for reason in explained.break_reasons)
