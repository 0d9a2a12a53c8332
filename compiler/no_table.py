"""Running on a CPython that has no opcode table yet (a new release, an alpha).

Nothing is traced there: ``compiler.compile`` returns a function that calls
the original natively, after one warning that names the version and says how
to add its table.  Results, exceptions and side effects are the plain
function's, by construction.
"""
from __future__ import annotations

import functools
import os
import sys
import types
import warnings
from typing import Any, Callable

import opcode_tables


class NoOpcodeTableWarning(RuntimeWarning):
    """The running CPython has no opcode table: compiled functions run natively."""


def message(fn: types.FunctionType) -> str:
    try:
        opcode_tables.current_table()
    except opcode_tables.NoTableError as err:
        why = str(err)
    else:  # pragma: no cover - only called when there is no table
        why = "no opcode table"
    return f"tracematrix: {fn.__qualname__} runs natively, not compiled: {why}"


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _caller_stacklevel() -> int:
    """The stacklevel of the first frame outside this package (the user's compile/explain call)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR:
        frame, level = frame.f_back, level + 1
    return level


def native_function(fn: types.FunctionType) -> Callable[..., Any]:
    """A wrapper with ``fn``'s name and docstring that calls ``fn`` natively, after one warning."""
    warnings.warn(message(fn), NoOpcodeTableWarning, stacklevel=_caller_stacklevel())

    @functools.wraps(fn)
    def run_natively(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    run_natively._tracematrix_original = fn  # type: ignore[attr-defined]
    return run_natively
