"""Less common statements and displays written directly in the compiled frame (so its own opcodes are traced):
``del``, star-unpacking displays and calls, dict merges, augmented assignment on attributes and items, in-place
bitwise on temporaries, a failing assert caught, raise through ``finally``, suppressing ``with``,
``and``/``or`` as values, functions with keyword defaults and annotations defined in the frame, ``super()``."""
import contextlib

import numpy as np

from .registry import case, kw


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


@case(calls=lambda a: [(a.f(4),), (a.f(2, 3),)], nodes=4)
def augmented_assignment_on_attribute_and_item(x):
    state = {"acc": x * 1}
    state["acc"] += 1
    box = _Box(x + 0)
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


class _Options:
    """A plain settings object passed in by the caller."""

    def __init__(self, scale):
        self.scale = scale


@case(calls=lambda a: [(a.f(3), _Options(2.0)), (a.f(2, 2), _Options(0.5))], nodes=2)
def attribute_store_and_delete_on_argument(x, opts):
    opts.last_shape = x.shape
    y = x * opts.scale
    del opts.last_shape
    return y + 1


@case(calls=lambda a: [(a.f(4),), (a.f(2, 3),)], nodes=2)
def delete_cell_variable(x):
    k = x.shape[0]
    scale = lambda v: v * k  # noqa: E731 - the lambda makes k a cell
    y = scale(x)
    del k
    return y - 1


_SCRATCH = None


@case(calls=lambda a: [(a.f(2, 3),), (a.f(4, 2),)], nodes=1)
def global_store_and_delete(x):
    global _STASHED_SHAPE
    _STASHED_SHAPE = x.shape
    y = x.reshape(_STASHED_SHAPE[0], -1)
    del _STASHED_SHAPE
    return y


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=1)
def stores_result_in_global(x):
    global _SCRATCH
    _SCRATCH = np.tanh(x)


class _Recorder:
    """A module-level context manager instance (no object is constructed in the traced frame)."""

    depth = 0

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return None


_RECORDER = _Recorder()


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def with_module_level_context_manager(x):
    with _RECORDER as rec:
        y = x * 2 + rec.depth
    return y


@case(calls=lambda a: [(a.f(3),), kw(a.f(3), scale=3.0), (a.f(2, 2), None)], nodes=1)
def none_checks_as_values_and_defaults(x, scale=None):
    missing = scale is None
    if scale is None:
        scale = 1.0
    return x * scale, missing, scale is not None


@case(calls=lambda a: [(a.f(3), (2.0, (3.0, None))), (a.f(2, 2), (0.5, None))], nodes=[2, 1])
def walk_static_linked_chain(x, chain):
    node = chain
    while node is not None:
        x = x * node[0]
        node = node[1]
    return x


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=3)
def loop_until_flag_set(x):
    done = False
    steps = 0
    while not done:
        x = x + 1
        steps += 1
        done = steps >= 3
    return x


@case(calls=lambda a: [(a.f(4),), (a.f(2),)], nodes=[3, 3])
def retry_until_result(x):
    result = None
    attempt = 0
    while result is None:
        attempt += 1
        if attempt >= 3:
            result = x * attempt
        else:
            x = x + 1
    return result


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=4)
def list_slice_assignment(x):
    parts = [x, x, x]
    parts[1:] = [x * 2, x * 3]
    del parts[:1]
    return np.stack(parts) - 1


@case(calls=lambda a: [(a.f(3), {"w": 2.0}), (a.f(3), {}), (a.f(2, 2), {"w": 0.5})], nodes=1)
def return_from_except_handler(x, params):
    try:
        w = params["w"]
    except KeyError:
        return x * 0
    return x * w
