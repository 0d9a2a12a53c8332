"""OutputGraph: what one trace of a frame produces, shared by the frame's
translator and every inlined callee's.

It owns the graph being built, the guards, the namespace of constants the
cache entry's generated code refers to, and the mapping from sources to the
trackers wrapped from them (reading ``L['x']`` twice yields one tracker, so
aliasing in the trace matches the program).
"""
from __future__ import annotations

import builtins
import types
from typing import Any, Dict, List, Optional, Set, Tuple

from .graph import Graph, Node
from .guards import GuardSet, Namespace
from .sources import Source
from .variables.base import VariableTracker


class OutputGraph:
    def __init__(self, code: types.CodeType, f_globals: dict, closure: Optional[tuple]) -> None:
        self.code = code
        self.f_globals = f_globals
        b = f_globals.get("__builtins__", builtins)
        self.f_builtins: dict = b if isinstance(b, dict) else vars(b)
        self.closure = closure
        self.graph = Graph()
        self.ns = Namespace()
        self.guards = GuardSet(self.ns)
        self._wrapped: Dict[Source, VariableTracker] = {}
        # Input arrays in placeholder order, with the source each one is read from.
        self.graph_inputs: List[Source] = []
        # Generators are traced eagerly (all items at creation); that is exact only while no
        # mutation interleaves with their lazy execution.  See note_mutation.
        self.generator_starts: List[int] = []
        self.pending_generators: List[Tuple[Any, Set[int]]] = []

    def note_mutation(self, var: VariableTracker, what: str) -> None:
        """Refuse mutations that would make eager generator tracing differ from Python's
        lazy generators: a generator body changing an object from outside it, or anything
        an unfinished generator can reach changing before the generator is exhausted."""
        from .exc import Unsupported
        if self.generator_starts and var.serial < self.generator_starts[-1]:
            raise Unsupported(f"{what} inside a generator body, on an object from outside it "
                              "(generators are traced eagerly)")
        for iterator, reachable in self.pending_generators:
            if iterator.pos < len(iterator.items) and var.serial in reachable:
                raise Unsupported(f"{what} on an object an unfinished generator reads "
                                  "(generators are traced eagerly)")

    def wrap(self, value: Any, source: Optional[Source]) -> VariableTracker:
        from .variables.builder import wrap
        if source is None:
            return wrap(self, value, None)
        existing = self._wrapped.get(source)
        if existing is None:
            existing = wrap(self, value, source)
            self._wrapped[source] = existing
        return existing

    def wrap_cell_contents(self, source: Source) -> VariableTracker:
        value = eval(source.expr(self.ns.const), self.eval_scope())  # noqa: S307 - our own generated text
        return self.wrap(value, source)

    def eval_scope(self) -> Dict[str, Any]:
        scope = dict(self.ns.values)
        scope.update({"_G": self.f_globals, "_B": self.f_builtins, "_cl": self.closure})
        return scope

    def placeholder_for(self, var) -> Node:
        """The graph input for an array that came from outside (made on first use)."""
        source = var.source
        node = self.graph.placeholder(_placeholder_name(source), var.meta)
        self.graph_inputs.append(source)
        return node


def _placeholder_name(source: Source) -> str:
    # L['x'] -> L_x, G['w'] -> G_w, L['xs'][0] -> L_xs_0 (Graph makes it an identifier).
    return source.name().replace("['", "_").replace("']", "").replace("[", "_").replace("]", "").replace(".", "_")
