"""Dynamic scalars: Python ints and floats that are graph inputs instead of constants.

Every Python value starts as a constant (guarded by value).  When a recompile
is caused by the value guard of an int or float source (an argument, a
global, a list item, a continuation's stack value) failing, the frame's cache
marks that source dynamic (Dynamo's "unspecialize after the first change",
compiler.convert_frame); later traces wrap it as a ``DynamicScalarVariable``.

Such a tracker stays symbolic where NumPy takes it as an operand of an
elementwise op (``x * a``, ``np.where(m, x, a)``): there it is a "python"
placeholder of the graph, and the graph is called with the caller's object;
and through Python arithmetic with ints, floats and other dynamic scalars
(``a * 2 + n``): the result is a dynamic scalar whose source is that
expression (``ArithmeticSource``), evaluated again by the entry, in Python.
Every other use (a branch, ``range``, an index, a shape, a dict key, ``is``,
formatting, a builtin or NumPy function on scalars alone, a keyword argument
of an op) asks for its value through ``as_python_constant``, which
*specializes* it: the value guard is installed then, named as a
specialization, and the trace goes on with the constant, exactly as before.
Returned or stored, it is rebuilt from its source (the caller's very object,
or the expression computed again).

What a dynamic scalar is guarded on besides its type: under NumPy 1.x
value-based casting, ``numpy.min_scalar_type`` of its value, which is all that
decides the dtype NumPy gives it next to arrays; under NEP 50 (NumPy 2) a
Python scalar is weak, its value decides no dtype, and an int is only guarded
to fit int64 (a larger one is an object to NumPy).  Errors the value causes at
run time (an int that does not fit an int8 array, overflow in a cast, a
negative integer power) make the graph fail and the frame run natively
(compiler.entry_codegen), as for any data-dependent error.
"""
from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..graph import Node, TensorMeta
from ..guards import GuardSet
from ..ops.standins import VALUE_BASED_CASTING
from ..sources import ConstNamer, Source
from .base import Translator, VariableTracker
from .constant import ConstantVariable

_INT64 = np.iinfo(np.int64)


def value_class(value: Any) -> Optional[np.dtype]:
    """Under NumPy 1.x value-based casting, what decides the dtype NumPy gives a Python int or
    float next to arrays: ``numpy.min_scalar_type`` of it, and for a non-negative int whose
    type is unsigned, whether it also fits the signed type of that size (NumPy promotes such a
    "small unsigned" value like the signed type: an int8 array plus 127 is int8, plus 133 is
    int16, though both are uint8 to min_scalar_type).  The small ones are the class of their
    unsigned type; None for the others, which stay constants."""
    dtype = np.min_scalar_type(value)
    if dtype.kind == "u" and value > np.iinfo(np.dtype(f"i{dtype.itemsize}")).max:
        return None
    return dtype


def dynamic_dtype(value: Any) -> Optional[np.dtype]:
    """The dtype a dynamic ``value`` (exactly an int or a float) has in the graph's metadata,
    or None where it must stay a constant (an int NumPy would hold as an object; under
    value-based casting, an int that value_class leaves out)."""
    if type(value) is int and not _INT64.min <= value <= _INT64.max:
        return None
    if VALUE_BASED_CASTING:
        return value_class(value)
    return np.dtype(np.int64 if type(value) is int else np.float64)


class DynamicScalarVariable(VariableTracker):
    """A Python int or float from outside the trace whose value is not (yet) guarded."""

    def __init__(self, value: Any, source: Source, guards: GuardSet, dtype: np.dtype) -> None:
        super().__init__(source)
        self.value = value
        self.guards = guards
        self.meta = TensorMeta((), dtype, "python")
        self.specialized = False
        self.node: Optional[Node] = None

    def describe(self) -> str:
        return f"dynamic {type(self.value).__name__}"

    def python_type(self) -> type:
        return type(self.value)

    def is_python_constant(self) -> bool:
        return True  # its value is there to be had, at the price of a guard

    def as_python_constant(self) -> Any:
        self.specialize()
        return self.value

    def specialize(self) -> None:
        """The trace needs the value itself: guarded on it from here on (the guard's name says
        so, and is the recompile reason when another value comes)."""
        if not self.specialized:
            self.specialized = True
            self.guards.constant_match(self.source, self.value,
                                       why=" (a dynamic scalar specialized: the trace uses its value)")

    def as_graph_operand(self, tx: Translator) -> Any:
        """The value as an operand of an elementwise op: the graph input (made on first use),
        or the constant where the value is guarded already."""
        if self.specialized and self.node is None:
            return self.value
        if self.node is None:
            if VALUE_BASED_CASTING:
                self.guards.scalar_class_match(self.source, self.meta.dtype, value_class)
            elif type(self.value) is int:
                self.guards.add(f"{self.source.name()} fits int64",
                                f"{_INT64.min} <= {self.source.expr(self.guards.ns.const)} <= {_INT64.max}")
            self.node = tx.output.placeholder_for(self)
        return self.node

    # -- everything else uses the value -----------------------------------
    def _constant(self) -> ConstantVariable:
        return ConstantVariable(self.as_python_constant(), self.source)

    def truth(self, tx: Translator) -> bool:
        return self._constant().truth(tx)

    def unpack(self, tx: Translator) -> List[VariableTracker]:
        return self._constant().unpack(tx)

    def length(self, tx: Translator) -> int:
        return self._constant().length(tx)

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        return self._constant().getattr(tx, name)

    def getitem(self, tx: Translator, key: VariableTracker) -> VariableTracker:
        return self._constant().getitem(tx, key)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return self._constant().call(tx, args, kwargs)



