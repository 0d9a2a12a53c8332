"""Indexing and slicing with constants, ``None`` and ``...``; reshapes, transposes, writes into temporaries."""
import numpy as np

from .registry import case


@case(calls=lambda a: [(a.f(4, 5),), (a.f(6, 3),), (a.i(5, 2),)], nodes=5)
def basic_slices(x):
    return x[0], x[-1], x[1:3], x[:, 0], x[::2, ::-1]


@case(calls=lambda a: [(a.f(3, 2),), (a.f(2, 4, dtype=np.float32),)], nodes=4)
def none_and_ellipsis(x):
    return x[None], x[..., None], x[..., 0], x[:, None, :]


@case(calls=lambda a: [(a.f(2, 3, 4),), (a.f(3, 1, 2),)], nodes=4)
def reshapes(x):
    return x.reshape(-1), x.reshape(x.shape[0], -1), x.ravel(), x.flatten()


@case(calls=lambda a: [(a.f(2, 3, 4),), (a.i(1, 2, 3),)], nodes=5)
def transposes(x):
    return x.T, x.transpose(1, 0, 2), np.transpose(x), x.swapaxes(0, 2), np.moveaxis(x, 0, -1)


@case(calls=lambda a: [(a.f(3, 4),), (a.f(1, 5),)], nodes=3)
def expand_and_squeeze(x):
    y = np.expand_dims(x, 0)
    return np.squeeze(y, 0), y.squeeze()


@case(calls=lambda a: [(a.f(3, 4),), (a.f(2, 2, dtype=np.float32),)], nodes=4)
def writes_into_temporary(x):
    y = np.zeros_like(x)
    y[0] = 1.0
    y[:, 1] = x[:, 1]
    return y


@case(calls=lambda a: [(a.f(4, 3),), (a.f(3, 2),)], nodes=2)
def constant_integer_lists(x):
    return x[[0, 2]], x[:, [1, 0]]


@case(calls=lambda a: [(a.f(6),), (a.f(3, 2),)], nodes=2)
def reversed_plus_original(x):
    return x[::-1] + x


@case(calls=lambda a: [(a.f(4, 4),), (a.f(3, 5),)], nodes=3)
def shifted_difference(x):
    return x[1:, :-1] - x[:-1, 1:]


@case(calls=lambda a: [(a.f(3, 4),), (a.f(5, 2),)], nodes=2)
def slice_objects(x):
    s = slice(1, None)
    return x[s], x[s, s]


@case(calls=lambda a: [(a.f(3, 4),), (a.f(2, 2),)], nodes=1)
def index_tuple_built_in_python(x):
    idx = (0, slice(None))
    return x[idx]


@case(calls=lambda a: [(a.f(2, 3, 4), a.f(12, 5)), (a.f(4, 2, 6), a.f(12, 5))], nodes=2)
def batch_flatten_matmul(x, w):
    return x.reshape(x.shape[0], -1) @ w


@case(calls=lambda a: [(a.f(3, 4),), (a.f(2, 6),)], nodes=2)
def reshape_from_unpacked_shape(x):
    n, d = x.shape
    return x.reshape(n * d)[:n]


@case(calls=lambda a: [(a.f(5, 4),), (a.f(3, 3),)], nodes=4)
def negative_indices_and_steps(x):
    return x[-2:, ::-2], x[::-1][0], x[..., -1]


@case(calls=lambda a: [(a.f(6),), (a.f(4),)], nodes=5)
def slice_assign_on_copy(x):
    y = x.copy()
    y[1:3] = 0.0
    y[-1] += 5.0
    return y


# Slice bounds that are not constants: BINARY_SLICE / STORE_SLICE on 3.12+ (3.14 folds
# constant bounds into a slice constant, so slice_assign_on_copy no longer has them).
@case(calls=lambda a: [(a.f(6), 1, 4), (a.f(5), 0, 2)], nodes=4)
def slice_assign_with_variable_bounds(x, i, j):
    y = x.copy()
    y[i:j] = x[i:j] * 2.0
    return y
