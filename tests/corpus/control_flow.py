"""if/elif/else, ternaries, boolean short-circuits, assert, ``is None`` on static values."""
import numpy as np

from .registry import case, kw


@case(calls=lambda a: [(a.f(4),), (a.f(2, 3),), (a.f(2, 2, 2),), (a.f(5),)], nodes=1)
def branch_on_ndim(x):
    if x.ndim == 1:
        return x * 2
    elif x.ndim == 2:
        return x.sum(axis=1)
    else:
        return x.reshape(-1)


@case(calls=lambda a: [(a.f(3, 5),), (a.f(5, 3),), (a.f(2, 4),)], nodes=[3, 2, 3])
def ternary_transpose(x):
    y = x.T if x.shape[0] < x.shape[1] else x
    return y @ y.T


@case(calls=lambda a: [(a.f(3, 4),), (a.f(3, 1),), (a.f(5),)], nodes=[1, 1, 1])
def short_circuit_conditions(x):
    if x.ndim == 2 and x.shape[1] > 2 or x.size == 0:
        return x[:, :2]
    if x.ndim == 1 or x.shape[1] == 1:
        return x.ravel()
    return x


@case(calls=lambda a: [(a.f(3, 2),), (a.f(4, 4),), (a.f(3),)], nodes=1, raises=[2])
def assert_matrix(x):
    assert x.ndim == 2, "expected a matrix"
    return x.sum(0)


@case(calls=lambda a: [(a.f(4),), kw(a.f(4), bias=a.f(4)), (a.f(2, 2), None), kw(a.f(2, 2), bias=a.f(2))],
      nodes=[1, 2, 1, 2])
def optional_bias(x, bias=None):
    y = x * 2
    if bias is not None:
        y = y + bias
    return y


@case(calls=lambda a: [kw(a.f(5), mode="l1"), kw(a.f(5), mode="abs"), kw(a.f(5), mode="l2"), kw(a.f(2, 2), mode="l2")],
      nodes=[2, 2, 3, 3])
def mode_membership(x, mode):
    if mode in ("l1", "abs"):
        return np.abs(x).sum()
    return np.sqrt((x * x).sum())


@case(calls=lambda a: [(a.f(8, dtype=np.float32),), (a.f(4),), (a.f(8),)], nodes=[9, 6, 9])
def halving_while_loop(x):
    n = x.shape[0]
    while n > 1:
        h = n // 2
        x = x[:h] + x[h:2 * h]
        n = h
    return x


@case(calls=lambda a: [(a.i(4),), (a.f(4),), (a.i(2, 2, dtype=np.int32),)], nodes=[2, 1, 2])
def dtype_kind_dispatch(x):
    if x.dtype.kind in "iu":
        x = x.astype(np.float64)
    return x / 2


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),), (a.f(2, 2, 2),)], nodes=[1, 1, 2])
def chained_comparison(x):
    if 0 < x.ndim <= 2:
        return x * 3
    return x.reshape(x.shape[0], -1) * 3


@case(calls=lambda a: [(a.f(3, 3),), (a.f(2, 3),)], nodes=[1, 3])
def not_and_negation(x):
    square = x.shape[0] == x.shape[1]
    if not square:
        x = x @ x.T
    return x.trace()


@case(calls=lambda a: [(a.f(6),), (a.f(2),), (a.f(3, 3),)], nodes=[3, 1, 3])
def or_default_and_conditional_expr(x, scale=None):
    scale = scale or (1.0 if x.size < 4 else 0.5)
    y = x * scale
    return y if x.size < 4 else y - y.mean()
