"""Trace rules: what the tracer does with a callable it meets.

- "graph":   an allow-listed NumPy function (compiler.ops) or one the user
             registered with ``allow_in_graph``: a graph node.
- "fold":    a pure function evaluated at trace time on constant arguments
             (math, operator, most builtins).
- "inline":  a user Python function: traced by a nested translator.
- "skip":    anything else, and everything passed to ``disable``:
             Unsupported: a graph break, the call runs natively (a user function
             whose own trace failed becomes a compiled frame of its own).

NumPy's own Python source is never inlined: a NumPy function that is not in
the allowlist is "skip".
"""
from __future__ import annotations

import builtins
import math
import operator
import types
from typing import Any, Callable, Dict

_disabled: Dict[int, Any] = {}
_allowed: Dict[int, Any] = {}


def disable(fn: Callable) -> None:
    _disabled[id(fn)] = fn


def is_disabled(fn: Any) -> bool:
    return id(fn) in _disabled and _disabled[id(fn)] is fn


def allow(fn: Callable, opinfo: Any) -> None:
    _allowed[id(fn)] = (fn, opinfo)


def allowed_opinfo(fn: Any):
    entry = _allowed.get(id(fn))
    return entry[1] if entry is not None and entry[0] is fn else None


def original_of_compiled(fn: Any) -> Any:
    """The user function behind a ``compiler.compile`` wrapper, else None.

    The wrapper's own code is generated dispatch (guards, cache entries): a
    caller inlines, and ``explain`` traces, the function it wraps instead.
    """
    return getattr(fn, "_tracematrix_original", None) if isinstance(fn, types.FunctionType) else None


def reset() -> None:
    _disabled.clear()
    _allowed.clear()


# Modules whose functions are pure and evaluated at trace time on constants.
FOLDABLE_MODULES = (math, operator)

# Builtins evaluated at trace time when every argument is a constant.
FOLDABLE_BUILTINS = frozenset(getattr(builtins, name) for name in (
    "abs", "all", "any", "ascii", "bin", "bool", "chr", "complex", "divmod", "float", "format",
    "frozenset", "hash", "hex", "int", "len", "max", "min", "oct", "ord", "pow", "repr", "round",
    "sorted", "str", "sum", "tuple", "callable", "bytes",
))


def is_numpy_object(value: Any) -> bool:
    module = getattr(value, "__module__", None) or ""
    return module == "numpy" or module.startswith("numpy.")


def is_foldable_module_function(value: Any) -> bool:
    module = getattr(value, "__module__", None)
    if isinstance(value, (types.BuiltinFunctionType,)) and module in ("math", "_operator", "operator"):
        return True
    return False
