"""A ``numpy.random.Generator`` from outside the trace, whose draws become graph ops.

The generator is an outside object like any other (compiler.variables.user_objects: its
other attributes, ``bit_generator`` included, and its uncaptured methods break the graph at
their use), guarded by its exact type; a captured method (compiler.ops.draws) called on it
adds a draw node whose first argument is the generator's graph input.  The first draw also
guards the type of its bit generator (one of NumPy's own, whose ``state`` the entry reads
without running program code) and marks the generator as changed, so that a traced Python
generator body never draws ahead of the plain program (generators are traced eagerly).
"""
from __future__ import annotations

from typing import Optional

from ..exc import Unsupported
from ..graph import Node
from ..ops.draws import NUMPY_BIT_GENERATORS, draw_op, generator_meta
from ..sources import AttrSource
from .array import ArrayVariable, to_graph_arg, wrap_node
from .base import Translator, VariableTracker
from .constant import ConstantVariable
from .user_objects import UserObjectVariable


class GeneratorVariable(UserObjectVariable):
    """An exact ``np.random.Generator`` read from a source (an argument, a global, an
    attribute, a continuation's value)."""

    def __init__(self, value, source=None) -> None:
        super().__init__(value, source)
        self.meta = generator_meta()
        self.node: Optional[Node] = None

    def as_node(self, tx: Translator) -> Node:
        """Its graph input (made, and its bit generator's type guarded, on first use)."""
        if self.node is None:
            expr = self.source.expr(tx.output.ns.const)
            tx.output.guards.add(
                f"type({AttrSource(self.source, 'bit_generator').name()}) is a NumPy bit generator",
                f"type({expr}.bit_generator) in {tx.output.ns.const(NUMPY_BIT_GENERATORS)}")
            self.node = tx.output.placeholder_for(self)
        return self.node

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        op = draw_op(name)
        if op is None or self.source is None or \
                type(self.value.bit_generator) not in NUMPY_BIT_GENERATORS:
            # (a bit generator of the program's own class: reading its state could run its
            # code, so its draws run natively at a break)
            return super().getattr(tx, name)
        return DrawMethodVariable(self, op)


class DrawMethodVariable(VariableTracker):
    """``rng.<method>`` for a captured draw: calling it adds the draw to the graph."""

    def __init__(self, generator: GeneratorVariable, op) -> None:
        super().__init__(None)
        self.generator = generator
        self.op = op

    def describe(self) -> str:
        return f"method {self.op.name}"

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        # A draw changes the generator: refused inside an eagerly traced generator body
        # (compiler.output_graph.note_mutation), as any mutation of an outside object.
        tx.output.note_mutation(self.generator, f"a draw from {self.generator.describe()}")
        target = args[0] if args else kwargs.get("x")
        if self.op.inplace:  # rng.shuffle(x): like an item assignment into x
            if not isinstance(target, ArrayVariable) or target.meta.kind != "array" or \
                    "x" in kwargs:
                raise Unsupported(f"{self.op.name} of {target.describe() if target else 'nothing'}: "
                                  "only an array of the graph, passed positionally, is shuffled "
                                  "in the graph")
            target.check_inplace(tx, self.op.name)
        graph_args = (self.generator.as_node(tx),) + tuple(to_graph_arg(tx, a) for a in args)
        graph_kwargs = {k: to_graph_arg(tx, v) for k, v in kwargs.items()}
        node = tx.output.graph.call(self.op, graph_args, graph_kwargs)
        result = wrap_node(tx, node)
        if not self.op.inplace:
            return result
        target.rebind(tx, result, self.op.name)
        return ConstantVariable(None)

    def reconstruct(self, cg) -> str:
        raise Unsupported(f"{self.describe()} as a value (a bound method of the generator)")
