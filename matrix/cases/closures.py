"""Cells and free variables: LOAD_CLOSURE / LOAD_DEREF / STORE_DEREF, MAKE_CELL and
COPY_FREE_VARS (3.11+), MAKE_FUNCTION with a closure (qualname on the stack <=3.10,
SET_FUNCTION_ATTRIBUTE 3.13)."""
import numpy as np

from matrix.cases import case
from matrix.cases.inputs import arr, args


def _make_adder(amount):
    def add(x):
        return x + amount
    return add


_ADD_THREE = _make_adder(3.0)


@case("closures", args(arr(5)))
def closure_read(x):
    return _ADD_THREE(x)


@case("closures", args(arr(5)))
def closure_defined_inside(x):
    offset = 2.0

    def shift(v):
        return v + offset
    return shift(x) * 2.0


@case("closures", args(arr(5)))
def nonlocal_write(x):
    total = 0.0

    def bump(step):
        nonlocal total
        total = total + step
    bump(1.0)
    bump(2.5)
    return x * total


@case("closures", args(arr(4)))
def nested_closures(x):
    a = 1.0

    def outer(v):
        b = 2.0

        def inner(w):
            return w * a + b
        return inner(v)
    return outer(x)


@case("closures", args(arr(4)))
def closure_over_array(x):
    def times_x(v):
        return v * x
    return times_x(x + 1.0)


def _make_scaler_pair(k):
    def up(x):
        return x * k

    def down(x):
        return x / k
    return up, down


_UP, _DOWN = _make_scaler_pair(4.0)


@case("closures", args(arr(4)))
def shared_cell_functions(x):
    return _DOWN(_UP(x) + 1.0)


@case("closures", args(arr(3, 3)))
def closure_captures_numpy_module(x):
    lib = np

    def reduce(v):
        return lib.sum(v, axis=0)
    return reduce(x)
