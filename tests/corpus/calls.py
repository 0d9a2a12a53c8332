"""Calls: inlined user functions (defaults, keyword-only, *args/**kwargs, recursion), lambdas, bound methods,
functools.partial, operator, math on constants and builtins."""
import functools
import math
import operator

import numpy as np

from .registry import case


def _center(x):
    return x - x.mean()


@case(calls=lambda a: [(a.f(5),), (a.f(2, 3),)], nodes=4)
def inlined_helper(x):
    return _center(x) / x.std()


def _scale(x, factor=2.0, shift=0.0):
    return x * factor + shift


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2, dtype=np.float32),)], nodes=4)
def default_arguments(x):
    return _scale(x), _scale(x, shift=1.0)


def _normalize(x, *, axis=-1, eps=1e-6):
    return x / (np.linalg.norm(x, axis=axis, keepdims=True) + eps)


@case(calls=lambda a: [(a.f(3, 4),), (a.f(2, 2),)], nodes=6)
def keyword_only_arguments(x):
    return _normalize(x, axis=0), _normalize(x)


def _sum_all(*arrays):
    total = arrays[0]
    for arr in arrays[1:]:
        total = total + arr
    return total


@case(calls=lambda a: [(a.f(3), a.f(3), a.f(3)), (a.f(2, 2), a.f(2), a.f(1))], nodes=2)
def varargs_callee(x, y, z):
    return _sum_all(x, y, z)


def _apply(x, **opts):
    if opts.get("square"):
        x = x * x
    if "offset" in opts:
        x = x + opts["offset"]
    return x


@case(calls=lambda a: [(a.f(4),), (a.i(2, 2),)], nodes=3)
def kwargs_callee(x):
    return _apply(x, square=True, offset=1.0), _apply(x, offset=2)


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def call_with_star_and_double_star(x):
    args = (x, 3.0)
    kwargs = {"shift": 1.0}
    return _scale(*args, **kwargs)


def _tree_sum(x):
    if x.shape[0] == 1:
        return x[0]
    half = x.shape[0] // 2
    return _tree_sum(x[:half]) + _tree_sum(x[half:])


@case(calls=lambda a: [(a.f(4),), (a.f(2),), (a.f(4, 3),)], nodes=[13, 5, 13])
def recursion_with_static_depth(x):
    return _tree_sum(x)


@case(calls=lambda a: [(a.f(4),), (a.f(2, 3),)], nodes=4)
def lambda_activation(x):
    act = lambda v: np.maximum(v, 0.0)  # noqa: E731 - the lambda is what this case traces
    return act(x) + act(-x)


_scale_by_three = functools.partial(_scale, factor=3.0)
_clip_unit = functools.partial(np.clip, a_min=0.0, a_max=1.0)


@case(calls=lambda a: [(a.f(5),), (a.f(2, 2),)], nodes=3)
def functools_partial(x):
    return _scale_by_three(x), _clip_unit(x)


@case(calls=lambda a: [(a.f(3, 2), a.f(3, 2)), (a.f(2, 2), a.f(2, 2))], nodes=4)
def operator_module(x, y):
    return operator.add(x, y), operator.mul(x, 2), operator.neg(x), operator.getitem(x, 0)


@case(calls=lambda a: [(a.f(3), a.f(3), a.f(3)), (a.f(2, 2), a.f(2, 2), a.f(2, 2))], nodes=2)
def reduce_with_operator(x, y, z):
    return functools.reduce(operator.add, [x, y, z])


@case(calls=lambda a: [(a.f(2, 4),), (a.f(3, 9),)], nodes=2)
def math_on_constants(x):
    scale = math.sqrt(x.shape[-1])
    return x / scale + math.pi * math.log(2)


@case(calls=lambda a: [(a.f(5, 2),), (a.f(2, 3),)], nodes=3)
def builtins_on_static_values(x):
    n = len(x)
    m = max(x.shape)
    k = min(3, n)
    s = abs(-2)
    i = int(2.7)
    f = float(n)
    return x[:k] * (s + i + f) + sum((1, 2, 3)) / m


class _Standardizer:
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def transform(self, x):
        return (x - self.mean) / self.std

    def inverse(self, z):
        return z * self.std + self.mean

    def roundtrip(self, x):
        return self.inverse(self.transform(x))


@case(calls=lambda a: [(a.f(4, 3), _Standardizer(a.f(3), a.pos(3))), (a.f(2, 2), _Standardizer(a.f(2), a.pos(2)))],
      nodes=4)
def bound_method_calls(x, scaler):
    return scaler.roundtrip(x)


class _Scaler:
    gain = 2.0

    @property
    def scale(self):
        return self.gain * 2

    @staticmethod
    def shift(v):
        return v + 1

    @classmethod
    def make(cls):
        return cls()


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def property_staticmethod_classmethod(x):
    s = _Scaler.make()
    return _Scaler.shift(x * s.scale)


@case(calls=lambda a: [([a.f(3), a.f(3)],), (a.f(2, 3),), ((a.f(2), a.f(2)),)], nodes=1)
def isinstance_dispatch(v):
    if isinstance(v, (list, tuple)):
        return np.stack(v)
    return v * 1


def _moments(x):
    return x.mean(axis=0), x.var(axis=0)


@case(calls=lambda a: [(a.f(5, 2),), (a.f(3, 3),)], nodes=4)
def unpack_callee_results(x):
    mu, var = _moments(x)
    return (x - mu) / var


@case(calls=lambda a: [(a.f(3), np.tanh), (a.f(3), np.sin), (a.f(2, 2), np.tanh)], nodes=2)
def function_as_argument(x, fn):
    return fn(x) * 2


def _head(x, n=2):
    return x[:n]


@case(calls=lambda a: [(a.f(5),), (a.f(3, 2),)], nodes=3)
def keyword_arguments_at_call_site(x):
    return _head(x, n=1), _head(n=3, x=x), _head(x)
