"""The call protocol: CALL_FUNCTION / _KW / _EX and LOAD_METHOD + CALL_METHOD (<=3.10),
PUSH_NULL + PRECALL + CALL + KW_NAMES (3.11), CALL without PRECALL (3.12), CALL_KW (3.13)."""
import functools
import operator

import numpy as np

from matrix.cases import case
from matrix.cases.inputs import arr, args


def _scale(x, factor):
    return x * factor


def _affine(x, scale=2.0, *, shift=1.0):
    return x * scale + shift


def _total(*arrays):
    out = arrays[0]
    for a in arrays[1:]:
        out = out + a
    return out


def _weighted(x, **weights):
    return x * weights.get("w", 1.0) + weights.get("b", 0.0)


@case("calls", args(arr(6)))
def positional_call(x):
    return _scale(x, 3.0)


@case("calls", args(arr(6)))
def keyword_call(x):
    return _scale(x=x, factor=0.5) + _affine(x, shift=2.0)


@case("calls", args(arr(6)))
def defaults_and_keyword_only(x):
    return _affine(x), _affine(x, 3.0), _affine(x, scale=1.0, shift=-1.0)


@case("calls", args(arr(5)))
def star_args_call(x):
    parts = (x, x * 2.0, x * 3.0)
    return _total(*parts)


@case("calls", args(arr(5)))
def double_star_kwargs_call(x):
    weights = {"w": 2.0, "b": 0.5}
    return _weighted(x, **weights) + _weighted(x, w=3.0)


@case("calls", args(arr(5)))
def mixed_star_call(x):
    rest = (x,)
    extra = {"shift": 0.25}
    return _affine(*rest, 2.0, **extra)


class _Scaler:
    def __init__(self, factor):
        self.factor = factor

    def apply(self, x):
        return x * self.factor

    @staticmethod
    def double(x):
        return x * 2.0

    @classmethod
    def unit(cls, x):
        return x / cls.__name__.__len__()


_SCALER = _Scaler(4.0)


@case("calls", args(arr(6)))
def bound_method_call(x):
    return _SCALER.apply(x)


@case("calls", args(arr(6)))
def static_and_class_methods(x):
    return _Scaler.double(x) + _Scaler.unit(x)


class _Base:
    def transform(self, x):
        return x + 1.0


class _Derived(_Base):
    def transform(self, x):
        return super().transform(x) * 2.0


_DERIVED = _Derived()


@case("calls", args(arr(4)))
def super_method_call(x):
    return _DERIVED.transform(x)


_TRIPLE = functools.partial(_scale, factor=3.0)


@case("calls", args(arr(4)))
def partial_and_operator(x):
    return operator.add(_TRIPLE(x), operator.mul(x, 2.0))


@case("calls", args(arr(4)))
def lambda_call(x):
    square = lambda v: v * v  # noqa: E731
    return square(x) + (lambda v, w=1.0: v + w)(x)


def _power(x, n):
    if n == 0:
        return x * 0.0 + 1.0
    return x * _power(x, n - 1)


@case("calls", args(arr(4)))
def static_recursion(x):
    return _power(x, 3)


@case("calls", args(arr(4), [1, 2, 3]), args(arr(4), [1, 2]), recompiles=1)
def builtin_calls(x, items):
    n = len(items)
    return x * max(items) + min(items) + n, isinstance(x, np.ndarray), abs(-n), int(2.7), float(n)


@case("calls", args(arr(5)))
def two_double_star_dicts(x):
    first = {"w": 2.0}
    second = {"b": 1.0}
    return _weighted(x, **first, **second)
