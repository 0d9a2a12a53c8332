"""The display order of the matrix's axes (no dependencies: used by the pandas-based
comparison and by the service's charts alike)."""
from __future__ import annotations

from typing import Tuple

BACKEND_ORDER = ("eager", "numpy", "triton")


def version_key(python: str) -> Tuple[int, ...]:
    """'3.9' < '3.10'; anything that is not a version sorts last."""
    try:
        return tuple(int(p) for p in python.split("."))
    except ValueError:
        return (999,)


def backend_key(backend: str) -> Tuple[int, str]:
    return (BACKEND_ORDER.index(backend) if backend in BACKEND_ORDER else len(BACKEND_ORDER), backend)
