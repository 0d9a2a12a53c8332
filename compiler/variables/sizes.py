"""Sizes read into Python: ``len(x)``, ``x.shape[i]``, ``x.size`` of a dynamic dimension.

A size of a dynamic dimension (a ``SymInt``, compiler.symbolic_shapes) read into Python is
not specialized at the read: it becomes a ``SizeVariable``, a dynamic scalar
(compiler.variables.scalars) that also knows its symbolic expression.  So, as Dynamo's
SymInt:

* integer arithmetic with ints and other sizes (``+ - * // %``, unary ``-``) gives another
  size (``s0 // 2``); other arithmetic (``n / 2``, ``n * 0.5``) a dynamic scalar computed
  again by the entry from the size's expression (``L['x'].shape[0]``);
* a comparison records the relation that held as a guard (``s0 >= 5``), not the value;
* as an operand of an elementwise op it is a graph input, which the entry reads from the
  call's arrays; as the one size of a reshape's target that is not a constant it becomes
  ``-1`` once a guard says they are equal (``compiler.variables.array``);
* every other use needs its value (a branch on it, ``range(n)``, an index into a Python
  container, formatting, a NumPy argument that is a size, ``int(n)``): the size is
  specialized there, with the guard ``s0 == 7`` named for the use.

Sizes 0 and 1 are never symbolic (compiler.symbolic_shapes), so never such a tracker.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from ..guards import GuardSet
from ..sources import ConstNamer, Source
from ..symbolic_shapes import SymInt, concrete, render
from .base import Translator, VariableTracker
from .constant import ConstantVariable
from .scalars import DynamicScalarVariable, dynamic_dtype

_serials = itertools.count()


@dataclass(frozen=True)
class SizeSource(Source):
    """Where the entry reads a size: the expression over its symbols' sources.  Kept as text
    (a SymInt is not hashable without specializing it); each read is a distinct source, as
    each read of ``x.shape[0]`` is a distinct int object (``is`` must not find them one)."""

    text: str
    code: str
    serial: int = field(default_factory=lambda: next(_serials))

    def name(self) -> str:
        return self.text

    def expr(self, const: ConstNamer) -> str:
        return self.code  # (the symbols' code was made with this entry's namespace)


class SizeVariable(DynamicScalarVariable):
    """A Python int that is a size of dynamic dimensions (an expression over symbols)."""

    def __init__(self, sym: SymInt, guards: GuardSet, dtype: np.dtype) -> None:
        env = sym.env
        text = render(sym.expr, lambda i: env.names[i])
        code = render(sym.expr, env.symbol_code)
        super().__init__(sym.hint, SizeSource(text, code), guards, dtype)
        self.sym = sym

    def describe(self) -> str:
        return f"dynamic size {self.sym}"

    def specialize(self, reason: Optional[str] = None) -> None:
        """The value is used: the guard ``<size> == <value>``, named for the use (``reason``, or
        what the trace is doing: compiler.symbolic_shapes.ShapeEnv.current_reason)."""
        if not self.specialized:
            self.specialized = True
            self.sym.specialize(reason)

    def truth(self, tx: Translator) -> bool:
        # A relation (``s0 - 2 != 0``), decided without a guard where the range tells.
        return bool(self.value) if self.specialized else bool(self.sym)


def size_variable(value: Any, guards: GuardSet) -> VariableTracker:
    """A size read into Python: a SizeVariable for a symbolic one, else a constant."""
    dtype = dynamic_dtype(value.hint) if isinstance(value, SymInt) else None
    if dtype is None:  # (a static size; or a product of sizes past int64, NumPy's object)
        return ConstantVariable(concrete(value, "a size past int64"))
    return SizeVariable(value, guards, dtype)


def _sym_of(var: VariableTracker) -> Any:
    """The operand as a SymInt or an int, or None where it is neither."""
    if isinstance(var, SizeVariable) and not var.specialized:
        return var.sym
    if type(var) is ConstantVariable and type(var.value) is int:
        return var.value
    return None


_INTEGER = {"add": "__add__", "sub": "__sub__", "mul": "__mul__", "floordiv": "__floordiv__",
            "mod": "__mod__", "neg": "__neg__", "pos": "__pos__"}
_RELATIONS = {"lt": "__lt__", "le": "__le__", "eq": "__eq__", "ne": "__ne__", "gt": "__gt__",
              "ge": "__ge__"}


def size_arithmetic(name: str, operands: Sequence[VariableTracker]) -> Optional[VariableTracker]:
    """``a <op> b`` (or ``<op> a``) where an operand is a size and the others are sizes or
    ints: integer arithmetic gives a size, a comparison its answer (the relation recorded as
    a guard).  None otherwise (the caller goes on: a dynamic scalar, or the value)."""
    if name not in _INTEGER and name not in _RELATIONS:
        return None
    if not any(isinstance(v, SizeVariable) and not v.specialized for v in operands):
        return None
    syms = [_sym_of(v) for v in operands]
    if any(s is None for s in syms):
        return None
    method = _INTEGER.get(name) or _RELATIONS[name]
    if not isinstance(syms[0], SymInt):  # int <op> size: the size's reflected method
        syms = [syms[1], syms[0]]
        method = {"__add__": "__radd__", "__sub__": "__rsub__", "__mul__": "__rmul__",
                  "__floordiv__": "__rfloordiv__", "__mod__": "__rmod__", "__lt__": "__gt__",
                  "__le__": "__ge__", "__gt__": "__lt__", "__ge__": "__le__"}.get(method, method)
    try:
        result = getattr(syms[0], method)(*syms[1:])
    except ArithmeticError:
        return None  # (n // 0: the value path raises the program's error)
    if isinstance(result, SymInt):
        return size_variable(result, next(v.guards for v in operands if isinstance(v, SizeVariable)))
    return ConstantVariable(result)


def _int_of(var: VariableTracker) -> Optional[int]:
    """A reshape dimension known as an int (a constant, or a size already specialized)."""
    if type(var) is ConstantVariable and type(var.value) is int:
        return var.value
    if isinstance(var, SizeVariable) and var.specialized:
        return var.value
    return None


def reshape_target(shape: Sequence[Any], items: Sequence[VariableTracker]) -> Optional[list]:
    """A reshape target over an array of ``shape`` whose one dimension is a size, that size
    replaced by ``-1``: NumPy computes -1 as the array's size over the other dimensions, which
    the guards recorded here make equal to the size on every accepted call.  None where the
    target is not of that form (the size is then specialized as an argument)."""
    at = [i for i, v in enumerate(items) if isinstance(v, SizeVariable) and not v.specialized]
    if len(at) != 1:
        return None
    others = [_int_of(v) for i, v in enumerate(items) if i != at[0]]
    if any(o is None or o < 0 for o in others):
        return None  # (another -1, or a value NumPy rejects: the plain path raises its error)
    known = 1
    for o in others:
        known *= o
    total: Any = 1
    for d in shape:
        total = total * d
    size = items[at[0]].sym  # type: ignore[attr-defined]
    hint_total = total.hint if isinstance(total, SymInt) else total
    if known == 0 or hint_total % known != 0 or hint_total // known != size.hint:
        return None  # NumPy raises (or -1 is not this size): left to the value path
    if not (total % known == 0 and size == total // known):  # (each records its guard)
        return None
    return [ConstantVariable(-1) if i == at[0] else v for i, v in enumerate(items)]