# -- Python arithmetic on dynamic scalars ------------------------------------------------
# Operators (``**`` with a constant exponent) on Python ints and floats that keep a dynamic scalar dynamic: the result is the
# expression itself (``(L['a'] * 2)``), which the entry evaluates again on the call's values,
# in Python, wherever the trace uses it (a graph input, a rebuilt value, a guard).  Ints and
# floats are immutable and their arithmetic pure, so evaluating it again is exact.
_ARITHMETIC: Dict[str, Tuple[str, Callable[..., Any]]] = {
    "add": ("+", operator.add), "sub": ("-", operator.sub), "mul": ("*", operator.mul),
    "truediv": ("/", operator.truediv), "floordiv": ("//", operator.floordiv), "mod": ("%", operator.mod),
    "neg": ("-", operator.neg), "pos": ("+", operator.pos), "pow": ("**", operator.pow),
}
_serials = itertools.count()


@dataclass(frozen=True)
class ArithmeticSource(Source):
    """A value computed by the frame from dynamic scalars and int / float constants."""

    symbol: str
    operands: Tuple[Any, ...]  # Sources, and int / float constants
    # Two computations of one expression are two objects (``is`` must not find them the same).
    serial: int = field(default_factory=lambda: next(_serials))

    def name(self) -> str:
        return _spell(self.symbol, [o.name() if isinstance(o, Source) else repr(o) for o in self.operands])

    def expr(self, const: ConstNamer) -> str:
        # A float constant as the object itself (signed zeros, NaN payloads); an int's repr is exact.
        return _spell(self.symbol, [o.expr(const) if isinstance(o, Source) else
                                    repr(o) if type(o) is int else const(o) for o in self.operands])


def _spell(symbol: str, parts: Sequence[str]) -> str:
    if len(parts) == 1:
        return f"({symbol}{parts[0]})"
    return f"({parts[0]} {symbol} {parts[1]})"


def python_arithmetic(name: str, operands: Sequence[VariableTracker]) -> Optional[VariableTracker]:
    """``a <op> b`` (or ``<op> a``) on Python ints / floats where an operand is a dynamic scalar
    not yet specialized: a dynamic scalar computed by that expression.  None where the operation
    is not one of these (the caller takes the constant path, which specializes), or where the
    value would fail or leave int64 (the constant path raises the program's error, or guards
    the value)."""
    if name not in _ARITHMETIC or not any(_symbolic(v) for v in operands):
        return None
    if name == "pow" and _symbolic(operands[1]):
        return None  # (a dynamic exponent: the entry would compute any power it is given, twice)
    parts: List[Any] = []
    values: List[Any] = []
    guards = None
    for var in operands:
        if _symbolic(var):
            parts.append(var.source)
            values.append(var.value)
            guards = var.guards
        elif (type(var) is ConstantVariable or isinstance(var, DynamicScalarVariable)) and \
                type(var.value) in (int, float):  # (a specialized dynamic scalar: its value is guarded)
            parts.append(var.value)
            values.append(var.value)
        else:
            return None
    symbol, fn = _ARITHMETIC[name]
    try:
        value = fn(*values)
    except (ArithmeticError, ValueError):
        return None
    if type(value) not in (int, float):
        return None  # ((-8) ** 0.5 is complex)
    dtype = dynamic_dtype(value)
    if dtype is None or guards is None:
        return None
    source = ArithmeticSource(symbol, tuple(parts))
    guards.type_match(source, type(value))  # (also: the expression evaluates, on this call's values)
    return DynamicScalarVariable(value, source, guards, dtype)


def _symbolic(var: VariableTracker) -> bool:
    return isinstance(var, DynamicScalarVariable) and not var.specialized
