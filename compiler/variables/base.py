"""VariableTracker: a value on the tracer's symbolic stack.

A tracker knows what it stands for at trace time (a constant, an array node
of the graph, a container of other trackers, a function, ...) and, when the
value came from outside the trace, its Source.  Trackers are mutable where the
Python value is (lists, dicts): several names referring to one list share one
tracker, as in the real program.

Methods raise ``Unsupported`` for operations the tracer cannot model; the
base class gives that answer for everything.

Every method takes ``tx``, the translator tracing the frame: trackers sit
below the tracer in the import order, so they know it through ``Translator``,
the part of it they may use (chiefly ``tx.output``: the graph, guards, side
effects, and ``tx.output.wrap`` to make trackers for values they read).
"""
from __future__ import annotations

import itertools
import types
from typing import TYPE_CHECKING, Any, Dict, List, NoReturn, Optional, Protocol, Sequence

from ..exc import Unsupported
from ..sources import Source

if TYPE_CHECKING:  # pragma: no cover
    from ..entry_codegen import OutputCodegen
    from ..output_graph import OutputGraph


class Translator(Protocol):
    """What a tracker may use of the translator tracing it (compiler.tracer's
    ``InstructionTranslatorBase``); handlers, above the tracer, use that class itself."""

    output: "OutputGraph"                   # the trace's graph, guards, side effects, wrap()
    code: types.CodeType                    # the frame's code
    locals: Dict[str, "VariableTracker"]
    cells: Dict[str, Any]                   # name -> functions.CellVariable
    stack: List["VariableTracker"]          # the symbolic stack, bottom first

    def in_exception_handler(self) -> bool:
        """Whether an except or finally handler is running (a graph break cannot be resumed)."""

    def enter_errstate(self, modes: Dict[str, str]) -> None:
        """A traced ``with np.errstate(**modes)`` block begins (compiler.variables.errstate)."""

    def exit_errstate(self) -> None:
        """The innermost traced ``np.errstate`` block ends."""

    def is_live(self, var: "VariableTracker") -> bool:
        """Whether the traced program can still reach ``var`` (a view: writes to its base)."""

    def raise_python_exception(self, exc: BaseException) -> NoReturn:
        """The traced program raises ``exc`` here (it may be caught in the frame)."""

    def run_constant(self, fn: Any, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
        """``fn(*args, **kwargs)`` at trace time; its exceptions are the program's."""

    def speculate_getattr(self, var: "VariableTracker", name: str) -> "VariableTracker":
        """``getattr`` where AttributeError is an answer (hasattr, getattr with a default)."""

    def inline_call(self, fn: Any, bound: Dict[str, "VariableTracker"]) -> "VariableTracker":
        """Trace a call of the user function ``fn`` with its arguments bound."""


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
    def truth(self, tx: Translator) -> bool:
        raise Unsupported(f"truth value of {self.describe()}")

    def unpack(self, tx: Translator) -> List["VariableTracker"]:
        """The items iteration yields, all at once (static iterables only)."""
        raise Unsupported(f"iteration over {self.describe()}")

    def length(self, tx: Translator) -> int:
        return len(self.unpack(tx))

    def getattr(self, tx: Translator, name: str) -> "VariableTracker":
        raise Unsupported(f"attribute {name!r} of {self.describe()}")

    def getitem(self, tx: Translator, key: "VariableTracker") -> "VariableTracker":
        raise Unsupported(f"subscript of {self.describe()}")

    def setitem(self, tx: Translator, key: "VariableTracker",
                value: "VariableTracker") -> None:
        raise Unsupported(f"item assignment on {self.describe()}")

    def delitem(self, tx: Translator, key: "VariableTracker") -> None:
        raise Unsupported(f"item deletion on {self.describe()}")

    def call(self, tx: Translator, args: Sequence["VariableTracker"],
             kwargs: Dict[str, "VariableTracker"]) -> "VariableTracker":
        raise Unsupported(f"call of {self.describe()}")

    def call_method(self, tx: Translator, name: str, args: Sequence["VariableTracker"],
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


class SavedCellVariable(VariableTracker):
    """What LOAD_FAST_AND_CLEAR pushes for a name whose slot holds a cell of the frame (a 3.12+
    comprehension inlined over a name that a nested function captures): the cell object
    itself, which the comprehension's closing STORE_FAST puts back.  Only the tracer's own
    bookkeeping: no code can rebuild a frame's cell object, so a break while one is on the
    stack cannot be made (the frame runs natively for those inputs)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def describe(self) -> str:
        return f"the cell of {self.name!r}, saved by an inlined comprehension"

    def reconstruct(self, cg: Any) -> str:
        raise Unsupported(f"a break inside a comprehension whose variable {self.name!r} shadows a cell "
                          "of the frame: the saved cell object on the stack cannot be rebuilt")
