"""List, dict and set comprehensions (nested code objects before 3.12, inlined in 3.12) and generator expressions."""
import numpy as np

from .registry import case


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=3)
def list_comprehension_of_arrays(x):
    return [x * k for k in range(3)]


@case(calls=lambda a: [(a.f(4),), (a.f(2, 3),)], nodes=9)
def polynomial_from_generator(x, ws=(1.0, 2.0, 3.0)):
    return sum(w * x ** i for i, w in enumerate(ws))


@case(calls=lambda a: [(a.f(4, 3),), (a.f(2, 2),)], nodes=[6, 4])
def tuple_of_column_sums(x):
    return tuple(x[:, i].sum() for i in range(x.shape[1]))


@case(calls=lambda a: [(a.pos(3),), (a.pos(2, 2),)], nodes=2)
def dict_comprehension_of_functions(x):
    return {name: fn(x) for name, fn in (("exp", np.exp), ("log1p", np.log1p))}


@case(calls=lambda a: [([a.f(2, 3), a.f(1, 3)], [a.f(3, 2), a.f(3, 4)]),
                       ([a.f(1, 1), a.f(2, 1)], [a.f(1, 1), a.f(1, 3)])],
      nodes=4)
def nested_comprehension(lefts, rights):
    return [[a @ b for b in rights] for a in lefts]


@case(calls=lambda a: [(a.f(5, 2),), (a.f(4),)], nodes=[3, 2])
def filtered_comprehension(x):
    return [x[i] for i in range(x.shape[0]) if i % 2 == 0]


@case(calls=lambda a: [([a.f(2, 3), a.f(4, 3)],), ([a.f(1, 2), a.f(1, 2), a.f(3, 2)],)], nodes=1)
def set_comprehension_of_widths(arrays):
    widths = {arr.shape[-1] for arr in arrays}
    assert len(widths) == 1, f"widths differ: {sorted(widths)}"
    return np.concatenate(arrays, axis=0)


@case(calls=lambda a: [(a.f(3), a.f(3)), (a.f(2, 2), a.f(2))], nodes=2)
def list_of_generator(x, y):
    return list(np.tanh(v) for v in (x, y))


@case(calls=lambda a: [([a.f(3), a.f(3)],), ([a.f(2, 2), a.f(4), a.f(1)],)], nodes=[2, 3])
def comprehension_uses_enclosing_local(xs):
    scale = 2.0
    return [v * scale for v in xs]


@case(calls=lambda a: [([a.f(3), a.f(2)],), ([a.f(4)],)], nodes=[4, 2])
def sum_of_list_with_start(xs):
    return sum([v.sum() for v in xs], 0.0)


@case(calls=lambda a: [([a.f(3), a.f(2)], [a.f(3), a.f(2)]), ([a.f(2, 2)], [a.f(2, 2)])], nodes=[2, 1])
def zip_in_comprehension(xs, ys):
    return [a - b for a, b in zip(xs, ys)]


@case(calls=lambda a: [(a.f(3, 4),), (a.f(2, 2, 2),)], nodes=[1, 1])
def comprehension_over_shape(x):
    doubled = [d * 2 for d in x.shape]
    return x.reshape(-1), doubled, {d: i for i, d in enumerate(x.shape)}
