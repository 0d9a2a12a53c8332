"""Closures: factories, functions defined inside the traced frame, nonlocal, late binding, decorators."""
import functools

import numpy as np

from .registry import case


def make_affine(scale, shift):
    def affine_closure(x):
        return x * scale + shift
    return affine_closure


# The compiled frame itself has free variables.
case(calls=lambda a: [(a.f(4),), (a.f(2, 3),)], nodes=2, name="compiled_closure")(make_affine(2.0, -1.0))

_triple = make_affine(3.0, 0.0)


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=3)
def calls_closure_from_global(x):
    return _triple(x) + 1


@case(calls=lambda a: [(a.f(3, 3),), (a.f(2, 2),)], nodes=4)
def inner_function_captures_shape(x):
    k = x.shape[0]

    def scale(v):
        return v * k

    return scale(x) + scale(x.T)


@case(calls=lambda a: [(a.f(4),), (a.f(2, 2),)], nodes=2)
def nonlocal_counter(x):
    count = 0

    def bump(v):
        nonlocal count
        count += 1
        return v + count

    y = bump(x)
    y = bump(y)
    return y, count


@case(calls=lambda a: [(a.f(3), a.f(3)), (a.f(2, 2), a.f(2))], nodes=2)
def closure_over_array(x, y):
    def add_y(v):
        return v + y

    return add_y(x) * 2


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=3)
def lambdas_with_default_binding(x):
    fns = [lambda v, k=k: v * k for k in range(3)]
    return [fn(x) for fn in fns]


def _checked(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@_checked
def _residual(x, w):
    return x + x @ w


@case(calls=lambda a: [(a.f(2, 3), a.f(3, 3)), (a.f(4, 2), a.f(2, 2))], nodes=2)
def decorated_helper(x, w):
    return _residual(x, w=w)


def _make_pipeline(*fns):
    def run(x):
        for fn in fns:
            x = fn(x)
        return x
    return run


_pipeline = _make_pipeline(np.abs, np.sqrt, lambda v: v * 0.5)


@case(calls=lambda a: [(a.f(4),), (a.f(2, 3),)], nodes=3)
def closure_over_tuple_of_functions(x):
    return _pipeline(x)


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=1)
def late_binding(x):
    k = 1
    g = lambda v: v + k  # noqa: E731 - late binding through the cell is the point
    k = 2
    return g(x)


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def two_level_closure(x):
    base = 2.0

    def outer(v):
        offset = 1.0

        def inner(u):
            return u * base + offset

        return inner(v)

    return outer(x)
