"""A with statement on an object that is not a context manager raises what the plain run raises
(AttributeError on 3.8-3.10, TypeError from 3.11; 3.14 looks the methods up with LOAD_SPECIAL)."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import compiler


class NotAManager:
    pass


class OnlyEnter:
    def __enter__(self):
        return 1


class Manager:
    def __init__(self):
        self.log = []

    def __enter__(self):
        self.log.append("enter")
        return 2.0

    def __exit__(self, *exc):
        self.log.append(exc[0].__name__ if exc[0] else "exit")
        return exc[0] is KeyError  # suppresses KeyError only


def guarded(x, manager, fail):
    try:
        with manager as value:
            if fail:
                raise KeyError("k")
            return x * value
    except AttributeError as err:
        return ("AttributeError", str(err))
    except TypeError as err:
        return ("TypeError", str(err))
    return x - 1.0


def _outcome(fn, *args):
    try:
        value = fn(*args)
    except Exception as err:  # compared below, never swallowed
        return ("raised", type(err).__name__, str(err))
    return ("value", value.tolist() if isinstance(value, np.ndarray) else value)


@pytest.mark.parametrize("make", [NotAManager, OnlyEnter, Manager, lambda: contextlib.nullcontext(3.0)],
                         ids=["not_a_manager", "only_enter", "manager", "nullcontext"])
@pytest.mark.parametrize("fail", [False, True])
def test_with_statement_outcome_matches_plain(make, fail):
    compiler.reset()
    compiled = compiler.compile(guarded)
    plain_manager, compiled_manager = make(), make()
    x = np.arange(3.0)
    assert _outcome(compiled, x, compiled_manager, fail) == _outcome(guarded, x, plain_manager, fail)
    assert getattr(compiled_manager, "log", None) == getattr(plain_manager, "log", None)
