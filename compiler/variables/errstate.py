"""``with np.errstate(...)`` traced as a context manager (issue 14, item 4).

Entering and leaving ``np.errstate`` changes nothing a caller can see (NumPy restores its
error state on exit); what it changes is how the floating-point errors of the ops inside the
block are reported.  The graph runs speculatively under a strict error state
(compiler.entry_codegen): every error of a kind that is not ignored raises, the graph fails
and the frame runs natively, which reports it exactly as plain Python.  So a traced block only
has to make that state strict enough: a kind is ignored while the graph runs only if the
caller ignores it and so does every block the trace entered (``strict_errstate``'s
``overrides``).  A graph break inside a traced block moves to the with statement itself
(compiler.tracer: ``break_index``: the instruction that called __enter__), whose stub enters
the block natively.  On 3.14+ the with statement has loaded __exit__ by then (LOAD_SPECIAL):
the stub's stack holds both bound methods, of one manager object rebuilt once.

Only modes given as constant keywords are traced; ``call=`` (a Python callback) is not.
"""
from __future__ import annotations

from typing import Any, Dict

import numpy as np

from ..exc import Unsupported
from .base import Translator, VariableTracker
from .builtins import ExceptionVariable
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
        # A fresh object with the same modes (made where the plain function makes its own),
        # made once: where a with statement loads __exit__ before calling __enter__ (3.14+,
        # table fact with_exit_loaded_before_enter) a break moved to the __enter__ call hands
        # both bound methods to the stub, and NumPy's __exit__ undoes what __enter__ of the
        # same object did (its token).
        return cg.shared(self, lambda: f"{cg.const(np.errstate)}(**{cg.const(dict(self.modes))})")


class _Enter(VariableTracker):
    """The block's ``__enter__``: its modes apply from here (np.errstate.__enter__ returns None)."""

    method = "__enter__"

    def __init__(self, manager: ErrstateVariable) -> None:
        super().__init__(None)
        self.manager = manager

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        tx.enter_errstate(dict(self.manager.modes))
        return ConstantVariable(None)

    def reconstruct(self, cg) -> str:
        # The manager's own bound method (3.14+: on the stack of a break at the __enter__ call).
        return f"{self.manager.reconstruct(cg)}.{self.method}"


class _Exit(_Enter):
    """The block's ``__exit__``: on the way out without an exception, or with an exception of
    the traced program (WITH_EXCEPT_START: a ``raise`` inside the block that a handler of the
    frame catches); np.errstate's __exit__ returns None, so the exception goes on."""

    method = "__exit__"

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        if not (all(_is_none(a) for a in args) or len(args) == 3 and isinstance(args[1], ExceptionVariable)):
            raise Unsupported("np.errstate's __exit__ called with other than an exception of the traced program")
        tx.exit_errstate()
        return ConstantVariable(None)


def _is_none(value: VariableTracker) -> bool:
    return value.is_python_constant() and value.as_python_constant() is None
