"""Array creation with static arguments.

``np.empty`` and ``np.empty_like`` are graph ops that call NumPy's function when the graph
runs, as the plain function does: their contents are whatever memory held, in the plain
function as in the compiled one, so what both promise is the shape, the dtype and a new
array per call.  That is why they must never be folded into a constant (one array
shared by every call) nor made at trace time: their kind, "creation", keeps the tracer
from folding calls on constant arguments, and no rule runs them on real shapes.  arange, linspace, eye, identity and tri infer their
metadata by running on the static arguments (their size is the arguments').
``np.array`` / ``np.asarray`` are captured only for a constant nested list or
tuple of numbers (each call creates a fresh array, as the plain call does).
"""
from __future__ import annotations

from typing import List

import numpy as np

from compiler.ops import rules
from compiler.ops.opinfo import OpInfo

_CREATION = (
    ("zeros_like", rules.like_rule),
    ("ones_like", rules.like_rule),
    ("full_like", rules.like_rule),
    ("zeros", rules.shaped_creation_rule),
    ("ones", rules.shaped_creation_rule),
    ("full", rules.shaped_creation_rule),
    ("empty_like", rules.like_rule),
    ("empty", rules.shaped_creation_rule),
    ("arange", rules.full_eval_rule),
    ("linspace", rules.full_eval_rule),
    ("eye", rules.full_eval_rule),
    ("identity", rules.full_eval_rule),
    ("tri", rules.full_eval_rule),
    # of a constant nested list/tuple of numbers only (see rules.constant_array_rule)
    ("array", rules.constant_array_rule),
    ("asarray", rules.constant_array_rule),
)


def ops() -> List[OpInfo]:
    return [OpInfo(f"numpy.{name}", getattr(np, name), "creation", rule, source=f"numpy.{name}")
            for name, rule in _CREATION]
