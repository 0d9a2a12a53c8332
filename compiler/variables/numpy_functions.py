"""Allow-listed NumPy functions (compiler.ops) as trackers: calls become graph nodes."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..exc import Unsupported
from ..ops import lookup_function
from ..ops.ufunc_methods import METHOD_NAMES, method_op
from ..sources import AttrSource
from .array import ArrayVariable, call_op, to_graph_arg
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
        if isinstance(self.fn, np.ufunc) and name in METHOD_NAMES:
            # a new bound method on every access: the op is found by (ufunc, name), and the
            # ufunc itself is what the guards hold
            return NumpyFunctionVariable(getattr(self.fn, name), method_op(self.fn, name))
        return wrap_static_attr(tx, self.fn, name, self.source)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        if "out" in kwargs:
            raise Unsupported(f"{self.op.name}(..., out=...) writes into an existing array (a side effect)")
        if self.op.name == "numpy.asarray" and len(args) == 1 and not kwargs and \
                isinstance(args[0], ArrayVariable) and args[0].meta.kind == "array":
            return args[0]   # np.asarray of an ndarray is that array itself (identity kept)
        values = list(args) + list(kwargs.values())
        if not _has_array(values) and self.op.kind != "creation" and all_constant(values):
            return _fold(tx, self.fn, args, kwargs)
        if self.op.kind == "query":
            return _query(tx, self.op, args, kwargs)
        if self.op.inplace:
            return _write_in_place(tx, self.op, args, kwargs)
        return call_op(tx, self.op, list(args), dict(kwargs))


class InlinedNumpyFunctionVariable(FixedObjectVariable):
    """A NumPy function written in Python whose source is traced (compiler.ops.catalog.INLINED).
    A function NumPy dispatches through ``__array_function__`` is inlined as its
    implementation only where the dispatched argument is an array of the trace or a Python
    value (then NumPy calls the implementation itself); otherwise the call breaks."""

    def __init__(self, fn: Any, dispatched: Optional[tuple], source=None) -> None:
        super().__init__(source)
        self.fn = fn
        self.dispatched = dispatched

    def describe(self) -> str:
        return f"NumPy function {getattr(self.fn, '__name__', self.fn)} (inlined)"

    def fixed_object(self) -> Any:
        return self.fn

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        from .functions import UserFunctionVariable
        if self.dispatched is None:
            return UserFunctionVariable(self.fn, self.source).call(tx, args, kwargs)
        position, keyword = self.dispatched
        relevant = kwargs.get(keyword, args[position] if len(args) > position else None)
        if not (isinstance(relevant, (ArrayVariable, BaseListVariable)) or
                (relevant is not None and relevant.is_python_constant())):
            raise Unsupported(f"{self.describe()}: its argument {keyword!r} may override NumPy's "
                              "dispatch (__array_function__); it runs natively")
        implementation = self.fn._implementation
        source = AttrSource(self.source, "_implementation") if self.source is not None else None
        return UserFunctionVariable(implementation, source).call(tx, args, kwargs)


def _query(tx: Translator, op, args, kwargs) -> VariableTracker:
    """A function of metadata only (compiler.ops.queries): its answer is a constant."""
    metas = _metas_of(tuple(to_graph_arg(tx, a) for a in args))
    answer = op.infer(*metas, **{k: _metas_of(to_graph_arg(tx, v)) for k, v in kwargs.items()})
    if isinstance(answer, (tuple, list)):  # a list is a fresh one per call, as plain
        return tx.output.wrap_constant_result(answer)
    return ConstantVariable(answer)


def _metas_of(value: Any) -> Any:
    from ..graph import Node
    if isinstance(value, Node):
        return value.meta
    if isinstance(value, (tuple, list)):
        return type(value)(_metas_of(v) for v in value)
    return value


def _write_in_place(tx: Translator, op, args, kwargs) -> VariableTracker:
    """``np.add.at(a, indices, b)``: modelled like item assignment, as a functional op whose
    result the array's tracker is rebound to (its aliases see the write)."""
    target = args[0] if args else None
    if not isinstance(target, ArrayVariable) or target.meta.kind != "array":
        raise Unsupported(f"{op.name}: the array written in place must be an array in the graph")
    target.check_inplace(tx, op.name)
    result = call_op(tx, op, list(args), dict(kwargs), fresh=True)
    target.rebind(tx, result, op.name)  # type: ignore[arg-type]
    return ConstantVariable(None)


def _fold(tx: Translator, fn, args, kwargs) -> VariableTracker:
    value = tx.run_constant(fn, constants_of(args), {k: v.as_python_constant() for k, v in kwargs.items()})
    if isinstance(value, (np.generic, np.dtype, int, float, complex, bool, str)) or value is None \
            or (isinstance(value, type) and issubclass(value, np.generic)):  # np.obj2sctype
        return ConstantVariable(value)
    if isinstance(value, (tuple, list)) and all(isinstance(v, (np.generic, int, float, bool, str)) for v in value):
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
