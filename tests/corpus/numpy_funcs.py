"""Allow-listed NumPy functions and array methods, as small numerical helpers use them."""
import math

import numpy as np

from .registry import case


@case(calls=lambda a: [(a.f(3, 5),), (a.f(2, 7),), (a.f(4, 4, dtype=np.float32),)], nodes=5)
def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@case(calls=lambda a: [(a.f(3, 5),), (a.f(6, 2),)], nodes=6)
def log_softmax(x):
    m = np.max(x, axis=1, keepdims=True)
    s = x - m
    return s - np.log(np.sum(np.exp(s), axis=1, keepdims=True))


@case(calls=lambda a: [(a.f(10, 3),), (a.f(5, 2),), (a.f(8, 4, dtype=np.float32),)], nodes=5)
def standardize_columns(x):
    return (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-8)


@case(calls=lambda a: [(a.f(6, 3),), (a.f(4, 2),)], nodes=5)
def minmax_scale(x):
    lo = np.min(x, axis=0)
    hi = np.max(x, axis=0)
    return (x - lo) / (hi - lo)


@case(calls=lambda a: [(a.f(8),), (a.f(3, 3),), (a.f(5, dtype=np.float32),)], nodes=5)
def relu_variants(x):
    return np.maximum(x, 0), np.where(x > 0, x, 0.01 * x), np.clip(x, -1, 1)


@case(calls=lambda a: [(a.f(6),), (a.f(2, 4, dtype=np.float32),)], nodes=4)
def sigmoid(x):
    return 1 / (1 + np.exp(-x))


@case(calls=lambda a: [(a.f(7),), (a.f(3, 2),)], nodes=8)
def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


@case(calls=lambda a: [(a.f(10), a.f(10)), (a.f(4, 3), a.f(4, 3)), (a.f(5, dtype=np.float32), a.f(5, dtype=np.float32))],
      nodes=3)
def mse_loss(pred, target):
    d = pred - target
    return np.mean(d * d)


@case(calls=lambda a: [(a.f(4, 3), a.onehot(4, 3)), (a.f(2, 5), a.onehot(2, 5))], nodes=10)
def cross_entropy(logits, onehot):
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return -np.mean(np.sum(onehot * np.log(p + 1e-12), axis=1))


@case(calls=lambda a: [(a.f(4, 3), a.f(4, 3)), (a.f(5), a.f(5))], nodes=6)
def cosine_similarity(a, b):
    return np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


@case(calls=lambda a: [(a.f(4, 3), a.f(5, 3)), (a.f(2, 2), a.f(3, 2))], nodes=11)
def pairwise_sq_dists(a, b):
    return (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T


@case(calls=lambda a: [(a.f(2, 3), a.f(2, 3)), (a.f(4, 1), a.f(4, 1)), (a.i(1, 2), a.i(1, 2))], nodes=4)
def join_arrays(a, b):
    return np.concatenate([a, b], axis=0), np.stack([a, b], axis=-1), np.hstack((a, b)), np.vstack((a, b))


@case(calls=lambda a: [(a.f(3, 4), a.f(4, 2)), (a.f(2, 2), a.f(2, 5))], nodes=2)
def einsum_contractions(a, b):
    return np.einsum("ij,jk->ik", a, b), np.einsum("ij,ij->i", a, a)


@case(calls=lambda a: [(a.f(4),), (a.f(2, 3),), (a.f(3, dtype=np.float32),)], nodes=5)
def like_constructors(x):
    z = np.zeros_like(x)
    o = np.ones_like(x)
    f = np.full_like(x, 2.0)
    return z + o * f


@case(calls=lambda a: [(a.f(5),), (a.f(3),)], nodes=4)
def arange_and_linspace(x):
    n = x.shape[0]
    t = np.arange(n)
    w = np.linspace(0.0, 1.0, n)
    return x * w + t


@case(calls=lambda a: [(a.f(3, 4),), (a.i(2, 2),)], nodes=2)
def cumulative(x):
    return np.cumsum(x, axis=0), x.cumprod(axis=1)


@case(calls=lambda a: [(a.f(4, 3),), (a.f(2, 5),)], nodes=3)
def argmax_onehot(x):
    idx = np.argmax(x, axis=1)
    return np.eye(x.shape[1])[idx]


@case(calls=lambda a: [(a.f(2, 3, 4),), (a.i(3, 2, 2),), (a.f(2, 2, 2, dtype=np.float32),)], nodes=5)
def reductions_with_axis(x):
    return x.sum(axis=(0, 2)), np.mean(x, axis=1, keepdims=True), x.max(), np.min(x, axis=-1), x.prod(axis=0)


@case(calls=lambda a: [(a.f(5, 3),), (a.f(4, 2, dtype=np.float32),)], nodes=2)
def variance_with_ddof(x):
    return x.var(ddof=1), np.std(x, axis=0, ddof=1)


@case(calls=lambda a: [(a.f(3, 4),), (a.f(2, 2),)], nodes=3)
def vector_norms(x):
    return np.linalg.norm(x), np.linalg.norm(x, axis=1), np.linalg.norm(x, ord=1, axis=0)


@case(calls=lambda a: [(a.with_nans(8),), (a.with_nans(3, 3),)], nodes=2)
def nan_to_zero(x):
    return np.where(np.isnan(x), 0.0, x)


@case(calls=lambda a: [(a.f(6),), (a.f(2, 3, dtype=np.float32),)], nodes=9)
def transcendental_mix(x):
    return np.sqrt(np.abs(x)) + np.log1p(np.abs(x)) - np.sin(x) * np.cos(x)


@case(calls=lambda a: [(a.f(3), a.f(3)), (a.f(5), a.f(5))], nodes=3)
def outer_plus_dot(a, b):
    return np.outer(a, b) + np.dot(a, b)


@case(calls=lambda a: [(a.f(4, 3),), (a.i(2, 2),)], nodes=4)
def any_all(x):
    return (x > 0).any(), np.all(x < 10, axis=0)


@case(calls=lambda a: [(a.f(6) * 10,), (a.f(2, 2, dtype=np.float32) * 10,)], nodes=3)
def rounding(x):
    return np.round(x, 2), np.floor(x), np.ceil(x)


@case(calls=lambda a: [(a.f(6),), (a.i(3, 2),)], nodes=3)
def sign_times_abs(x):
    return np.sign(x) * np.abs(x)


@case(calls=lambda a: [(a.f(3, 5),), (a.f(2, 2),)], nodes=7)
def logsumexp_rows(x):
    m = x.max(axis=1)
    return m + np.log(np.exp(x - m[:, None]).sum(axis=1))


@case(calls=lambda a: [(a.f(4),), (a.i(2, 3),)], nodes=3)
def dtype_casts(x):
    return x.astype(np.float32) * 2, x.astype("int64")


@case(calls=lambda a: [(a.f(4, 4),), (a.f(3, 3),)], nodes=4)
def triangular_parts(x):
    return np.tril(x) + np.triu(x, 1).T


@case(calls=lambda a: [(a.f(3, 4), a.f(3, 4)), (a.f(5), a.f(5))], nodes=8)
def huber_loss(pred, target):
    d = np.abs(pred - target)
    return np.where(d < 1.0, 0.5 * d ** 2, d - 0.5).mean()
