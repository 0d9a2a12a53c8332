"""Trackers for what a continuation's prologue does that ordinary code never does.

Up to 3.10 a NULL cannot be pushed directly: ``opcode_tables.resume`` re-creates
the ``[NULL, callable]`` pair of a pending LOAD_METHOD call as
``NullCarrier(callable).value`` loaded with LOAD_METHOD (an instance attribute,
so CPython pushes NULL below it).  Tracing a continuation must see exactly that:
the callable, with NULL below it.
"""
from __future__ import annotations

from .base import Translator, VariableTracker


class OpaqueValueVariable(VariableTracker):
    """A continuation's stack value of a type the tracer does not model.  Nothing in the
    trace depends on it (any use is a graph break), so no guard is needed."""

    def __init__(self, cls: type, source) -> None:
        super().__init__(source)
        self.cls = cls

    def describe(self) -> str:
        return f"{self.cls.__qualname__} object (not modelled)"


class TypedOpaqueVariable(OpaqueValueVariable):
    """A value of a builtin type the tracer does not model (a code object, a generator, a
    list iterator, a frame...) that came from outside: guarded by its type only, passed
    along as the object itself; any use of it is a graph break (it runs natively)."""

    def python_type(self) -> type:
        return self.cls


class OpaqueArrayVariable(OpaqueValueVariable):
    """An array of strings, objects, dates or records from outside the trace: only boolean
    and numeric arrays are traced.  Carried along as the object itself (guarded by type and
    dtype kind); any use of it is a graph break, so the frame still compiles around it."""

    def __init__(self, dtype, source) -> None:
        super().__init__(type(None), source)
        self.dtype = dtype

    def describe(self) -> str:
        return f"array of dtype {self.dtype} (only boolean and numeric arrays are traced)"


class NullCarrierClassVariable(VariableTracker):
    def describe(self) -> str:
        return "resume NullCarrier"

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        return NullCarrierVariable(args[0])


class NullCarrierVariable(VariableTracker):
    def __init__(self, value: VariableTracker) -> None:
        super().__init__(None)
        self.value = value

    def describe(self) -> str:
        return f"NullCarrier({self.value.describe()})"

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        return self.value
