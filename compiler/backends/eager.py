"""The eager backend: runs each node's op on the real values, in order.

Everything that can be decided once is decided at compile time: every value
(inputs, constants, results) gets a slot in one flat list, and each call
becomes ``(fn with its constant keywords bound, argument getter, slot)``, so a call of the
compiled graph is a tight loop over those steps.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Dict, List, Tuple

from compiler.backends.base import Backend, CompiledGraph, check_graph
from compiler.graph import Graph, Node, map_args

Step = Tuple[Callable, Callable[[list], tuple], int]


def _getter(args: tuple, slot_of: Dict[str, int]) -> Callable[[list], tuple]:
    """A function env -> positional arguments; the common cases (all plain
    nodes or constants) avoid rebuilding nested structures."""
    if all(isinstance(a, Node) for a in args):
        slots = [slot_of[a.name] for a in args]
        if len(slots) == 1:
            only = slots[0]
            return lambda env: (env[only],)
        if slots:
            return operator.itemgetter(*slots)
        return lambda env: ()
    if not any(_has_node(a) for a in args):
        return lambda env: args
    return lambda env: map_args(args, lambda node: env[slot_of[node.name]])


def _has_node(value: Any) -> bool:
    found = []
    map_args(value, lambda node: found.append(node))
    return bool(found)


def build_steps(graph: Graph) -> Tuple[List[Step], List[int], int]:
    """(steps, output slots, environment size) for ``graph``."""
    slot_of: Dict[str, int] = {}
    for node in graph.placeholders:
        slot_of[node.name] = len(slot_of)
    steps: List[Step] = []
    for node in graph.call_nodes:
        slot = len(slot_of)
        slot_of[node.name] = slot
        kwargs = node.kwargs
        if any(_has_node(v) for v in kwargs.values()):
            steps.append(_step_with_node_kwargs(node, slot_of, slot))
            continue
        fn = functools.partial(node.opinfo.fn, **kwargs) if kwargs else node.opinfo.fn
        steps.append((fn, _getter(node.args, slot_of), slot))
    outputs = [slot_of[n.name] for n in graph.outputs]
    return steps, outputs, len(slot_of)


def _step_with_node_kwargs(node: Node, slot_of: Dict[str, int], slot: int) -> Step:
    """The rare call with a node among its keyword arguments (full_like(x,
    fill_value=m)): resolved as a whole from the environment."""
    fn, args, kwargs = node.opinfo.fn, node.args, node.kwargs

    def run(env: list) -> Any:
        def value(n: Node) -> Any:
            return env[slot_of[n.name]]
        return fn(*map_args(args, value), **map_args(kwargs, value))

    return (run, lambda env: (env,), slot)


def make_runner(graph: Graph) -> Callable[..., tuple]:
    steps, outputs, size = build_steps(graph)
    n_inputs = len(graph.placeholders)
    names = ", ".join(n.name for n in graph.placeholders)
    template = [None] * size
    get_outputs = _output_getter(outputs)

    def run(*inputs: Any) -> tuple:
        if len(inputs) != n_inputs:
            raise TypeError(f"compiled graph takes {n_inputs} inputs ({names}), got {len(inputs)}")
        env = template[:]
        env[:n_inputs] = inputs
        for fn, get, slot in steps:
            env[slot] = fn(*get(env))
        return get_outputs(env)

    return run


def _output_getter(slots: List[int]) -> Callable[[list], tuple]:
    if len(slots) == 1:
        only = slots[0]
        return lambda env: (env[only],)
    if not slots:
        return lambda env: ()
    return operator.itemgetter(*slots)


class EagerBackend(Backend):
    name = "eager"

    def compile(self, graph: Graph) -> CompiledGraph:
        check_graph(graph, self.name)
        return CompiledGraph(make_runner(graph), graph, self.name, kernel_count=0)
