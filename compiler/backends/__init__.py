"""Backends: how a captured graph runs.

    get_backend("eager" | "numpy" | "triton") -> Backend
    available_backends() -> names usable on this machine
    Backend.compile(graph) -> CompiledGraph; compiled(*inputs) -> tuple of outputs

``eager`` interprets the graph, ``numpy`` runs generated NumPy source with
fused elementwise chains, ``triton`` lowers fused regions to Triton kernels on
a GPU (without one it compiles them ahead of time and reports "no GPU").  Fallbacks are logged on ``logging.getLogger("compiler.backends")``.
"""
from __future__ import annotations

from typing import Dict, List

from compiler.backends.base import Backend, CompiledGraph, LoweringError
from compiler.backends.eager import EagerBackend
from compiler.backends.numpy_codegen import NumpyBackend
from compiler.backends.triton import TritonBackend

_BACKENDS: Dict[str, Backend] = {b.name: b for b in (EagerBackend(), NumpyBackend(), TritonBackend())}

BACKEND_NAMES = tuple(_BACKENDS)


def get_backend(name: str) -> Backend:
    """The backend called ``name``; ValueError naming the accepted names."""
    backend = _BACKENDS.get(name) if isinstance(name, str) else None
    if backend is None:
        raise ValueError(f"unknown backend {name!r}; accepted: {', '.join(BACKEND_NAMES)}")
    return backend


def available_backends() -> List[str]:
    """Names of the backends that can run here (triton only with a GPU)."""
    return [name for name, backend in _BACKENDS.items() if backend.available()]


__all__ = ["BACKEND_NAMES", "Backend", "CompiledGraph", "LoweringError", "available_backends",
           "get_backend"]
