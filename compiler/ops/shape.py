"""Shape manipulation: views (exact metadata from zero-strided stand-ins) and
copying ops with shape rules."""
from __future__ import annotations

from typing import List

import numpy as np

from compiler.ops import rules, shapes
from compiler.ops.opinfo import OpInfo

# Functions that return a view of their first argument (or the argument
# itself), so evaluating them on a zero-strided stand-in costs nothing.
VIEW_FUNCTIONS = (
    "reshape", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims", "broadcast_to",
    "flip", "fliplr", "flipud", "rot90", "diagonal", "atleast_1d", "atleast_2d", "atleast_3d",
    "real", "imag",
)

_COPYING = (
    ("ravel", rules.flatten_rule),
    ("concatenate", rules.joining_rule(shapes.concatenate)),
    ("stack", rules.joining_rule(shapes.stack)),
    ("vstack", rules.stacking_rule(2, lambda ndim: 0)),
    ("hstack", rules.stacking_rule(1, lambda ndim: 0 if ndim == 1 else 1)),
    ("dstack", rules.stacking_rule(3, lambda ndim: 2)),
    ("column_stack", rules.stacking_rule(-2, lambda ndim: 1)),
    ("repeat", rules.repeat_rule),
    ("roll", rules.same_shape_rule),
    ("copy", rules.same_shape_rule),
    ("ascontiguousarray", rules.same_shape_rule),
    ("sort", rules.sort_rule),
    ("argsort", rules.sort_rule),
    ("diff", rules.diff_rule),
    ("tril", rules.triangle_rule),
    ("triu", rules.triangle_rule),
    # np.tile's shape rule is easy but its padding corner cases are not worth
    # the risk: it runs on zero-filled stand-ins of the full size.
    ("tile", rules.full_eval_rule),
)


def ops() -> List[OpInfo]:
    found = [OpInfo(f"numpy.{name}", getattr(np, name), "shape", rules.view_rule,
                    source=f"numpy.{name}") for name in VIEW_FUNCTIONS]
    for name, rule in _COPYING:
        kind = "other" if name in ("sort", "argsort", "diff", "tril", "triu") else "shape"
        found.append(OpInfo(f"numpy.{name}", getattr(np, name), kind, rule, source=f"numpy.{name}"))
    return found
