"""Less common statements and displays written directly in the compiled frame (so its own opcodes are traced):
``del``, star-unpacking displays and calls, dict merges, augmented assignment on attributes and items, in-place
bitwise on temporaries, a failing assert caught, raise through ``finally``, suppressing ``with``,
``and``/``or`` as values, functions with keyword defaults and annotations defined in the frame, ``super()``."""
import contextlib

import numpy as np

from .registry import case


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def delete_local_and_items(x):
    tmp = x * 2
    d = {"a": tmp, "b": 1}
    del d["b"]
    out = d["a"] + 1
    del tmp
    return out, list(d)


def _combine(*arrays, **weights):
    total = 0
    for arr in arrays:
        total = total + arr * weights.get("scale", 1.0)
    return total + weights.get("shift", 0.0)


@case(calls=lambda a: [(a.f(3), a.f(3)), (a.f(2, 2), a.f(2))], nodes=5)
def star_unpacking_in_calls_and_displays(x, y):
    first = (x,)
    rest = [y]
    opts = {"scale": 2.0}
    more = {"shift": 1.0}
    out = _combine(*first, *rest, **opts, **more)
    shapes = [*x.shape, *y.shape]
    both = (*first, *rest)
    merged = {**opts, **more}
    return out, shapes, len(both), merged, {*x.shape, *y.shape}


@case(calls=lambda a: [(a.f(4),), (a.f(2, 3),)], nodes=3)
def augmented_assignment_on_attribute_and_item(x):
    state = {"acc": x * 1}
    state["acc"] += 1
    box = _Box(x)
    box.value *= 3
    return state["acc"], box.value


class _Box:
    def __init__(self, value):
        self.value = value


@case(calls=lambda a: [(a.i(5, lo=0, hi=8), a.b(5)), (a.i(2, 2, lo=0, hi=8, dtype=np.int32), a.b(2, 2))], nodes=6)
def inplace_bitwise_on_temporaries(n, mask):
    k = n + 0
    k &= 6
    k |= 1
    k ^= 3
    k >>= 1
    m = ~mask
    return k, m


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=1)
def failing_assert_caught(x):
    try:
        assert x.ndim == 2, "need a matrix"
        out = x.sum(axis=0)
    except AssertionError as err:
        out = x * len(str(err))
    return out


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def raise_through_finally_caught_outside(x):
    steps = []
    try:
        try:
            y = x + 1
            raise ValueError("stop")
        finally:
            steps.append("cleanup")
    except ValueError:
        y = y * 2
    return y, steps


class _Suppress:
    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return exc_type is not None and issubclass(exc_type, LookupError)


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def with_block_suppresses_exception(x):
    y = x * 2
    with _Suppress():
        raise KeyError("ignored")
    with contextlib.suppress(IndexError):
        y = y + [][0]
    return y - 1


@case(calls=lambda a: [(a.f(3, 2),), (a.f(3),)], nodes=[2, 1])
def and_or_as_values(x):
    wide = x.ndim == 2 and x.shape[1] > 1
    name = x.ndim > 2 or "flat"
    y = x.sum(axis=1) if wide else x
    return y * 2, wide, name


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=3)
def function_with_kwdefaults_and_annotations_defined_in_frame(x):
    def scale(v: np.ndarray, *, by: float = 2.0) -> np.ndarray:
        return v * by

    return scale(x), scale(x, by=0.5) + 1


class _Base:
    def forward(self, x):
        return x * 2


class _Child(_Base):
    def forward(self, x):
        return super().forward(x) + 1


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=3)
def super_calls(x):
    child = _Child()
    return child.forward(x), super(_Child, child).forward(x)


@case(calls=lambda a: [(a.f(4),), (a.f(2, 2),)], nodes=3)
def possibly_unbound_local_after_loop(x):
    for k in range(2):
        last = x + k
    return last * k


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=3)
def set_and_list_displays_of_constants(x):
    allowed = {"relu", "tanh", "gelu", "silu"}
    sizes = [4, 8, 16, 32]
    scales = (0.5, 1.0, 2.0)
    y = x
    for s in scales:
        y = y * s
    return y, "gelu" in allowed, sizes[-1], sorted(allowed)


@case(calls=lambda a: [(a.f(4),), (a.f(3, 2),)], nodes=1)
def returns_constant_in_branch(x):
    out = x * 2
    if out.ndim > 5:
        return None
    return out
