"""Deterministic input factories: every call gets freshly built arguments."""
from __future__ import annotations

import copy
from typing import Any, Callable, Tuple

import numpy as np


class Fresh:
    """Marks an argument that is rebuilt for every call."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self.build = build

    def __call__(self) -> Any:
        return self.build()


def arr(*shape: int, dtype: str = "float64", start: float = 1.0) -> Fresh:
    """A C-contiguous array 1, 1.5, 2, ... (positive, so log/sqrt/division stay finite)."""
    def build() -> np.ndarray:
        size = int(np.prod(shape)) if shape else 1
        values = start + 0.5 * np.arange(size)
        return values.reshape(shape).astype(dtype)
    return Fresh(build)


def ints(*shape: int, dtype: str = "int64") -> Fresh:
    def build() -> np.ndarray:
        size = int(np.prod(shape)) if shape else 1
        return (np.arange(size) % 7 + 1).reshape(shape).astype(dtype)
    return Fresh(build)


def args(*values: Any) -> Callable[[], Tuple[Any, ...]]:
    """A call's argument factory: Fresh values are built, others deep-copied."""
    def build() -> Tuple[Any, ...]:
        return tuple(v() if isinstance(v, Fresh) else copy.deepcopy(v) for v in values)
    return build


def kwargs(**values: Any) -> Callable[[], dict]:
    def build() -> dict:
        return {k: (v() if isinstance(v, Fresh) else copy.deepcopy(v)) for k, v in values.items()}
    return build
