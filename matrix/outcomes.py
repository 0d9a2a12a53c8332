"""One call's observable behaviour, and whether two behaviours are the same.

The compiled function must return, print, raise and mutate exactly like the plain one.
"""
from __future__ import annotations

import contextlib
import io
import math
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np


class Outcome:
    def __init__(self, value: Any, error: Optional[BaseException], stdout: str,
                 args_after: Tuple[Any, ...], kwargs_after: Dict[str, Any]) -> None:
        self.value = value
        self.error = error
        self.stdout = stdout
        self.args_after = args_after
        self.kwargs_after = kwargs_after


def observe(fn: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Outcome:
    buffer = io.StringIO()
    value, error = None, None
    with contextlib.redirect_stdout(buffer):
        try:
            value = fn(*args, **kwargs)
        except Exception as err:  # the plain function may raise on purpose
            error = err
    return Outcome(value, error, buffer.getvalue(), args, kwargs)


def difference(a: Any, b: Any, tolerance: float = 0.0, where: str = "result") -> Optional[str]:
    """None when equal; otherwise where and how `b` (compiled) differs from `a` (plain)."""
    if type(a) is not type(b):
        return f"{where}: type {type(b).__name__}, expected {type(a).__name__}"
    if isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return f"{where}: array {b.dtype}{list(b.shape)}, expected {a.dtype}{list(a.shape)}"
        if not _arrays_equal(a, b, tolerance):
            return f"{where}: array values differ"
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{where}: length {len(b)}, expected {len(a)}"
        for i, (x, y) in enumerate(zip(a, b)):
            found = difference(x, y, tolerance, f"{where}[{i}]")
            if found:
                return found
        return None
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{where}: keys {list(b)!r}, expected {list(a)!r}"
        for key in a:
            found = difference(a[key], b[key], tolerance, f"{where}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(a, (float, np.floating)):
        if (math.isnan(a) and math.isnan(b)) or _close(float(a), float(b), tolerance):
            return None
        return f"{where}: {b!r}, expected {a!r}"
    try:
        equal = bool(a == b)
    except Exception:  # objects without a usable ==: compare their text
        equal = repr(a) == repr(b)
    return None if equal else f"{where}: {b!r}, expected {a!r}"


def _close(a: float, b: float, tolerance: float) -> bool:
    return a == b or (tolerance > 0 and abs(a - b) <= tolerance * max(1.0, abs(a)))


def _arrays_equal(a: np.ndarray, b: np.ndarray, tolerance: float) -> bool:
    if a.dtype.kind in "fc":
        if tolerance > 0:
            return bool(np.allclose(a, b, rtol=tolerance, atol=tolerance, equal_nan=True))
        same_nan = np.array_equal(np.isnan(a), np.isnan(b))
        return same_nan and bool(np.all((a == b) | np.isnan(a)))
    return bool(np.array_equal(a, b))


def outcome_difference(plain: Outcome, compiled: Outcome, tolerance: float = 0.0) -> Optional[str]:
    if (plain.error is None) != (compiled.error is None):
        got = f"raised {compiled.error!r}" if compiled.error else "returned normally"
        want = f"raised {plain.error!r}" if plain.error else "returned normally"
        return f"compiled {got}; plain {want}"
    if plain.error is not None:
        if type(plain.error) is not type(compiled.error) or str(plain.error) != str(compiled.error):
            return f"raised {compiled.error!r}, expected {plain.error!r}"
        return None
    return (difference(plain.value, compiled.value, tolerance)
            or (None if plain.stdout == compiled.stdout else
                f"printed {compiled.stdout!r}, expected {plain.stdout!r}")
            or difference(plain.args_after, compiled.args_after, tolerance, "arguments after the call")
            or difference(plain.kwargs_after, compiled.kwargs_after, tolerance,
                          "keyword arguments after the call"))
