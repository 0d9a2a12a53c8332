"""``compiler.explain(fn, *args, **kwargs)``: compile and run once, and say what happened.

Like ``torch._dynamo.explain``: the graphs captured, how many breaks and why
(with file:line), the ops in each graph, the guards installed, the events
and compile times.  Uses a private cache, so the answer does not depend on
earlier calls; its events are also recorded in ``compiler.events()``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, List

from . import events as events_mod
from . import trace_rules
from .api import check_function, resolve_backend
from .cache import FrameCache, entries_made, entries_since
from .events import CompilationEvent
from .wrappers import make_compiled


@dataclass
class ExplainOutput:
    graphs: List[Any] = field(default_factory=list)          # compiler.graph.Graph objects
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: List[str] = field(default_factory=list)   # "reason (at file:line)"
    ops_per_graph: List[List[str]] = field(default_factory=list)
    guards: List[str] = field(default_factory=list)
    events: List[CompilationEvent] = field(default_factory=list)
    compile_times: List[float] = field(default_factory=list)
    result: Any = None                                        # what the call returned

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {sum(len(ops) for ops in self.ops_per_graph)}"]
        if self.break_reasons:
            lines.append("Break Reasons:")
            lines += [f"  {i + 1}. {reason}" for i, reason in enumerate(self.break_reasons)]
        for i, ops in enumerate(self.ops_per_graph):
            lines.append(f"Ops per Graph ({i + 1}):")
            lines += [f"  {op}" for op in ops]
        if self.guards:
            lines.append(f"Guards ({len(self.guards)}):")
            lines += [f"  {g}" for g in self.guards]
        for event in self.events:
            lines.append(f"[{event.compile_id}] {event.frame_name}: ir_count={event.ir_count} "
                         f"compile_time={event.compile_time_s * 1000:.2f} ms"
                         + (f" runs natively: {event.fallback_reason}" if event.fallback_reason else ""))
        return "\n".join(lines)


def explain(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> ExplainOutput:
    check_function(fn, "explain")
    fn = trace_rules.original_of_compiled(fn) or fn
    frame_cache = FrameCache(fn.__code__)
    compiled = make_compiled(fn, resolve_backend("eager"), False, {}, frame_cache)
    before = len(events_mod.all_events())
    first_entry = entries_made()
    result = compiled(*args, **kwargs)
    new_events = events_mod.all_events()[before:]
    out = ExplainOutput(events=new_events, result=result)
    # Every frame compiled by this call, in order: the function, its continuations after
    # graph breaks, and callees that became frames of their own.
    for entry in entries_since(first_entry):
        if entry.graph is not None:
            out.graphs.append(entry.graph)
            out.ops_per_graph.append([node.target for node in entry.graph.call_nodes])
    for event in new_events:
        out.graph_count += event.graph_count
        out.graph_break_count += event.graph_break_count
        out.break_reasons += event.break_reasons
        out.guards += event.guards
        out.compile_times.append(event.compile_time_s)
    return out
