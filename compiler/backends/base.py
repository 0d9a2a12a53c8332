"""What every backend provides: ``Backend.compile(graph) -> CompiledGraph``."""
from __future__ import annotations

import logging
from typing import Any, Callable, Optional

from compiler.graph import Graph

logger = logging.getLogger("compiler.backends")


class LoweringError(Exception):
    """A backend cannot lower this graph; the caller falls back to eager."""


class CompiledGraph:
    """A graph made callable: ``compiled(*inputs)`` returns a tuple with one
    value per graph output, in order.

    ``fn`` is the underlying callable (same signature) for callers that want to
    skip this object's ``__call__`` layer; ``backend`` names the backend that
    actually runs it (``"eager"`` after a fallback, with ``fallback_reason``).
    """

    __slots__ = ("fn", "graph", "backend", "kernel_count", "source", "fallback_reason")

    def __init__(self, fn: Callable[..., tuple], graph: Graph, backend: str, *,
                 kernel_count: int = 0, source: Optional[str] = None,
                 fallback_reason: Optional[str] = None):
        self.fn = fn
        self.graph = graph
        self.backend = backend
        self.kernel_count = kernel_count
        self.source = source
        self.fallback_reason = fallback_reason

    def __call__(self, *inputs: Any) -> tuple:
        return self.fn(*inputs)

    def __repr__(self) -> str:
        return f"<CompiledGraph backend={self.backend} kernels={self.kernel_count}>"


class Backend:
    """A way to run graphs.  Subclasses set ``name`` and implement ``compile``."""

    name: str = "?"

    def available(self) -> bool:
        return self.unavailable_reason() is None

    def unavailable_reason(self) -> Optional[str]:
        """None when usable here, else why not (shown as the cell status)."""
        return None

    def compile(self, graph: Graph) -> CompiledGraph:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<Backend {self.name}>"


def check_graph(graph: Graph, backend: str) -> None:
    if not isinstance(graph, Graph):
        raise TypeError(f"{backend} backend: compile expects a compiler.graph.Graph, "
                        f"got {type(graph).__name__}")
    if graph.output_node is None:
        raise ValueError(f"{backend} backend: the graph has no output; call graph.output(values) first")
