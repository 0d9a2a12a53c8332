"""Arguments of a loop's continuations, wrapped (and guarded) only when the trace uses them.

A graph break inside a loop makes continuations that run once per iteration
(compiler.graph_break): the rest of the body, the loop's next step.  Their
arguments include values that change every iteration but that the trace only
carries along: the loop variable stored and never read before the next break,
``float(loss)`` on its way to ``losses.append``, the iterator on its way to the
FOR_ITER that runs natively.  Wrapped eagerly, each would be guarded by value
(a constant) or by length (a list), and every iteration would compile again
until the cache limit sent the loop back to plain Python.

``LazyArgument`` stands for such an argument until an instruction depends on
it: moving it between the stack and locals does not (the tracer's ``*_raw``
stack helpers), anything else realizes it through ``output.wrap`` (its guards
installed then, from the same value and source as an eager wrap would use).
Never realized, it reaches the next stage as the argument itself (its source).
A method of a plain list, dict or set loaded from one is a C method looked up
on the type (no user code runs): kept as that, guarded by the type alone, so
``losses.append`` breaks at its call without the list's length in a guard.
"""
from __future__ import annotations

from typing import Any, Optional

from opcode_tables import current_table
from opcode_tables.resume import stack_restorable

from ..sources import Source
from .base import NULL, Translator, VariableTracker
from .user_objects import NativeMethodVariable

# Types whose C methods a lazy argument lends without being realized: their attribute lookup
# is the type's own (no __getattribute__ / __getattr__ of the user's), checked by an exact
# type guard.
_C_CONTAINER_TYPES = (list, dict, set)
_C_METHOD_TYPE = type(list.append)   # method_descriptor (not a classmethod such as dict.fromkeys)


class LazyArgument(VariableTracker):
    """A continuation's argument not looked at yet (see the module docstring)."""

    def __init__(self, value: Any, source: Source) -> None:
        super().__init__(source)
        self.value = value
        self._realized: Optional[VariableTracker] = None

    def describe(self) -> str:
        if self._realized is not None:
            return self._realized.describe()
        return f"{type(self.value).__qualname__} argument"

    @property
    def realized_tracker(self) -> Optional[VariableTracker]:
        """The tracker ``realize`` made, or None while the argument is not looked at."""
        return self._realized

    def realize(self, tx: Translator) -> VariableTracker:
        """The tracker an eager wrap would have made (made once, shared by every reference)."""
        if self._realized is None:
            self._realized = tx.output.wrap(self.value, self.source)
        return self._realized

    def native_method(self, tx: Translator, name: str) -> Optional[VariableTracker]:
        """``value.name`` for a C method of a plain container, without realizing it; None
        for anything else."""
        tp = type(self.value)
        if self._realized is not None or tp not in _C_CONTAINER_TYPES or \
                not isinstance(tp.__dict__.get(name), _C_METHOD_TYPE):
            return None
        tx.output.guards.type_match(self.source, tp)
        return LentMethodVariable(self, name)

    def reconstruct(self, cg) -> str:
        if self._realized is not None:
            return self._realized.reconstruct(cg)
        return cg.source_expr(self.source)


def realized(value: VariableTracker, tx: Translator) -> VariableTracker:
    """``value`` as the trace may use it (a lazy argument realized)."""
    return value.realize(tx) if value.__class__ is LazyArgument else value


class LentMethodVariable(NativeMethodVariable):
    """A C method of a lazy argument: its call breaks the graph (runs natively), except where
    a break could not be resumed (inside an exception handler; below a stack the interpreter
    cannot rebuild, as 3.8's finally reached normally with BEGIN_FINALLY's NULL): there the
    container is realized and the call traced as usual."""

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        nulls = tuple(value is NULL for value in tx.stack)
        if tx.in_exception_handler() or not stack_restorable(nulls, current_table()):
            return self.obj.realize(tx).call_method(tx, self.name, args, kwargs)
        return super().call(tx, args, kwargs)
