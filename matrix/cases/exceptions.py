"""Exceptions and `with`: the block stack (SETUP_FINALLY / POP_BLOCK, BEGIN_FINALLY /
END_FINALLY 3.8, JUMP_IF_NOT_EXC_MATCH 3.9-3.10, SETUP_WITH / WITH_CLEANUP 3.8) versus
the exception table (PUSH_EXC_INFO, CHECK_EXC_MATCH, BEFORE_WITH 3.11+), RERAISE,
LOAD_ASSERTION_ERROR."""
import contextlib

from matrix.cases import case
from matrix.cases.inputs import arr, args


class _Tracker:
    def __init__(self):
        self.entered = 0

    def __enter__(self):
        self.entered += 1
        return self

    def __exit__(self, *exc):
        return False


@case("exceptions", args(arr(4)))
def try_except_caught_raise(x):
    try:
        raise ValueError("planned")
    except ValueError:
        y = x * 2.0
    return y


@case("exceptions", args(arr(4)))
def try_finally(x):
    y = x
    try:
        y = y + 1.0
    finally:
        y = y * 3.0
    return y


@case("exceptions", args(arr(4)))
def try_except_else(x):
    try:
        y = x + 1.0
    except (TypeError, KeyError):
        y = x
    else:
        y = y * 2.0
    return y


@case("exceptions", args(arr(4)))
def except_as_binding(x):
    try:
        {}["missing"]
    except KeyError as err:
        n = len(err.args)
    return x * n


@case("exceptions", args(arr(4)))
def with_user_context_manager(x):
    tracker = _Tracker()
    with tracker as t:
        y = x * 2.0
    return y + t.entered


@case("exceptions", args(arr(4)))
def with_nullcontext(x):
    with contextlib.nullcontext(3.0) as k:
        y = x * k
    return y


@case("exceptions", args(arr(4)))
def assert_statement(x):
    assert x.ndim == 1, "expects a vector"
    return x + 1.0


@case("exceptions", args(arr(4)))
def nested_try_in_with(x):
    tracker = _Tracker()
    with tracker:
        try:
            y = x - 1.0
        finally:
            y = y * 2.0
    return y


@case("exceptions", args(arr(4)))
def return_from_except_handler(x):
    try:
        raise KeyError("k")
    except KeyError as err:
        return x * len(err.args)
    return x


@case("exceptions", args(arr(4)))
def return_inside_try_finally(x):
    try:
        return x * 2.0
    finally:
        x = None


@case("exceptions", args(arr(4)))
def return_inside_with(x):
    with _Tracker():
        return x + 1.0


@case("exceptions", args(arr(4)))
def break_inside_try_finally(x):
    out = x
    for i in range(3):
        try:
            if i == 1:
                break
            out = out + 1.0
        finally:
            out = out * 2.0
    return out
