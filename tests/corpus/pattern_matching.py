"""The match statement (3.10+ syntax: imported only where the running table has MATCH_CLASS):
sequence, mapping (with ``**rest``), class (positional via ``__match_args__``, keyword,
builtin self-matching), guards, alternatives and nested patterns on ordinary NumPy code."""
import numpy as np

from .registry import case


class Param:
    __match_args__ = ("name", "value")

    def __init__(self, name, value):
        self.name = name
        self.value = value


@case(calls=lambda a: [(a.f(4), (2.0, 1.0)), (a.f(4), [3.0, 1.0, 7, 7]), (a.f(4), {"k": 2.0, "z": 1})],
      nodes=[2, 3, 2])
def match_sequence_and_mapping(x, spec):
    match spec:
        case (scale, shift):
            return x * scale + shift
        case [scale, shift, *rest]:
            return x * scale - shift + len(rest)
        case {"k": k, **rest}:
            return x * k + len(rest)
    return x


@case(calls=lambda a: [(a.f(4), Param("scale", 2.0)), (a.f(4), Param("shift", 1.0)), (a.f(4), 3),
                       (a.f(4), "other")], nodes=1)
def match_class_patterns(x, param):
    match param:
        case Param("scale", value=v) if v > 0:
            return x * v
        case Param(_, v):
            return x + v
        case int(n) | float(n):
            return np.power(x, n)
    return -x


@case(calls=lambda a: [(a.f(2, 3), {"layer": ("dense", 2.0)}), (a.f(2, 3), {"layer": ("norm", 0.0)})],
      nodes=[1, 4])
def match_nested_config(x, config):
    match config:
        case {"layer": ("dense", float(gain))}:
            return x * gain
        case {"layer": ("norm", _)}:
            return (x - x.mean()) / x.std()
    return x
