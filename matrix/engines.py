"""What the cell runner compiles with.

`CompilerEngine` drives the project's compiler through its public API (subject
`tracematrix`); `matrix.dynamo_engine.DynamoEngine` drives torch.compile (subject
`dynamo`). A test or a sanity run may name another engine as "module:attribute" (a class
with the same four methods: backend_state, reset, compile, events), e.g. `PlainEngine`,
which runs every function natively and records nothing. Optional: `warm_up(backend)`,
`environment()` (what the cell's environment adds) and `tolerance` (how close a float
result must be to the plain function's, for an engine whose kernels are not NumPy's).
"""
from __future__ import annotations

import dataclasses
import importlib
from typing import Any, Callable, Dict, List, Optional, Sequence

from matrix import schema


class UnknownBackend(ValueError):
    """The backend name is not one the compiler knows (a typo, not a machine limitation)."""


class SubjectUnavailable(RuntimeError):
    """The subject's compiler cannot run in this interpreter (e.g. torch is not installed):
    the cell says "subject unavailable", with this message.  `backends`: the names the
    subject would offer, so that a typo is still a usage error here."""

    def __init__(self, message: str, backends: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.backends = tuple(backends)


# The engine that measures each subject (`python -m matrix run --subject S`).
ENGINE_OF_SUBJECT = {schema.SUBJECT_TRACEMATRIX: "compiler", schema.SUBJECT_DYNAMO: "dynamo"}


class BackendState:
    """Whether a backend can run here.

    `run_as` is the backend the cases run on (None: the cell runs nothing); `probe`, when
    set, is a backend that can compile but not execute here (a GPU backend without a GPU):
    its kernel counts are still collected, compile-only.
    """

    def __init__(self, cell_status: str, run_as: Optional[str], note: Optional[str] = None,
                 probe: Optional[str] = None) -> None:
        self.cell_status = cell_status
        self.run_as = run_as
        self.note = note
        self.probe = probe


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
    return "no gpu" in lowered or "cuda device" in lowered


def _reason(backend: Any) -> str:
    found = getattr(backend, "unavailable_reason", None)
    if callable(found):
        found = found()
    return str(found or "not in available_backends()")


def _warm_up_function(x: Any) -> Any:
    return (x * 2.0 + 1.0).sum()


class CompilerEngine:
    """The real compiler (`import compiler`)."""

    subject = schema.SUBJECT_TRACEMATRIX

    def __init__(self) -> None:
        self.compiler = importlib.import_module("compiler")
        self.backends = importlib.import_module("compiler.backends")

    def backend_state(self, name: str) -> BackendState:
        """Cell status for backend `name`.

        A GPU backend without a GPU: the suite runs on eager (tracing, graphs, guards and
        results are still checked) and the GPU backend is probed compile-only for its
        kernel counts.
        """
        known = getattr(self.backends, "BACKEND_NAMES", None)
        if known is not None and name not in known:
            raise UnknownBackend(f"unknown backend {name!r}; the compiler offers {', '.join(known)}")
        tables = importlib.import_module("opcode_tables")
        if not tables.has_current_table():
            version = "%d.%d" % tables.running_version()
            return BackendState(schema.CELL_NO_TABLE, None,
                                f"no opcode table for CPython {version}: add opcode_tables/"
                                f"{tables.module_name(tables.running_version())}.py; compiled functions "
                                "run natively there")
        try:
            available = list(self.backends.available_backends())
            if name in available:
                return BackendState(schema.CELL_OK, name)
            reason = _reason(self.backends.get_backend(name))
        except Exception as err:  # an unknown name, or the compiler's own bug: not fatal
            return BackendState(schema.CELL_UNAVAILABLE_PREFIX + (str(err) or type(err).__name__), None)
        if _needs_gpu(reason):
            return BackendState(schema.CELL_NO_GPU, "eager", reason, probe=name)
        return BackendState(schema.CELL_UNAVAILABLE_PREFIX + reason, None)

    def warm_up(self, backend: str) -> None:
        """Compile and run a tiny function once, so that what the compiler and the backend
        import lazily is imported in the parent, not again in every forked worker."""
        import numpy as np

        try:
            self.compile(_warm_up_function, backend)(np.ones(2))
        except Exception:  # the cases will report whatever is wrong, one by one
            pass
        self.reset()

    def reset(self) -> None:
        self.compiler.reset()

    def compile(self, fn: Callable[..., Any], backend: str, **options: Any) -> Callable[..., Any]:
        return self.compiler.compile(fn, backend=backend, **options)

    def events(self) -> List[Dict[str, Any]]:
        return [_event_dict(e) for e in self.compiler.events()]


class PlainEngine:
    """Runs every function natively: checks the suite itself, records no metrics."""

    def backend_state(self, name: str) -> BackendState:
        return BackendState(schema.CELL_OK, name)

    def reset(self) -> None:
        pass

    def compile(self, fn: Callable[..., Any], backend: str, **options: Any) -> Callable[..., Any]:
        return fn

    def events(self) -> List[Dict[str, Any]]:
        return []


def load_engine(spec: str) -> Any:
    """'compiler' (the default), 'dynamo' (torch.compile; SubjectUnavailable without torch),
    'plain', or 'module:attribute' naming an engine class."""
    if spec == "compiler":
        return CompilerEngine()
    if spec == "dynamo":
        from matrix.dynamo_engine import DynamoEngine  # imports torch: only for this subject
        return DynamoEngine()
    if spec == "plain":
        return PlainEngine()
    module_name, _, attribute = spec.partition(":")
    if not attribute:
        raise ValueError(f"engine {spec!r}: expected 'compiler', 'dynamo', 'plain' or 'module:attribute'")
    factory = getattr(importlib.import_module(module_name), attribute)
    return factory()

