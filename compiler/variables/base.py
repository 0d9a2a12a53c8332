"""VariableTracker: a value on the tracer's symbolic stack.

A tracker knows what it stands for at trace time (a constant, an array node
of the graph, a container of other trackers, a function, ...) and, when the
value came from outside the trace, its Source.  Trackers are mutable where the
Python value is (lists, dicts): several names referring to one list share one
tracker, as in the real program.

Methods raise ``Unsupported`` for operations the tracer cannot model; the
base class gives that answer for everything.
"""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from ..exc import Unsupported
from ..sources import Source

if TYPE_CHECKING:  # pragma: no cover
    from ..tracer import InstructionTranslator
    from ..entry_codegen import OutputCodegen


_serials = itertools.count()


def current_serial() -> int:
    """The serial the next tracker will get."""
    return VariableTracker().serial + 1


class VariableTracker:
    """Base class of every symbolic value."""

    def __init__(self, source: Optional[Source] = None) -> None:
        self.source = source
        # Creation order: tells objects older than a traced generator body from its own.
        self.serial = next(_serials)

    # -- what it is -------------------------------------------------------
    def python_type(self) -> type:
        raise Unsupported(f"type of {self.describe()} is not known at trace time")

    def describe(self) -> str:
        return type(self).__name__

    def is_python_constant(self) -> bool:
        return False

    def as_python_constant(self) -> Any:
        raise Unsupported(f"{self.describe()} is not a constant at trace time")

    # -- Python protocol --------------------------------------------------
    def truth(self, tx: "InstructionTranslator") -> bool:
        raise Unsupported(f"truth value of {self.describe()}")

    def unpack(self, tx: "InstructionTranslator") -> List["VariableTracker"]:
        """The items iteration yields, all at once (static iterables only)."""
        raise Unsupported(f"iteration over {self.describe()}")

    def length(self, tx: "InstructionTranslator") -> int:
        return len(self.unpack(tx))

    def getattr(self, tx: "InstructionTranslator", name: str) -> "VariableTracker":
        raise Unsupported(f"attribute {name!r} of {self.describe()}")

    def getitem(self, tx: "InstructionTranslator", key: "VariableTracker") -> "VariableTracker":
        raise Unsupported(f"subscript of {self.describe()}")

    def setitem(self, tx: "InstructionTranslator", key: "VariableTracker",
                value: "VariableTracker") -> None:
        raise Unsupported(f"item assignment on {self.describe()}")

    def delitem(self, tx: "InstructionTranslator", key: "VariableTracker") -> None:
        raise Unsupported(f"item deletion on {self.describe()}")

    def call(self, tx: "InstructionTranslator", args: Sequence["VariableTracker"],
             kwargs: Dict[str, "VariableTracker"]) -> "VariableTracker":
        raise Unsupported(f"call of {self.describe()}")

    def call_method(self, tx: "InstructionTranslator", name: str, args: Sequence["VariableTracker"],
                    kwargs: Dict[str, "VariableTracker"]) -> "VariableTracker":
        return self.getattr(tx, name).call(tx, args, kwargs)

    # -- output -----------------------------------------------------------
    def reconstruct(self, cg: "OutputCodegen") -> str:
        """A Python expression that rebuilds this value in the cache entry's code."""
        if self.source is not None:
            return cg.source_expr(self.source)
        raise Unsupported(f"cannot return or keep {self.describe()} after the frame")

    def __repr__(self) -> str:
        src = f" from {self.source.name()}" if self.source is not None else ""
        return f"<{self.describe()}{src}>"


def constants_of(items: Sequence[VariableTracker]) -> List[Any]:
    return [item.as_python_constant() for item in items]


def all_constant(items: Sequence[VariableTracker]) -> bool:
    return all(item.is_python_constant() for item in items)


class FixedObjectVariable(VariableTracker):
    """A tracker for one fixed Python object that the trace never changes (a
    builtin, a NumPy function, a class): the object is its own constant value."""

    def fixed_object(self) -> Any:
        raise NotImplementedError

    def python_type(self) -> type:
        return type(self.fixed_object())

    def is_python_constant(self) -> bool:
        return True

    def as_python_constant(self) -> Any:
        return self.fixed_object()


class NullVariable(VariableTracker):
    """The NULL that 3.11+ call sequences (and LOAD_FAST_AND_CLEAR) put on the stack."""

    def describe(self) -> str:
        return "NULL"


# The one NULL stack marker: handlers push it, the tracer and graph breaks test ``is NULL``.
NULL = NullVariable()
