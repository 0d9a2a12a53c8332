"""Reads of globals, module attributes, user-object and class attributes, dataclass configs."""
import math
from dataclasses import dataclass

import numpy as np

from .registry import case

EPS = 1e-6
CONFIG = {"scale": 0.5, "activation": "tanh"}
_W = np.random.default_rng(1234).standard_normal((3, 2))


@case(calls=lambda a: [(a.pos(4),), (a.pos(2, 2),)], nodes=3)
def global_constant(x):
    return x / (x.sum() + EPS)


@case(calls=lambda a: [(a.f(4, 3),), (a.f(1, 3),)], nodes=1)
def global_weight_matrix(x):
    return x @ _W


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2, dtype=np.float32),)], nodes=4)
def module_attributes(x):
    return x[np.newaxis] * np.pi + math.e, x.astype(np.float64).dtype


@case(calls=lambda a: [(a.f(3),), (a.f(2, 2),)], nodes=2)
def global_config_dict(x):
    y = x * CONFIG["scale"]
    if CONFIG["activation"] == "tanh":
        y = np.tanh(y)
    return y


class _Config:
    def __init__(self, scale, bias):
        self.scale = scale
        self.bias = bias


@case(calls=lambda a: [(a.f(3), _Config(2.0, 1.0)), (a.f(2, 2), _Config(0.5, -1.0))], nodes=2)
def user_object_attributes(x, cfg):
    return x * cfg.scale + cfg.bias


class LeakyReLU:
    slope = 0.1


@case(calls=lambda a: [(a.f(5),), (a.f(2, 3),)], nodes=3)
def class_attribute(x):
    return np.where(x > 0, x, LeakyReLU.slope * x)


@dataclass
class LayerConfig:
    units: int
    activation: str = "relu"
    dropout: float = 0.0


@case(calls=lambda a: [(a.f(2, 4), LayerConfig(2)), (a.f(2, 4), LayerConfig(3, "tanh")),
                       (a.f(3, 4), LayerConfig(2, "tanh", 0.5))],
      nodes=[2, 2, 3])
def dataclass_config(x, cfg):
    y = x[:, :cfg.units]
    y = np.maximum(y, 0) if cfg.activation == "relu" else np.tanh(y)
    if cfg.dropout:
        y = y * (1 - cfg.dropout)
    return y


@dataclass
class Params:
    w: np.ndarray
    b: np.ndarray


@case(calls=lambda a: [(a.f(2, 3), Params(a.f(3, 4), a.f(4))), (a.f(5, 2), Params(a.f(2, 2), a.f(2)))], nodes=2)
def dataclass_of_arrays(x, p):
    return x @ p.w + p.b


@case(calls=lambda a: [(a.f(4),), (a.f(2, 2),)], nodes=2)
def math_module_constants(x):
    return np.minimum(x, math.inf) * math.tau, math.floor(2.5), math.isclose(0.1 + 0.2, 0.3)


@case(calls=lambda a: [(a.f(3),), (a.i(2, 2),)], nodes=1)
def numpy_dtype_objects(x):
    target = np.dtype("float32")
    same = x.dtype == np.float64
    return x.astype(target), same, target.itemsize, np.float32 is np.dtype("float32").type
