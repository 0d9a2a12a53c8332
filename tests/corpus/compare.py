"""Exact comparison of a compiled run against the plain run: structure, types, dtypes, shapes, values, aliasing."""
from __future__ import annotations

import dataclasses
import math
from typing import Any, List, Optional

import numpy as np


def assert_same(plain: Any, compiled: Any, *, close: Optional[str] = None, path: str = "result") -> None:
    """Raise AssertionError naming ``path`` where ``compiled`` differs from ``plain``.

    Types must match exactly (list is not tuple, a NumPy scalar is not a 0-d array, float64 is not float32);
    arrays must match in dtype, shape and memory layout and be equal (NaN equals NaN).  ``close`` (a reason,
    from the corpus declaration) relaxes float equality to ``allclose``.
    """
    assert type(compiled) is type(plain), (
        f"{path}: type {type(compiled).__name__} where the plain function gives {type(plain).__name__}")
    if isinstance(plain, np.ndarray):
        _assert_same_array(plain, compiled, close, path)
    elif isinstance(plain, np.generic):
        assert compiled.dtype == plain.dtype, f"{path}: dtype {compiled.dtype} != {plain.dtype}"
        _assert_values(np.asarray(plain), np.asarray(compiled), close, path)
    elif isinstance(plain, float):
        assert (math.isnan(plain) and math.isnan(compiled)) or _close_floats(plain, compiled, close), (
            f"{path}: {compiled!r} != {plain!r}")
    elif isinstance(plain, dict):
        assert list(compiled) == list(plain), f"{path}: keys {list(compiled)} != {list(plain)} (order included)"
        for key in plain:
            assert_same(plain[key], compiled[key], close=close, path=f"{path}[{key!r}]")
    elif isinstance(plain, (list, tuple)):
        assert len(compiled) == len(plain), f"{path}: length {len(compiled)} != {len(plain)}"
        for i, (p, c) in enumerate(zip(plain, compiled)):
            assert_same(p, c, close=close, path=f"{path}[{i}]")
    elif isinstance(plain, np.random.Generator):
        # What a caller can observe of a generator: the state its next draws come from.
        assert_same(plain.bit_generator.state, compiled.bit_generator.state, close=close,
                    path=f"{path}.bit_generator.state")
    elif dataclasses.is_dataclass(plain) and not isinstance(plain, type):
        for f in dataclasses.fields(plain):
            assert_same(getattr(plain, f.name), getattr(compiled, f.name), close=close, path=f"{path}.{f.name}")
    elif hasattr(plain, "__dict__") and not callable(plain) and not isinstance(plain, type):
        assert_same(vars(plain), vars(compiled), close=close, path=f"{path}.__dict__")
    else:
        assert compiled == plain, f"{path}: {compiled!r} != {plain!r}"


def _close_floats(a: float, b: float, close: Optional[str]) -> bool:
    return a == b or (close is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12))


def _assert_same_array(plain: np.ndarray, compiled: np.ndarray, close: Optional[str], path: str) -> None:
    assert compiled.dtype == plain.dtype, f"{path}: dtype {compiled.dtype} != {plain.dtype}"
    assert compiled.shape == plain.shape, f"{path}: shape {compiled.shape} != {plain.shape}"
    for flag in ("C_CONTIGUOUS", "F_CONTIGUOUS"):
        assert compiled.flags[flag] == plain.flags[flag], (
            f"{path}: {flag} is {compiled.flags[flag]} but {plain.flags[flag]} for the plain result")
    _assert_values(plain, compiled, close, path)


def _assert_values(plain: np.ndarray, compiled: np.ndarray, close: Optional[str], path: str) -> None:
    if close is not None and plain.dtype.kind in "fc":
        np.testing.assert_allclose(compiled, plain, rtol=1e-6, atol=1e-9, err_msg=f"{path} ({close})")
    else:
        # dtype and shape are checked by the caller; NaN compares equal to NaN here.
        np.testing.assert_array_equal(compiled, plain, err_msg=path)


def arrays_in(value: Any) -> List[np.ndarray]:
    """Every ndarray reachable through containers, dataclasses and plain objects."""
    found: List[np.ndarray] = []
    _collect(value, found, set())
    return found


def _collect(value: Any, found: List[np.ndarray], seen: set) -> None:
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        found.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _collect(v, found, seen)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            _collect(v, found, seen)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _collect(getattr(value, f.name), found, seen)
    elif hasattr(value, "__dict__") and not callable(value) and not isinstance(value, type):
        _collect(vars(value), found, seen)


def aliasing(result: Any, inputs: Any) -> List[List[bool]]:
    """For each array in ``result``: which input arrays it shares memory with (identity or view)."""
    outs, ins = arrays_in(result), arrays_in(inputs)
    return [[np.shares_memory(o, i) for i in ins] for o in outs]
