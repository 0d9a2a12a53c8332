"""Correctness-only cases (``graphs=None``): constructs issue 3 does not require in one graph — printing,
data-dependent control flow and shapes, mutation of inputs, NumPy errors.  Whatever the tracer does with them
(run the frame natively, or later break the graph), the compiled function must print, return, raise and mutate
exactly like the plain one."""
import numpy as np

from .registry import case


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], graphs=None)
def prints_shape_and_result(x):
    y = x * 2
    print(f"shape={x.shape} dtype={x.dtype}")
    print("done", y.ndim, sep="|")
    return y


@case(calls=lambda a: [(a.pos(3),), (-a.pos(3),), (a.f(2, 2),)], graphs=None)
def data_dependent_branch(x):
    if x.sum() > 0:
        return x - x.mean()
    return -x


@case(calls=lambda a: [(a.f(6),), (a.f(3, 3),)], graphs=None)
def boolean_mask_select(x):
    return x[x > 0], np.count_nonzero(x > 0)


@case(calls=lambda a: [(a.f(3), []), (a.f(2, 2), [1])], graphs=None)
def appends_to_input_list(x, log):
    y = x + 1
    log.append(y.shape)
    return y


@case(calls=lambda a: [(a.f(4),), (a.f(2, 3),)], graphs=None)
def writes_into_input_array(x):
    x[...] = x * 2
    x += 1
    return x.sum()


@case(calls=lambda a: [(a.f(3), {"n": 0}), (a.f(2), {"n": 5, "m": 1})], graphs=None)
def mutates_input_dict(x, state):
    state["n"] += 1
    state["last"] = x * state["n"]
    return state["last"].sum()


@case(calls=lambda a: [(a.f(4),), (np.zeros(3),)], graphs=None)
def errstate_block(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(np.abs(x))
    return y


@case(calls=lambda a: [(a.f(3),), (a.i(2, 2),)], graphs=None)
def python_scalar_conversions(x):
    total = float(x.sum())
    return total * 2, x.tolist(), int(x.size), x.max().item()


@case(calls=lambda a: [(a.i(8, lo=0, hi=3),), (a.i(5, lo=0, hi=5),)], graphs=None)
def data_dependent_output_shape(x):
    values, counts = np.unique(x, return_counts=True)
    return values, counts, np.nonzero(x)[0]


@case(calls=lambda a: [(a.f(3), a.f(3)), (a.f(3), a.f(4)), (a.f(2, 2), a.f(3))], graphs=None, raises=[1, 2])
def broadcast_error(x, y):
    return x + y


@case(calls=lambda a: [(a.f(3), a.f(3, 2)), (a.f(2, 3), a.f(2, 3))], graphs=None, raises=[1])
def matmul_shape_error(x, w):
    return x @ w


@case(calls=lambda a: [(a.f(6),), (a.f(5),)], graphs=None, raises=[1])
def reshape_error(x):
    return x.reshape(2, 3)


@case(calls=lambda a: [(a.f(4),), (a.f(3, 2),)], graphs=None)
def generator_function_consumed(x):
    def chunks(v):
        for k in range(2):
            yield v * k
    return list(chunks(x))


@case(calls=lambda a: [(a.f(3),), (a.f(2),)], graphs=None, raises=[0, 1])
def exception_raised_after_numpy_work(x):
    y = x * 2
    raise KeyError(f"missing entry for shape {y.shape}")


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], graphs=None)
def iterates_array_values_in_python(x):
    return sorted(float(v) for v in x.ravel())


@case(calls=lambda a: [(a.f(4),), (a.f(2, 2),)], graphs=None)
def returns_input_and_view(x):
    return x, x[0], x.T, x.reshape(-1)


@case(calls=lambda a: [(a.f(2, 3), a.f(3, 3)), (a.f(4, 2), a.f(2, 2))], graphs=None,
      notes="NumPy < 1.25 raises TypeError for @=: whether the graph holds it depends on the NumPy release")
def inplace_matmul_with_fallback(x, w):
    y = x * 1.0
    try:
        y @= w
    except TypeError:  # NumPy < 1.25: in-place matrix multiplication is not supported
        y = y @ w
    return y


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], graphs=None)
def imports_inside_function(x):
    import math
    from functools import partial
    scale = partial(np.multiply, math.pi)
    return scale(x)


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], graphs=None)
def defines_class_inside_function(x):
    class Holder:
        factor = 2.0

    return x * Holder.factor, Holder.__name__


def _consecutive(items):
    yield from zip(items[:-1], items[1:])


def _delegating(parts):
    total = yield from _consecutive(parts)  # a generator's return value (None here)
    yield total


@case(calls=lambda a: [([a.f(3), a.f(3), a.f(3)],), ([a.f(2), a.f(2)],)], nodes=[2, 1])
def nested_yield_from_and_its_value(xs):
    out = list(_delegating(xs))
    return [b * a for a, b in out[:-1]], out[-1]


@case(calls=lambda a: [([a.f(3), a.f(3), a.f(3)],), ([a.f(2, 2), a.f(2, 2)],)], nodes=[2, 1])
def generator_with_yield_from(xs):
    return [b - a for a, b in _consecutive(xs)]
