"""``with np.errstate(...)`` traced as a context manager (issue 14, item 4).

Entering and leaving ``np.errstate`` changes nothing a caller can see (NumPy restores its
error state on exit); what it changes is how the floating-point errors of the ops inside the
block are reported.  The graph runs speculatively under a strict error state
(compiler.entry_codegen): every error of a kind that is not ignored raises, the graph fails
and the frame runs natively, which reports it exactly as plain Python.  So a traced block only
has to make that state strict enough: a kind is ignored while the graph runs only if the
caller ignores it and so does every block the trace entered (``strict_errstate``'s
``overrides``).  A graph break inside a traced block moves to the with statement itself
(compiler.tracer: ``break_index``), whose stub enters the block natively as before.

Only modes given as constant keywords are traced; ``call=`` (a Python callback) is not.
"""
from __future__ import annotations

from typing import Any, Dict

import numpy as np

from opcode_tables import current_table

from ..exc import Unsupported
from .base import Translator, VariableTracker
from .constant import ConstantVariable

_KINDS = ("all", "divide", "over", "under", "invalid")
_MODES = ("ignore", "warn", "raise", "call", "print", "log")


class ErrstateClassVariable(VariableTracker):
    """``np.errstate`` itself."""

    def describe(self) -> str:
        return "numpy.errstate"

    def python_type(self) -> type:
        return type

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        if current_table().fact("with_exit_loaded_before_enter"):
            # A break inside the block could not move back to the with statement with one
            # manager object (the table fact's note): made natively, entered natively.
            raise Unsupported("np.errstate is entered natively where a with statement loads __exit__ "
                              "before __enter__")
        if args or not all(k in _KINDS for k in kwargs) or \
                not all(v.is_python_constant() and v.as_python_constant() in _MODES for v in kwargs.values()):
            raise Unsupported("np.errstate with arguments other than constant error modes (call=, positional)")
        return ErrstateVariable({k: v.as_python_constant() for k, v in kwargs.items()})

    def reconstruct(self, cg) -> str:
        return cg.const(np.errstate)


class ErrstateVariable(VariableTracker):
    """An ``np.errstate(**modes)`` object made in the trace, not entered yet."""

    def __init__(self, modes: Dict[str, str]) -> None:
        super().__init__(None)
        self.modes = modes

    def describe(self) -> str:
        return f"np.errstate({', '.join(f'{k}={v!r}' for k, v in self.modes.items())})"

    def python_type(self) -> type:
        return np.errstate

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name == "__enter__":
            return _Enter(self)
        if name == "__exit__":
            return _Exit(self)
        return super().getattr(tx, name)

    def reconstruct(self, cg) -> str:
        # A fresh object with the same modes (made where the plain function makes its own).
        return f"{cg.const(np.errstate)}(**{cg.const(dict(self.modes))})"


class _Enter(VariableTracker):
    """The block's ``__enter__``: its modes apply from here (np.errstate.__enter__ returns None)."""

    def __init__(self, manager: ErrstateVariable) -> None:
        super().__init__(None)
        self.manager = manager

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        tx.enter_errstate(dict(self.manager.modes))
        return ConstantVariable(None)


class _Exit(_Enter):
    """The block's ``__exit__`` on the way out without an exception (it suppresses nothing)."""

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        if not all(a.is_python_constant() and a.as_python_constant() is None for a in args):
            raise Unsupported("an exception leaving a traced np.errstate block")
        tx.exit_errstate()
        return ConstantVariable(None)
