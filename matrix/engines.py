"""What the cell runner compiles with.

`CompilerEngine` drives the project's compiler through its public API. A test or a
sanity run may name another engine as "module:attribute" (a class with the same four
methods), e.g. `PlainEngine`, which runs every function natively and records nothing.
"""
from __future__ import annotations

import dataclasses
import importlib
from typing import Any, Callable, Dict, List, Optional

from matrix import schema


class BackendState:
    """Whether a backend can run here; `run_as` is the backend cases actually use."""

    def __init__(self, cell_status: str, run_as: Optional[str], note: Optional[str] = None) -> None:
        self.cell_status = cell_status
        self.run_as = run_as
        self.note = note


def _event_dict(event: Any) -> Dict[str, Any]:
    if hasattr(event, "to_dict"):
        return dict(event.to_dict())
    if dataclasses.is_dataclass(event):
        return dataclasses.asdict(event)
    if isinstance(event, dict):
        return dict(event)
    return dict(vars(event))


def _needs_gpu(reason: str) -> bool:
    lowered = reason.lower()
    return any(word in lowered for word in ("gpu", "cuda", "device", "driver"))


class CompilerEngine:
    """The real compiler (`import compiler`)."""

    def __init__(self) -> None:
        self.compiler = importlib.import_module("compiler")
        self.backends = importlib.import_module("compiler.backends")

    def backend_state(self, name: str) -> BackendState:
        """Cell status for backend `name`; a GPU backend without a GPU still traces on eager."""
        try:
            available = list(self.backends.available_backends())
        except Exception as err:  # the compiler's own bug must not stop the cell
            return BackendState(f"{schema.CELL_ERROR_PREFIX}available_backends() failed: {err}", None)
        if name in available:
            return BackendState(schema.CELL_OK, name)
        try:
            backend = self.backends.get_backend(name)
        except Exception as err:
            reason = str(err) or type(err).__name__
            if _needs_gpu(reason):
                return BackendState(schema.CELL_NO_GPU, "eager", reason)
            return BackendState(schema.CELL_UNAVAILABLE_PREFIX + reason, None)
        reason = str(getattr(backend, "unavailable_reason", None) or
                     getattr(backend, "reason", None) or "not in available_backends()")
        if _needs_gpu(reason) or getattr(backend, "needs_gpu", False):
            return BackendState(schema.CELL_NO_GPU, "eager", reason)
        return BackendState(schema.CELL_UNAVAILABLE_PREFIX + reason, None)

    def reset(self) -> None:
        self.compiler.reset()

    def compile(self, fn: Callable[..., Any], backend: str) -> Callable[..., Any]:
        return self.compiler.compile(fn, backend=backend)

    def events(self) -> List[Dict[str, Any]]:
        return [_event_dict(e) for e in self.compiler.events()]


class PlainEngine:
    """Runs every function natively: checks the suite itself, records no metrics."""

    def backend_state(self, name: str) -> BackendState:
        return BackendState(schema.CELL_OK, name)

    def reset(self) -> None:
        pass

    def compile(self, fn: Callable[..., Any], backend: str) -> Callable[..., Any]:
        return fn

    def events(self) -> List[Dict[str, Any]]:
        return []


def load_engine(spec: str) -> Any:
    """'compiler' (the default), 'plain', or 'module:attribute' naming an engine class."""
    if spec == "compiler":
        return CompilerEngine()
    if spec == "plain":
        return PlainEngine()
    module_name, _, attribute = spec.partition(":")
    if not attribute:
        raise ValueError(f"engine {spec!r}: expected 'compiler', 'plain' or 'module:attribute'")
    factory = getattr(importlib.import_module(module_name), attribute)
    return factory()

