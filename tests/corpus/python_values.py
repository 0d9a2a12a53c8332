"""Python values around the NumPy work: constants, tuples, lists, dicts, sets, ranges, unpacking, static array facts."""
import numpy as np

from .registry import case, kw


@case(calls=lambda a: [(a.f(4, 3),), (a.f(2, 2, dtype=np.float32),)], nodes=2)
def summary_dict(x):
    return {"mean": x.mean(), "max": x.max(), "shape": x.shape}


@case(calls=lambda a: [(a.f(3),), (a.i(2, 2),)], nodes=2)
def list_of_results(x):
    return [x + 1, x * 2]


@case(calls=lambda a: [(a.f(3, 2),), (a.f(5),)], nodes=1)
def nested_structure(x):
    return (x.sum(), [x.shape, {"n": x.ndim}], None)


@case(calls=lambda a: [(a.f(3, 4),), (a.i(2, 5, 2, dtype=np.int16),), (a.f(7, dtype=np.float32),)], nodes=1)
def static_array_facts(x):
    return x.shape[0] * 2 + x.ndim, x.dtype, x.size, x.itemsize, x.nbytes, len(x), x.sum()


@case(calls=lambda a: [kw(a.f(4), how="sum"), kw(a.f(4), how="mean"), kw(a.f(2, 2), how="max")], nodes=1)
def set_of_constants(x, how):
    reducers = {"sum", "mean"}
    if how in reducers:
        return x.sum() if how == "sum" else x.mean()
    return x.max()


@case(calls=lambda a: [(a.f(5),), (a.f(2, 3),)], nodes=2)
def range_object(x):
    r = range(1, 4)
    return x * len(r) + r[-1]


@case(calls=lambda a: [(a.f(2, 3, 4),), (a.f(4, 2),)], nodes=2)
def starred_unpacking(x):
    first, *rest = x.shape
    a, (b, c) = 1, (2, 3)
    return x.reshape(first, -1) * (a + b + c), rest


@case(calls=lambda a: [(a.f(3, 2),), (a.f(4),)], nodes=1)
def shape_tuple_concat(x):
    dims = x.shape + (1,)
    return x.reshape(dims)


@case(calls=lambda a: [(a.f(4),), (a.f(2, 2),)], nodes=5)
def dict_items_weighted_sum(x):
    coefs = {"a": 1.0, "b": 2.0}
    total = x * 0
    for _, v in coefs.items():
        total = total + v * x
    return total


@case(calls=lambda a: [(a.f(3),), (a.f(3, dtype=np.float32),)], nodes=3, promotion_sensitive=[1])
def numpy_scalar_values(x):
    s = x.sum()
    return s, s + 1.0, -s


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=1)
def isinstance_checks(x):
    assert isinstance(x, np.ndarray)
    kind = "float" if isinstance(x.shape, tuple) and not isinstance(x, (list, dict)) else "other"
    return kind, x * 2


@case(calls=lambda a: [(a.f(2, 3, 4),), (a.f(5, 6),)], nodes=1)
def shape_slicing(x):
    tail = x.shape[-2:]
    lead = x.shape[:-2]
    return x.reshape(lead + (tail[0] * tail[1],)), tail, lead


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def string_keys_and_join(x):
    parts = ["scale", "shift"]
    key = "_".join(parts).upper()
    return {key: x * 2 - 1, "lower": key.lower()}


@case(calls=lambda a: [(a.f(4, 2),), (a.f(3, 1),)], nodes=3)
def tuple_methods_and_bool(x):
    dims = (x.shape[0], x.shape[1], 1)
    ones = dims.count(1)
    pos = dims.index(x.shape[1])
    empty = not x.shape[0]
    return x.sum(axis=pos) * ones, empty, bool(ones), x.T
