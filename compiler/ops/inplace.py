"""NumPy functions that write into their first argument and return None: ``np.put``,
``np.putmask``, ``np.place``, ``np.copyto``, ``np.fill_diagonal``, ``np.put_along_axis``.

Each op calls the function and returns the array it wrote (``inplace``, never lowered to
generated code: NumPy does the write).  The tracker treats the call like item assignment
(compiler.variables.numpy_functions._write_in_place): the array must be a private
temporary or an input whose write the cache entry replays (and undoes when the graph
fails), and its tracker is rebound to the op's result.  The call is validated on a zero
copy at trace time (shapes, casting); errors that depend on the values (an index out of
range) are raised by the graph at run time, and the frame then runs natively.
"""
from __future__ import annotations

from typing import Any, Callable, List, Tuple

import numpy as np

from compiler.exc import Unsupported
from compiler.graph import TensorMeta
from compiler.ops import evaluated, rules
from compiler.ops.opinfo import OpInfo

IN_PLACE_NAMES = ("put", "putmask", "place", "copyto", "fill_diagonal", "put_along_axis")


def written_array_rule(op: Any, args: tuple, kwargs: dict) -> Any:
    """The written array's own metadata, after checking the call on zero stand-ins."""
    array = rules.first_array(op, args)
    if array.kind != "array":
        raise Unsupported(f"{op.name}: the array written must be an array, not a NumPy scalar")
    evaluated.check_on_stand_ins(op, args, kwargs)
    return TensorMeta(array.shape, array.dtype, "array", array.layout)


def returning_target(fn: Callable, name: str) -> Callable:
    def write(target: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
        fn(target, *args, **kwargs)
        return target
    write.__name__ = write.__qualname__ = name
    return write


def entries() -> List[Tuple[Callable, OpInfo]]:
    """(the NumPy function, its op): the op runs a wrapper returning the written array, so
    the registry finds it by the NumPy function's identity instead of the op's ``fn``."""
    found = []
    for name in IN_PLACE_NAMES:
        fn = getattr(np, name)
        found.append((fn, OpInfo(f"numpy.{name}", returning_target(fn, f"{name}_returning_target"),
                                 "other", written_array_rule, inplace=True, lowerable=False)))
    return found
