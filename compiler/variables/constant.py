"""Immutable Python values known at trace time: numbers, strings, None, slices, types, dtypes."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from ..exc import Unsupported
from ..guards import short_repr
from ..sources import AttrSource, Source
from .base import Translator, VariableTracker, all_constant, constants_of

# Values whose methods can be evaluated at trace time (immutable, no side effects).
_PURE_METHOD_TYPES = (str, bytes, int, float, complex, bool, range, slice, frozenset, np.dtype, np.generic)
def _exact_literal(value: Any) -> bool:
    """Whether a literal in generated code gives back this very object: only values CPython
    caches (None, booleans, small ints).  Everything else is passed as the object itself:
    ``is`` keeps its answer (a string built at trace time is not the literal's interned
    string), floats keep signed zeros and NaN payloads (``-2j`` is ``complex(-0.0, -2.0)``),
    and no repr is ever evaluated."""
    tp = type(value)
    return tp is bool or value is None or (tp is int and -5 <= value <= 256)


class ConstantVariable(VariableTracker):
    def __init__(self, value: Any, source=None) -> None:
        super().__init__(source)
        self.value = value

    def describe(self) -> str:
        return f"constant {short_repr(self.value)}"

    def python_type(self) -> type:
        return type(self.value)

    def is_python_constant(self) -> bool:
        return True

    def as_python_constant(self) -> Any:
        return self.value

    def truth(self, tx: Translator) -> bool:
        return bool(self.value)

    def unpack(self, tx: Translator) -> List[VariableTracker]:
        if isinstance(self.value, (str, bytes, range, frozenset)):
            return [ConstantVariable(v) for v in self.value]
        return super().unpack(tx)

    def length(self, tx: Translator) -> int:
        try:
            return len(self.value)
        except TypeError:
            raise Unsupported(f"len() of {self.describe()}") from None

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if isinstance(self.value, type):
            return wrap_static_attr(tx, self.value, name, self.source)
        if not isinstance(self.value, _PURE_METHOD_TYPES) and self.value is not None:
            raise Unsupported(f"attribute {name!r} of {self.describe()}")
        try:
            attr = getattr(self.value, name)
        except AttributeError as e:
            raise Unsupported(f"attribute error at trace time: {e}") from None
        if callable(attr) and not isinstance(attr, type):
            return ConstantMethodVariable(self.value, name, owner=self)
        return ConstantVariable(attr)

    def getitem(self, tx: Translator, key: VariableTracker) -> VariableTracker:
        if isinstance(self.value, (str, bytes, range)) and key.is_python_constant():
            return ConstantVariable(self.value[key.as_python_constant()])
        return super().getitem(tx, key)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        value = self.value
        if isinstance(value, type) and (issubclass(value, np.generic) or value is np.dtype) and \
                _numpy_type_call is not None:
            return _numpy_type_call(tx, value, args, kwargs)
        return super().call(tx, args, kwargs)

    def reconstruct(self, cg) -> str:
        if self.source is not None:
            return cg.source_expr(self.source)
        if _exact_literal(self.value):
            return repr(self.value)
        return cg.const(self.value)  # the object itself: signed zeros, NaN payloads, identity


class ConstantMethodVariable(VariableTracker):
    """A method of an immutable constant (``"a,b".split``), evaluated on constant arguments."""

    def __init__(self, obj: Any, name: str, owner: Optional[VariableTracker] = None) -> None:
        super().__init__(None)
        self.obj = obj
        self.name = name
        self.owner = owner  # the constant's tracker: a method returning the object itself

    def describe(self) -> str:
        return f"method {type(self.obj).__name__}.{self.name}"

    def call(self, tx: Translator, args: Sequence[VariableTracker],
             kwargs: Dict[str, VariableTracker]) -> VariableTracker:
        method = getattr(self.obj, self.name)
        values = [static_value(tx, a, self.describe()) for a in args]
        result = tx.run_constant(method, values, {k: static_value(tx, v, self.describe())
                                                  for k, v in kwargs.items()})
        inputs = ([self.owner] if self.owner is not None else []) + list(args) + list(kwargs.values())
        return tx.output.wrap_constant_result(result, inputs)


def static_value(tx: Translator, var: VariableTracker, what: str) -> Any:
    """The Python value of a constant, or a list of the items of a container of constants
    (for trace-time evaluation: ``", ".join(names)``)."""
    if var.is_python_constant():
        return var.as_python_constant()
    try:
        items = var.unpack(tx)
    except Unsupported:
        items = None
    if items is not None and all_constant(items):
        return constants_of(items)
    raise Unsupported(f"{what} with a non-constant argument ({var.describe()})")


def wrap_static_attr(tx: Translator, owner: Any, name: str, source: Optional[Source]) -> VariableTracker:
    """``owner.name`` for a class or module known at trace time."""
    try:
        value = getattr(owner, name)
    except AttributeError as e:
        tx.raise_python_exception(AttributeError(str(e)))
    if source is None:
        if isinstance(value, (int, float, str, bool, type(None))):
            return ConstantVariable(value)
        raise Unsupported(f"attribute {name!r} of {owner!r} without a source to guard")
    return tx.output.wrap(value, AttrSource(source, name))


# How a NumPy type held as a constant is called (``np.float32(x)``, ``np.dtype("f4")``):
# compiler.variables.numpy_functions installs it; it sits above this module in the
# import order, since it needs array and container trackers.
_numpy_type_call: Optional[Callable[..., VariableTracker]] = None


def set_numpy_type_call(call: Callable[..., VariableTracker]) -> None:
    global _numpy_type_call
    _numpy_type_call = call
