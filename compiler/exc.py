"""Exceptions of the compiler.

``Unsupported`` is raised while tracing when a construct cannot be captured
(an unknown call, a store that cannot be replayed, a data-dependent shape);
the graph layer (compiler/graph.py, compiler/ops/) raises it too.  Until graph
breaks exist it makes the whole frame run natively; with ``fullgraph=True``
it reaches the user, naming the construct and its file:line.
"""
from __future__ import annotations

from typing import Optional


class Unsupported(Exception):
    """A construct the tracer cannot put into a graph."""

    def __init__(self, reason: str, *, where: Optional[str] = None):
        self.reason = reason
        # "file.py:LINE" of the instruction that failed; the tracer fills it in
        # when the graph layer raises without knowing the location.
        self.where = where
        super().__init__(self._message())

    def _message(self) -> str:
        return f"{self.reason} (at {self.where})" if self.where else self.reason

    def __str__(self) -> str:
        return self._message()


class InternalCompilerError(Exception):
    """A bug in the compiler itself, raised only when
    ``compiler.config.raise_internal_errors`` is set (the project's own tests);
    otherwise the frame runs natively and the error is recorded."""


class CompilerOptionError(ValueError):
    """An invalid option or backend name given to ``compiler.compile``."""


class BackendUnavailable(RuntimeError):
    """A backend cannot run a compiled graph on this machine (no GPU, package missing).
    It reaches the caller: it is not a failure of the program's ops, so a compiled entry
    does not hide it behind a native run."""
