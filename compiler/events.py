"""CompilationEvent: what happened when one frame was compiled.

One event per compilation of a frame (first compile, each recompile, and the
decision to run the frame natively).  Field names are part of the harness's
result schema (DESIGN.md, "Metrics").
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class CompilationEvent:
    compile_id: str                      # "<frame>/<recompile>", as Dynamo's [0/1] markers
    frame_name: str                      # co_qualname / co_name of the compiled frame
    filename: str = ""
    firstlineno: int = 0
    backend: str = "eager"
    # Dynamo's rule (compiler.tracer): the frame and every function it inlines add the
    # instructions run since their last taken jump at each taken jump, the frame also at its
    # return; an inlined return, a generator's yield and a graph break end a segment
    # uncounted; a frame that breaks is counted twice up to the break (Dynamo restarts
    # there); instructions count as Dynamo's cleaned bytecode has them (table field
    # dynamo_counts_as).  Checked against Dynamo's own numbers: tests/compiler/test_ir_count*.
    ir_count: int = 0
    ir_opcodes: Dict[str, int] = field(default_factory=dict)   # ir_count by opcode (sums to it)
    # Every opcode traced inside inlined callees (comprehensions before 3.12, helpers,
    # generators), counted by ir_count or not: what opcode coverage needs.
    inlined_opcodes: Dict[str, int] = field(default_factory=dict)
    graph_node_count: int = 0            # call nodes over this frame's graphs
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: List[str] = field(default_factory=list)
    guard_count: int = 0
    guards: List[str] = field(default_factory=list)
    recompile_reason: Optional[str] = None   # the first failing guard of the newest entry; None on a first compile
    # On a recompile, the first failing guard of every existing entry, oldest entry first
    # (the last one is recompile_reason); empty on a first compile.
    failed_guards: List[str] = field(default_factory=list)
    compile_time_s: float = 0.0
    kernel_count: int = 0
    graph_hashes: List[str] = field(default_factory=list)
    graph_texts: List[str] = field(default_factory=list)
    # Why the frame runs natively (unsupported construct, internal error,
    # cache limit), or None when it runs compiled.
    fallback_reason: Optional[str] = None
    internal_error: Optional[str] = None     # traceback text of a tracer bug, if one happened

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


_events: List[CompilationEvent] = []


def record(event: CompilationEvent) -> None:
    _events.append(event)


def all_events() -> List[CompilationEvent]:
    return list(_events)


def clear() -> None:
    _events.clear()
