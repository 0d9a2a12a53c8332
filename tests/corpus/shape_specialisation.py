"""Shape- and dtype-dependent Python: specialised at trace time and guarded (a new shape may recompile)."""
import numpy as np

from .registry import case


@case(calls=lambda a: [(a.f(8),), (a.f(3),), (a.f(10),)], nodes=[2, 1, 2])
def truncate_long_inputs(x):
    if x.shape[0] > 5:
        return x[:5].sum()
    return x.sum()


@case(calls=lambda a: [(a.f(8),), (a.f(6),), (a.i(5),)], nodes=[2, 4, 4])
def pad_to_multiple_of_four(x):
    r = (-x.shape[0]) % 4
    if r:
        x = np.concatenate([x, np.zeros(r, dtype=x.dtype)])
    return x.reshape(-1, 4).sum(axis=1)


@case(calls=lambda a: [(a.f(3), a.f(3, 2)), (a.f(4, 3), a.f(3, 2))], nodes=[2, 1])
def promote_single_to_batch(x, w):
    if x.ndim == 1:
        x = x[None]
    return x @ w


@case(calls=lambda a: [(a.f(3),), (a.f(2, 3),), (a.f(2, 2, 2),)], nodes=[1, 2, 3])
def cumsum_every_axis(x):
    for d in range(x.ndim):
        x = x.cumsum(axis=d)
    return x


@case(calls=lambda a: [(a.f(2, 6),), (a.f(4, 2),), (a.f(3, 2, 8),)], nodes=7)
def gated_linear_unit(x):
    h = x.shape[-1] // 2
    return x[..., :h] * (1 / (1 + np.exp(-x[..., h:])))


@case(calls=lambda a: [(a.f(2, 3, 8),), (a.f(1, 5, 4),)], nodes=2)
def split_heads(x):
    b, t, d = x.shape
    return x.reshape(b, t, 2, d // 2).transpose(0, 2, 1, 3)


@case(calls=lambda a: [(a.f(200),), (a.f(10),), (a.f(20, 20),)], nodes=[3, 1, 3])
def size_threshold(x):
    if x.size > 100:
        return x.reshape(-1)[:100].mean()
    return x.mean()


@case(calls=lambda a: [(a.f(3, 4),), (a.f(3, 4, dtype=np.float32),), (a.f(3, 4, dtype=np.float16),)],
      nodes=[1, 2, 2])
def precision_by_dtype(x):
    if x.dtype.itemsize < 8:
        x = x.astype(np.float64)
    return x.std(axis=0)


@case(calls=lambda a: [(a.f(3, 3),), (a.f(4, 2),)], nodes=[3, 2])
def symmetric_or_gram(x):
    if x.shape[0] == x.shape[1]:
        return (x + x.T) / 2
    return x.T @ x


@case(calls=lambda a: [(a.f(2, 3), a.f(2, 3)), (a.f(2, 3), a.f(3)), (a.f(4), a.f(4))], nodes=[2, 3, 2])
def broadcast_aware_residual(x, r):
    if r.ndim < x.ndim:
        r = r[None, :]
    return x + r * 0.5
