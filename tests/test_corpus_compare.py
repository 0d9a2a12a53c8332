"""The corpus comparison is strict enough to catch what a wrong compiled result would look like."""
from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np
import pytest

from tests.corpus.compare import aliasing, assert_same
from tests.corpus.registry import Call
from tests.corpus.runner import assert_same_outcome, run

Pair = namedtuple("Pair", "a b")


@pytest.mark.parametrize("plain, compiled", [
    ([1, 2], (1, 2)),                                        # list vs tuple
    (np.float64(1.0), np.array(1.0)),                        # NumPy scalar vs 0-d array
    (np.zeros(3), np.zeros(3, dtype=np.float32)),            # dtype
    (np.zeros((2, 3)), np.zeros((3, 2))),                    # shape
    (np.zeros((2, 3)), np.asfortranarray(np.zeros((2, 3)))),  # layout
    (np.array([1.0, 2.0]), np.array([1.0, 2.0000001])),      # values, exactly
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}),                    # dict order
    (Pair(1, 2), (1, 2)),                                    # namedtuple vs tuple
    (OrderedDict(a=1), {"a": 1}),                            # OrderedDict vs dict
    (1.0, 1),                                                # float vs int
    ("3x4", "4x3"),
])
def test_differences_are_caught(plain, compiled):
    with pytest.raises(AssertionError):
        assert_same(plain, compiled)


def test_equal_structures_pass_and_nan_equals_nan():
    value = {"m": np.array([np.nan, 1.0]), "s": (np.float32(2), [None, "x"]), "p": Pair(np.arange(2), 3.5)}
    assert_same(value, {"m": np.array([np.nan, 1.0]), "s": (np.float32(2), [None, "x"]),
                        "p": Pair(np.arange(2), 3.5)})
    assert_same(float("nan"), float("nan"))


def test_close_allows_reassociation_only_when_declared():
    a, b = np.array([0.1 + 0.2]), np.array([0.3])
    with pytest.raises(AssertionError):
        assert_same(a, b)
    assert_same(a, b, close="sum order may differ")


def test_aliasing_sees_views_and_identity():
    x = np.arange(4.0)
    assert aliasing((x, x[1:], x + 1), (x,)) == [[True], [True], [False]]


def _prints(x):
    print("value", x.sum())
    return x


def _prints_differently(x):
    print("value", x.sum() + 1)
    return x


def _mutates(x, log):
    log.append(1)
    return x


def _does_not_mutate(x, log):
    return x


def _raises(x):
    raise ValueError(f"bad {x.shape}")


def _raises_other_message(x):
    raise ValueError("bad")


@pytest.mark.parametrize("plain, compiled", [
    (_prints, _prints_differently),
    (_mutates, _does_not_mutate),
    (_raises, _raises_other_message),
    (_raises, lambda x, *rest: x),
    (lambda x, *rest: x, lambda x, *rest: x.copy()),     # returns the input itself vs a copy
])
def test_outcome_differences_are_caught(plain, compiled):
    argc = plain.__code__.co_argcount
    call = Call((np.arange(3.0), [])[:argc])
    with pytest.raises(AssertionError):
        assert_same_outcome(run(plain, call), run(compiled, call), close=None, where="t")


def test_plain_and_deep_copied_arguments_are_independent():
    log = []
    call = Call((np.arange(3.0), log))
    outcome = run(_mutates, call)
    assert log == [] and outcome.arguments[0][1] == [1]
