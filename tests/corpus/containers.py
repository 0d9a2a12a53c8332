"""Lists, dicts and tuples built, mutated locally and returned; containers of arrays as inputs."""
import numpy as np

from .registry import case


@case(calls=lambda a: [(a.f(3),), (a.f(2),)], nodes=4)
def list_methods(x):
    acc = []
    acc.append(x)
    acc.extend([x * 2, x * 3])
    acc.insert(0, -x)
    return np.concatenate(acc)


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def dict_methods(x):
    d = {}
    d["a"] = x + 1
    d.update(b=x * 2)
    d.setdefault("c", x)
    return d


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def list_pop_and_reverse(x):
    vals = [x, x * 2, x * 3]
    last = vals.pop()
    return vals[::-1], last


@case(calls=lambda a: [((a.f(3), a.f(3)),), ((a.f(2, 2), a.f(2)),)], nodes=1)
def tuple_in_tuple_out(pair):
    a, b = pair
    return (b, a + b)


@case(calls=lambda a: [([a.f(3), a.f(3)],), ([a.f(2, 2), a.f(2, 2), a.f(2, 2)],)], nodes=3)
def list_input_length(xs):
    return np.stack(xs).mean(axis=0) * len(xs)


@case(calls=lambda a: [({"w": a.f(3), "b": a.f(3)},), ({"w": a.f(2, 2), "b": a.f(2)},)], nodes=2)
def dict_of_arrays_input(params):
    return {k: v * 2 for k, v in params.items()}


@case(calls=lambda a: [(a.f(3), {"scale": 2.0, "layers": [4, 4]}), (a.f(3), {"scale": 0.5, "layers": [4]}),
                       (a.f(2, 2), {"scale": 2.0, "layers": [4, 4]})],
      nodes=[2, 1, 2])
def nested_config_dict(x, cfg):
    y = x * cfg["scale"]
    if len(cfg["layers"]) > 1:
        y = y + cfg["layers"][0]
    return y


@case(calls=lambda a: [({"w": a.f(2), "b": a.f(2)},), ({"w": a.f(3), "b": a.f(3), "extra": a.f(3)},)],
      nodes=[1, 2])
def dict_keys_membership_and_sorting(params):
    names = sorted(params)
    out = params["w"] * 1.5
    if "extra" in params:
        out = out + params["extra"]
    return names, out


@case(calls=lambda a: [([a.f(2), a.f(2), a.f(2)],), ([a.f(1), a.f(1)],)], nodes=[3, 2])
def list_index_and_slices(xs):
    head, tail = xs[0], xs[1:]
    return [head - t for t in tail] + [head * len(tail)]


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def tuple_concat_and_repeat(x):
    t = (x,) + (x * 2,)
    doubled = t * 2
    return doubled, len(doubled), x - t[1]


@case(calls=lambda a: [(a.f(4),), (a.f(3),)], nodes=2)
def dict_get_and_pop(x):
    d = {"keep": x + 1, "drop": 0}
    d.pop("drop")
    return d.get("keep") * d.get("missing", 2.0), list(d)
