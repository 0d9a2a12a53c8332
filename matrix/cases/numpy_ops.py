"""NumPy work: reductions with axis/keepdims, indexing and slicing with constants, None
and Ellipsis, shape methods, allow-listed functions, array attributes, shape-dependent
Python (specialised and guarded)."""
import numpy as np

from matrix.cases import case
from matrix.cases.inputs import arr, args, ints


@case("numpy_ops", args(arr(3, 4)), args(arr(5, 2)), recompiles=1)
def reductions_with_axis(x):
    return x.sum(), x.sum(axis=0), x.mean(axis=1), x.max(), x.min(axis=0)


@case("numpy_ops", args(arr(3, 4)))
def reductions_keepdims(x):
    return np.sum(x, axis=1, keepdims=True), np.max(x, axis=0, keepdims=True)


@case("numpy_ops", args(arr(4, 3)))
def std_var_normalise(x):
    return (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6), x.var()


@case("numpy_ops", args(arr(4, 5)))
def constant_indexing(x):
    return x[0], x[1, 2], x[:, 1], x[1:3, ::2], x[None, 0], x[..., -1], x[-1, ...]


@case("numpy_ops", args(arr(2, 3, 4)))
def shape_methods(x):
    return x.reshape(6, 4), x.transpose(2, 0, 1), x.swapaxes(0, 2), x.T, x.reshape(-1)


@case("numpy_ops", args(arr(6)))
def where_clip_maximum(x):
    return np.where(x > 2.0, x, 0.0), np.clip(x, 1.5, 3.0), np.maximum(x, 2.0), np.minimum(x, 2.0)


@case("numpy_ops", args(arr(2, 3), arr(2, 3, start=4.0)))
def concatenate_and_stack(a, b):
    return np.concatenate([a, b], axis=0), np.stack((a, b)), np.concatenate((a, b), axis=1)


@case("numpy_ops", args(arr(3, 4), arr(4, 2)))
def einsum_and_norm(a, b):
    return np.einsum("ij,jk->ik", a, b), np.linalg.norm(a), np.linalg.norm(a, axis=1)


@case("numpy_ops", args(arr(2, 3)))
def array_attributes(x):
    return x.shape, x.ndim, x.dtype, x.size, x.itemsize, x.T.shape, x * x.size


@case("numpy_ops", args(arr(5)), args(ints(5)), args(arr(5, dtype="float32")), recompiles=2)
def astype_recompile_on_dtype(x):
    return x.astype(np.float64) * 2.0, x.cumsum()


@case("numpy_ops", args(arr(4)))
def creation_functions(x):
    return np.zeros_like(x) + x, np.ones_like(x), np.arange(4) * x, np.full_like(x, 7.0)


@case("numpy_ops", args(arr(3)), args(arr(8)), recompiles=1)
def shape_dependent_branch(x):
    if x.shape[0] > 5:
        return x.sum()
    return x * 2.0


@case("numpy_ops", args(arr(6)))
def elementwise_ufuncs(x):
    return np.exp(x) + np.log(x) - np.sqrt(x) * np.sin(x) + np.cos(x) - np.tanh(x) + np.abs(-x)


@case("numpy_ops", args(arr(4, 4)))
def layout_transposed_input(x):
    y = x.T
    return y * 2.0 + y.sum(axis=1, keepdims=True)
