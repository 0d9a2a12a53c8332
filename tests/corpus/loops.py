"""for and while loops over static iterables: range, enumerate, zip, lists of layers, break/continue/else."""
import numpy as np

from .registry import case


@case(calls=lambda a: [(a.f(4),), (a.f(2, 3),)], nodes=6)
def fixed_point_iteration(x):
    acc = x
    for _ in range(3):
        acc = acc * 0.5 + x
    return acc


def _layers(a, sizes):
    return [(a.f(m, n), a.f(n)) for m, n in zip(sizes[:-1], sizes[1:])]


@case(calls=lambda a: [(a.f(2, 4), _layers(a, [4, 3, 2])), (a.f(5, 4), _layers(a, [4, 6, 3, 2])),
                       (a.f(1, 2), _layers(a, [2, 2, 2]))],
      nodes=[6, 9, 6])
def mlp_forward(x, layers):
    for w, b in layers:
        x = np.maximum(x @ w + b, 0)
    return x


@case(calls=lambda a: [((a.f(3), a.f(3), a.f(3)),), ((a.f(2, 2), a.f(2, 2), a.f(2, 2)),)], nodes=6)
def enumerate_weighted_sum(ws):
    out = 0
    for i, w in enumerate(ws):
        out = out + i * w
    return out


@case(calls=lambda a: [([a.f(3), a.f(4)], [a.f(3), a.f(4)]), ([a.f(2, 2), a.f(1)], [a.f(2, 2), a.f(1)])], nodes=8)
def zip_sum_of_squares(xs, ys):
    sum_sq = 0.0
    for a, b in zip(xs, ys):
        sum_sq = sum_sq + ((a - b) ** 2).sum()
    return sum_sq


@case(calls=lambda a: [(a.f(3),), (a.i(2, 2),)], nodes=4)
def break_and_continue(x):
    for i in range(10):
        if i % 2:
            continue
        if i > 6:
            break
        x = x + i
    else:
        x = -x
    return x


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=4)
def for_else_completes(x):
    for k in (1, 2, 3):
        if k > 5:
            break
        x = x * k
    else:
        x = -x
    return x


@case(calls=lambda a: [(a.f(4),), (a.f(2, 3),)], nodes=3)
def while_true_with_break(x):
    k = 0
    while True:
        k += 1
        x = x * 2
        if k >= 3:
            break
    return x


@case(calls=lambda a: [(a.f(3, 2),), (a.f(2, 2),)], nodes=[12, 8])
def nested_loops_over_shape(x):
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            total = total + x[i, j]
    return total


@case(calls=lambda a: [(a.f(5),), (a.f(2, 3),), (a.f(4, dtype=np.float32),)], nodes=9)
def horner_polynomial(x):
    coeffs = (1.0, -2.0, 0.5, 3.0)
    y = np.zeros_like(x)
    for c in coeffs:
        y = y * x + c
    return y


@case(calls=lambda a: [(a.f(7),), (a.f(4),)], nodes=6)
def moving_average_3(x):
    n = x.shape[0]
    s = x[0:n - 2]
    for k in range(1, 3):
        s = s + x[k:n - 2 + k]
    return s / 3


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=4)
def build_list_then_stack(x):
    parts = []
    for k in range(3):
        parts.append(x * k)
    return np.stack(parts)


@case(calls=lambda a: [(a.f(4),), (a.f(3, 2),)], nodes=4)
def reversed_and_sorted_constants(x):
    for k in reversed(range(2)):
        x = x + k
    for s in sorted((3, 1)):
        x = x * s
    return x


@case(calls=lambda a: [(a.f(2, 3),), (a.f(4, 3),)], nodes=[6, 12])
def loop_over_rows(x):
    rows = []
    for row in x:
        rows.append(row / np.linalg.norm(row))
    return rows


@case(calls=lambda a: [(a.f(5),), (a.f(2, 2),)], nodes=3)
def countdown_while(x):
    n = 3
    while n:
        x = x - n
        n -= 1
    return x
