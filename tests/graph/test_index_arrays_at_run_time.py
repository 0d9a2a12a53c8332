"""An index array computed in the graph is checked only when the graph runs.  When it is
out of range the compiled function must behave exactly like the plain one: NumPy's
IndexError, after the side effects that precede the indexing, and caught by the program's
own handlers (the compiled entry runs the plain function when such a graph raises)."""
from __future__ import annotations

import numpy as np
import pytest

import compiler


def _onehot_with_log(x, log):
    log.append("before")
    idx = (x * 10).astype(np.int64)
    return np.eye(3)[idx]


def _onehot_or_default(x):
    try:
        return np.eye(3)[(x * 10).astype(np.int64)]
    except IndexError:
        return np.zeros(3)


@pytest.fixture(autouse=True)
def _fresh_compiler():
    compiler.reset()
    yield
    compiler.reset()


def _traced(fn, *args):
    explanation = compiler.explain(fn, *args)
    if explanation.graph_count == 0:
        pytest.skip(f"this interpreter runs the frame natively: {explanation.break_reasons}")
    return explanation


@pytest.mark.parametrize("backend", ["eager", "numpy"])
def test_out_of_range_index_array_raises_after_the_same_side_effects(backend):
    _traced(_onehot_with_log, np.array([0.1, 0.2]), [])
    compiled = compiler.compile(_onehot_with_log, backend=backend)
    log = []
    assert np.array_equal(compiled(np.array([0.1, 0.2]), log), np.eye(3)[[1, 2]])
    assert log == ["before"]
    plain_log, compiled_log = [], []
    with pytest.raises(IndexError) as plain:
        _onehot_with_log(np.array([0.1, 0.5]), plain_log)
    with pytest.raises(IndexError) as got:
        compiled(np.array([0.1, 0.5]), compiled_log)
    assert str(got.value) == str(plain.value)
    assert compiled_log == plain_log == ["before"]


@pytest.mark.parametrize("backend", ["eager", "numpy"])
def test_out_of_range_index_array_reaches_the_programs_handler(backend):
    compiled = compiler.compile(_onehot_or_default, backend=backend)
    assert np.array_equal(compiled(np.array([0.1])), _onehot_or_default(np.array([0.1])))
    assert np.array_equal(compiled(np.array([0.9])), np.zeros(3))
    assert np.array_equal(compiled(np.array([0.2])), np.eye(3)[[2]])
