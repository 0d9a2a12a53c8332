"""Whether the program has replaced a builtin the compiler uses itself.

The compiler is Python code: while a program has replaced ``builtins.len``
(CPython's test_functools caches it with lru_cache), any compiler code that
calls ``len`` runs the program's function instead.  The compile driver
therefore compiles nothing then (the frame runs natively, the reason
recorded: compiler.convert_frame), and the stage runner makes no new
generated callers then, running a stage the plain way instead
(compiler.resume).  Generated code that runs between the program's stages
looks builtins up in ``ORIGINAL`` (its scope's ``__builtins__``), never in the
live module.
"""
from __future__ import annotations

import builtins
from typing import List

# The builtins as they were when the compiler was imported.
ORIGINAL = dict(builtins.__dict__)
# Names interactive shells and debuggers rebind, which the compiler never calls.
_REBOUND_BY_SHELLS = frozenset({"_", "print", "input", "help", "exit", "quit", "copyright", "credits",
                                "license", "breakpoint", "display", "get_ipython"})
_CHECKED = tuple((name, value) for name, value in ORIGINAL.items() if name not in _REBOUND_BY_SHELLS)
_LIVE = builtins.__dict__
_MISSING = object()


def replaced() -> List[str]:
    """The builtins the program has replaced or deleted since the compiler was imported."""
    return [name for name, value in _CHECKED if _LIVE.get(name, _MISSING) is not value]


def intact() -> bool:
    """Whether every builtin is the one the compiler was imported with.  Calls no builtin
    itself (only the live dict's ``get``): it is what decides whether others may be called."""
    get = _LIVE.get
    for name, value in _CHECKED:
        if get(name, _MISSING) is not value:
            return False
    return True
