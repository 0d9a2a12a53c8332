"""Lazy annotations (PEP 649, 3.14+; loaded only where the running table's fact
``lazy_annotations`` is true): a nested ``def`` whose annotations name something defined
later compiles its ``__annotate__`` function (SET_FUNCTION_ATTRIBUTE 16) instead of
evaluating them, which raises NameError where annotations are eager."""
import numpy as np

from matrix.cases import case
from matrix.cases.inputs import arr, args


@case("lazy_annotations", args(arr(5)))
def nested_def_with_forward_annotations(x):
    def scale(v: DefinedLater, k: float = 2.0) -> DefinedLater:  # noqa: F821
        return v * k

    return scale(x) + np.sum(x)


@case("lazy_annotations", args(arr(4), 3.0))
def lambda_and_annotated_def(x, k):
    def shift(v: np.ndarray, by: float) -> "np.ndarray":
        return v + by

    return shift(x, k) * (lambda t: t - 1.0)(k)


class DefinedLater:  # referenced above only by annotations that are never evaluated
    pass
