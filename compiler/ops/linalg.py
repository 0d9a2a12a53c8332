"""Products, contractions and norms."""
from __future__ import annotations

from typing import List

import numpy as np

from compiler.ops import rules, shapes
from compiler.ops.opinfo import OpInfo


def ops() -> List[OpInfo]:
    return [
        OpInfo("numpy.matmul", np.matmul, "linalg", rules.binary_shape_rule(shapes.matmul),
               source="numpy.matmul"),
        OpInfo("numpy.dot", np.dot, "linalg", rules.binary_shape_rule(shapes.dot), source="numpy.dot"),
        OpInfo("numpy.inner", np.inner, "linalg", rules.binary_shape_rule(shapes.inner),
               source="numpy.inner"),
        OpInfo("numpy.outer", np.outer, "linalg", rules.binary_shape_rule(rules.outer_shape),
               source="numpy.outer"),
        OpInfo("numpy.vdot", np.vdot, "linalg", rules.binary_shape_rule(rules.vdot_shape),
               source="numpy.vdot"),
        OpInfo("numpy.tensordot", np.tensordot, "linalg", rules.tensordot_rule,
               source="numpy.tensordot"),
        OpInfo("numpy.einsum", np.einsum, "linalg", rules.einsum_rule, source="numpy.einsum"),
        OpInfo("numpy.trace", np.trace, "linalg", rules.trace_rule, source="numpy.trace"),
        OpInfo("numpy.linalg.norm", np.linalg.norm, "linalg", rules.norm_rule,
               source="numpy.linalg.norm"),
    ]
