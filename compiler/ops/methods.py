"""``ndarray`` methods and the attributes that are ops (T, real, imag).

A method op's ``fn`` calls the method on its first argument, so it works for
NumPy scalars too (x.sum() returns one, and np.float64 has the same methods).
Methods that mutate (sort, fill, resize, put, setfield, itemset) or leave
NumPy (item, tolist, tobytes) are not here: the tracer runs them natively.
"""
from __future__ import annotations

import operator
from typing import Callable, List

import numpy as np

from compiler.ops import rules, shapes
from compiler.ops.opinfo import OpInfo
from compiler.ops.reductions import CUMULATIVE, PARAMS

_REDUCTION_METHODS = ("sum", "prod", "mean", "max", "min", "std", "var", "argmax", "argmin",
                      "all", "any", "ptp")

_OTHER_METHODS = (
    ("reshape", "shape", rules.view_rule),
    ("transpose", "shape", rules.view_rule),
    ("swapaxes", "shape", rules.view_rule),
    ("squeeze", "shape", rules.view_rule),
    ("diagonal", "shape", rules.view_rule),
    ("ravel", "shape", rules.flatten_rule),
    ("flatten", "shape", rules.flatten_rule),
    ("copy", "shape", rules.same_shape_rule),
    ("astype", "elementwise", rules.same_shape_rule),
    ("clip", "elementwise", rules.clip_rule),
    ("round", "elementwise", rules.same_shape_rule),
    ("conj", "elementwise", rules.same_shape_rule),
    ("conjugate", "elementwise", rules.same_shape_rule),
    ("repeat", "shape", rules.repeat_rule),
    ("argsort", "other", rules.sort_rule),
    ("dot", "linalg", rules.binary_shape_rule(shapes.dot)),
    ("trace", "linalg", rules.trace_rule),
)

# Attributes computed by an op (a new array or view), as opposed to
# ops.ARRAY_ATTRIBUTES, which are answered from the metadata.
ATTRIBUTE_OPS = ("T", "real", "imag")


def method_caller(name: str) -> Callable:
    def call_method(self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)
    call_method.__name__ = call_method.__qualname__ = f"ndarray_{name}"
    return call_method


def ops() -> List[OpInfo]:
    found = []
    for name in _REDUCTION_METHODS:
        if not hasattr(np.ndarray, name):
            continue  # ndarray.ptp is gone in NumPy 2
        found.append(OpInfo(f"ndarray.{name}", method_caller(name), "reduction",
                            rules.reduction_rule(PARAMS[name]), method=name, source=f"method:{name}"))
    for name in ("cumsum", "cumprod"):
        found.append(OpInfo(f"ndarray.{name}", method_caller(name), "reduction",
                            rules.reduction_rule(CUMULATIVE[name], cumulative=True), method=name,
                            source=f"method:{name}"))
    for name, kind, rule in _OTHER_METHODS:
        found.append(OpInfo(f"ndarray.{name}", method_caller(name), kind, rule, method=name,
                            source=f"method:{name}"))
    for name in ATTRIBUTE_OPS:
        found.append(OpInfo(f"ndarray.{name}", operator.attrgetter(name), "shape", rules.view_rule,
                            method=name, source=f"attr:{name}"))
    return found
