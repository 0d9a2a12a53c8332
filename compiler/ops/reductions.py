"""Reductions and cumulative reductions, as NumPy functions.

The parameter names after the array are the ones NumPy's functions and
``ndarray`` methods share, so methods.py reuses these rules.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from compiler.exc import Unsupported
from compiler.ops import rules
from compiler.ops.effects import DATA_DEPENDENT_WARNINGS
from compiler.ops.opinfo import OpInfo

# name -> parameters after the array, in positional order.
PARAMS: Dict[str, Tuple[str, ...]] = {
    "sum": ("axis", "dtype", "out", "keepdims", "initial", "where"),
    "prod": ("axis", "dtype", "out", "keepdims", "initial", "where"),
    "mean": ("axis", "dtype", "out", "keepdims", "where"),
    "max": ("axis", "out", "keepdims", "initial", "where"),
    "amax": ("axis", "out", "keepdims", "initial", "where"),
    "min": ("axis", "out", "keepdims", "initial", "where"),
    "amin": ("axis", "out", "keepdims", "initial", "where"),
    "std": ("axis", "dtype", "out", "ddof", "keepdims", "where"),
    "var": ("axis", "dtype", "out", "ddof", "keepdims", "where"),
    "argmax": ("axis", "out", "keepdims"),
    "argmin": ("axis", "out", "keepdims"),
    "all": ("axis", "out", "keepdims", "where"),
    "any": ("axis", "out", "keepdims", "where"),
    "ptp": ("axis", "out", "keepdims"),
    "median": ("axis", "out", "overwrite_input", "keepdims"),
    "nansum": ("axis", "dtype", "out", "keepdims"),
    "nanprod": ("axis", "dtype", "out", "keepdims"),
    "nanmean": ("axis", "dtype", "out", "keepdims"),
    "nanmax": ("axis", "out", "keepdims"),
    "nanmin": ("axis", "out", "keepdims"),
    "nanstd": ("axis", "dtype", "out", "ddof", "keepdims"),
    "nanvar": ("axis", "dtype", "out", "ddof", "keepdims"),
    "nanmedian": ("axis", "out", "overwrite_input", "keepdims"),
    "count_nonzero": ("axis", "keepdims"),
    "average": ("axis", "weights", "returned", "keepdims"),
}
CUMULATIVE: Dict[str, Tuple[str, ...]] = {
    "cumsum": ("axis", "dtype", "out"),
    "cumprod": ("axis", "dtype", "out"),
    "nancumsum": ("axis", "dtype", "out"),
    "nancumprod": ("axis", "dtype", "out"),
}


def _checked(name: str, rule):
    if name in DATA_DEPENDENT_WARNINGS:
        def refused(op, args, kwargs):
            raise Unsupported(f"{op.name} issues a warning depending on the values (an all-NaN "
                              "slice), which a graph could not keep in its place; it runs natively")
        return refused
    if name in ("median", "nanmedian"):
        def no_overwrite(op, args, kwargs):
            if kwargs.get("overwrite_input"):
                raise Unsupported(f"{op.name}: overwrite_input=True writes into the input")
            return rule(op, args, kwargs)
        return no_overwrite
    if name == "average":
        def no_weights(op, args, kwargs):
            if kwargs.get("weights") is not None or kwargs.get("returned") or len(args) > 2:
                raise Unsupported(f"{op.name}: weights=/returned= are not supported; "
                                        "write the weighted sum out")
            return rule(op, args, kwargs)
        return no_weights
    return rule


def ops() -> List[OpInfo]:
    found = []
    for name, params in PARAMS.items():
        fn = getattr(np, name, None)
        if fn is None:
            continue
        found.append(OpInfo(f"numpy.{name}", fn, "reduction",
                            _checked(name, rules.reduction_rule(params)), source=f"numpy.{name}"))
    for name, params in CUMULATIVE.items():
        found.append(OpInfo(f"numpy.{name}", getattr(np, name), "reduction",
                            rules.reduction_rule(params, cumulative=True), source=f"numpy.{name}"))
    return found
