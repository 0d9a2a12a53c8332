"""Globals and attributes: LOAD_GLOBAL (push-null bit 3.11+), STORE_GLOBAL, LOAD_ATTR
(method bit 3.12), STORE_ATTR, DELETE_FAST, module attributes."""
import math

import numpy as np

from matrix.cases import case
from matrix.cases.inputs import arr, args

SCALE = 2.5
OFFSETS = (1.0, 2.0)
LAST_SIZE = 0


class _Config:
    gain = 3.0

    def __init__(self):
        self.bias = 0.5


_CONFIG = _Config()


@case("globals_attrs", args(arr(5)))
def read_global_constant(x):
    return x * SCALE + OFFSETS[1]


@case("globals_attrs", args(arr(5)))
def write_global(x):
    global LAST_SIZE
    LAST_SIZE = x.shape[0]
    return x + LAST_SIZE


@case("globals_attrs", args(arr(5)))
def module_attributes(x):
    return x * np.pi + math.e


@case("globals_attrs", args(arr(5)))
def object_and_class_attributes(x):
    return x * _CONFIG.gain + _CONFIG.bias + _Config.gain


@case("globals_attrs", args(arr(5)))
def attribute_write(x):
    cfg = _Config()
    cfg.bias = 2.0
    cfg.extra = 1.0
    return x * cfg.bias + cfg.extra


@case("globals_attrs", args(arr(5)))
def delete_local(x):
    tmp = x * 2.0
    out = tmp + 1.0
    del tmp
    return out


@case("globals_attrs", args(arr(5)))
def numpy_constants_and_dtypes(x):
    return x.astype(np.float32) * np.float32(np.e), np.dtype("float64").itemsize
