"""Allow-listed NumPy functions (compiler.ops) as trackers: calls become graph nodes."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..exc import Unsupported
from ..ops import lookup_function
from .array import ArrayVariable, call_op
from .base import FixedObjectVariable, Translator, VariableTracker, all_constant, constants_of
from .constant import ConstantVariable, set_numpy_type_call, wrap_static_attr
from .containers import BaseListVariable


def lookup_numpy_op(value: Any):
    try:
        return lookup_function(value)
    except TypeError:  # unhashable callables
        return None


def _has_array(values) -> bool:
    for v in values:
        if isinstance(v, ArrayVariable):
            return True
        if isinstance(v, BaseListVariable) and _has_array(v.items):
            return True
    return False


class NumpyFunctionVariable(FixedObjectVariable):
    def __init__(self, fn: Any, op, source=None) -> None:
        super().__init__(source)
        self.fn = fn
        self.op = op

    def describe(self) -> str:
        return f"NumPy function {self.op.name}"

    def fixed_object(self) -> Any:
        return self.fn

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name in ("__name__", "__qualname__"):
            return ConstantVariable(getattr(self.fn, name))
        return wrap_static_attr(tx, self.fn, name, self.source)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        if "out" in kwargs:
            raise Unsupported(f"{self.op.name}(..., out=...) writes into an existing array (a side effect)")
        values = list(args) + list(kwargs.values())
        if not _has_array(values) and self.op.kind != "creation" and all_constant(values):
            return _fold(tx, self.fn, args, kwargs)
        return call_op(tx, self.op, list(args), dict(kwargs))


def _fold(tx: Translator, fn, args, kwargs) -> VariableTracker:
    value = tx.run_constant(fn, constants_of(args), {k: v.as_python_constant() for k, v in kwargs.items()})
    if isinstance(value, (np.generic, np.dtype, int, float, complex, bool, str)) or value is None:
        return ConstantVariable(value)
    if isinstance(value, (tuple, list)) and all(isinstance(v, (np.generic, int, float, bool)) for v in value):
        return tx.output.wrap_constant_result(value)
    raise Unsupported(f"{getattr(fn, '__name__', fn)} on constants produced a "
                      f"{type(value).__name__}, which cannot be a graph constant")


def call_numpy_callable(tx: Translator, fn: Any, args, kwargs) -> VariableTracker:
    """Calling a NumPy type (np.float32(...), np.dtype(...)) or other NumPy callable."""
    op = lookup_numpy_op(fn)
    values = list(args) + list(kwargs.values())
    if not _has_array(values) and all_constant(values):
        return _fold(tx, fn, args, kwargs)
    if op is not None:
        return NumpyFunctionVariable(fn, op).call(tx, args, kwargs)
    raise Unsupported(f"{getattr(fn, '__name__', fn)}() of an array is not in the allowlist")


set_numpy_type_call(call_numpy_callable)
