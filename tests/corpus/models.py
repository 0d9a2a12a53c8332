"""Small numerical programs as people write them: layers, attention, RNN loops, optimisers, batch norm,
pooling and convolution by slicing, metrics.  Several update state held by the caller (dicts, arrays written
in place): the compiled function must leave the caller's objects exactly as the plain one does."""
import math
from dataclasses import dataclass

import numpy as np

from .registry import case


@dataclass
class LayerNormParams:
    gamma: np.ndarray
    beta: np.ndarray
    eps: float = 1e-5


@case(calls=lambda a: [(a.f(4, 6), LayerNormParams(a.pos(6), a.f(6))),
                       (a.f(2, 3, 6), LayerNormParams(a.pos(6), a.f(6), 1e-3)),
                       (a.f(3, 8, dtype=np.float32), LayerNormParams(a.pos(8, dtype=np.float32), a.f(8, dtype=np.float32)))],
      nodes=10)
def layer_norm(x, p):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + p.eps) * p.gamma + p.beta


@case(calls=lambda a: [(a.f(4, 8), a.f(4, 8), a.f(4, 8)), (a.f(3, 4), a.f(3, 4), a.f(3, 4))], nodes=[15, 15])
def causal_attention(q, k, v):
    t, d = q.shape
    scores = q @ k.T / math.sqrt(d)
    causal = np.arange(t)[:, None] >= np.arange(t)[None, :]
    scores = np.where(causal, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ v


@case(calls=lambda a: [(a.f(5, 2, 3), a.f(3, 4), a.f(4, 4), a.f(4)), (a.f(2, 1, 3), a.f(3, 4), a.f(4, 4), a.f(4))],
      nodes=[32, 14])
def rnn_over_time(xs, wx, wh, b):
    h = np.zeros((xs.shape[1], wh.shape[0]))
    outputs = []
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ wx + h @ wh + b)
        outputs.append(h)
    return np.stack(outputs), h


@case(calls=lambda a: [({"w": a.f(3, 2), "b": a.f(2)}, {"w": a.f(3, 2), "b": a.f(2)}),
                       ({"w": a.f(2, 2), "b": a.f(2), "scale": a.f(1)}, {"w": a.f(2, 2), "b": a.f(2), "scale": a.f(1)})],
      nodes=[4, 6])
def sgd_step_returns_new_params(params, grads, lr=0.1):
    return {name: p - lr * grads[name] for name, p in params.items()}


@case(calls=lambda a: [(a.f(4), a.f(4), {"m": np.zeros(4), "v": np.zeros(4), "t": 0}),
                       (a.f(2, 2), a.f(2, 2), {"m": a.f(2, 2), "v": a.pos(2, 2), "t": 3})],
      nodes=14)
def adam_step_updates_state_dict(param, grad, state, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    state["t"] += 1
    state["m"] = b1 * state["m"] + (1 - b1) * grad
    state["v"] = b2 * state["v"] + (1 - b2) * grad * grad
    m_hat = state["m"] / (1 - b1 ** state["t"])
    v_hat = state["v"] / (1 - b2 ** state["t"])
    return param - lr * m_hat / (np.sqrt(v_hat) + eps)


@case(calls=lambda a: [(a.f(8, 3), np.zeros(3), np.ones(3)), (a.f(4, 2), a.f(2), a.pos(2))], nodes=12)
def batch_norm_updates_running_stats_in_place(x, running_mean, running_var, momentum=0.1):
    mean = x.mean(axis=0)
    var = x.var(axis=0)
    running_mean *= 1 - momentum
    running_mean += momentum * mean
    running_var *= 1 - momentum
    running_var += momentum * var
    return (x - mean) / np.sqrt(var + 1e-5)


@case(calls=lambda a: [(a.f(6),), (a.f(3, 2),), (a.f(5, dtype=np.float32),)], nodes=4)
def normalize_in_place_and_return_input(x):
    x -= x.mean()
    x /= x.std()
    return x


@case(calls=lambda a: [(a.f(4, 4),), (a.f(6, 2),)], nodes=2)
def max_pool_2x2(img):
    h, w = img.shape
    return img.reshape(h // 2, 2, w // 2, 2).max(axis=(1, 3))


@case(calls=lambda a: [(a.f(5, 5), a.f(3, 3)), (a.f(4, 6), a.f(3, 3))], nodes=[37, 37])
def conv2d_valid_by_slicing(img, kernel):
    kh, kw = kernel.shape
    h, w = img.shape[0] - kh + 1, img.shape[1] - kw + 1
    out = np.zeros((h, w))
    for i in range(kh):
        for j in range(kw):
            out = out + kernel[i, j] * img[i:i + h, j:j + w]
    return out


@case(calls=lambda a: [(a.f(6, 4), a.i(6, lo=0, hi=4)), (a.f(3, 2), a.i(3, lo=0, hi=2))], nodes=3)
def accuracy(logits, labels):
    return (logits.argmax(axis=1) == labels).mean()


@case(calls=lambda a: [(a.f(5),), (a.f(3, 2),)], nodes=[5, 5])
def polynomial_features(x, degree=3):
    return np.stack([x ** p for p in range(degree + 1)], axis=-1)


@case(calls=lambda a: [(a.f(4, 3), a.f(2, 3)), (a.f(6, 2), a.f(3, 2))], nodes=8)
def kmeans_assignment_step(points, centroids):
    d = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)
    labels = d.argmin(axis=1)
    inertia = d.min(axis=1).sum()
    return labels, inertia
