"""Elementwise NumPy functions: the ufuncs and a few elementwise wrappers.

Every entry is named by the spelling that exists on all supported NumPy
releases (1.22 to 2.x); aliases that are the same object (np.abs and
np.absolute, np.mod and np.remainder, NumPy 2's np.acos ...) map to the entry
through ``lookup_function`` by identity.
"""
from __future__ import annotations

from typing import List

import numpy as np

from compiler.ops import rules
from compiler.ops.opinfo import OpInfo

# Canonical names of the ufuncs captured as elementwise ops.
UFUNC_NAMES = (
    "add", "subtract", "multiply", "divide", "floor_divide", "power", "float_power",
    "remainder", "fmod", "divmod", "negative", "positive", "absolute", "fabs", "sqrt", "cbrt",
    "square", "reciprocal", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "logaddexp", "logaddexp2", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2",
    "hypot", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg",
    "degrees", "radians", "floor", "ceil", "trunc", "rint", "sign", "signbit", "copysign",
    "nextafter", "spacing", "heaviside", "maximum", "minimum", "fmax", "fmin", "logical_and",
    "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "invert", "left_shift", "right_shift", "greater", "greater_equal", "less", "less_equal",
    "equal", "not_equal", "isnan", "isinf", "isfinite", "modf", "frexp", "ldexp", "gcd", "lcm",
    "conjugate",
)

# Elementwise functions that are not ufuncs: (name, rule).
_WRAPPERS = (
    ("where", rules.where_rule),
    ("clip", rules.clip_rule),
    ("nan_to_num", rules.no_copy_false_rule),
    ("isclose", rules.elementwise_rule),
    ("round", rules.elementwise_rule),
    ("around", rules.elementwise_rule),
    ("sinc", rules.elementwise_rule),
    ("angle", rules.elementwise_rule),
    ("fix", rules.elementwise_rule),
)


def ops() -> List[OpInfo]:
    found = []
    for name in UFUNC_NAMES:
        ufunc = getattr(np, name)
        multi = ufunc.nout > 1
        found.append(OpInfo(f"numpy.{name}", ufunc, "elementwise", rules.elementwise_rule,
                            ufunc=None if multi else ufunc, source=f"numpy.{name}"))
    for name, rule in _WRAPPERS:
        fn = getattr(np, name, None)
        if fn is not None:
            found.append(OpInfo(f"numpy.{name}", fn, "elementwise", rule, source=f"numpy.{name}"))
    return found
