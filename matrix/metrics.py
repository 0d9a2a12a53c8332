"""From a case's CompilationEvents (as dicts) to the case-level metrics of the schema.

A case's call sequence may compile several frames (continuations after a graph break)
and several cache entries (recompiles). Counts are summed over every event, so that
`ir_count` stays the sum of `ir_opcodes` and a difference is always explainable; for a
single-call, single-frame case (Dynamo's test functions) this is the frame's ir_count.
`recompile_count` counts events that carry a recompile reason.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any, Dict, List, Optional

from matrix import schema

_SUMMED = ("ir_count", "graph_node_count", "graph_count", "graph_break_count", "guard_count",
           "kernel_count")


def _number(value: Any) -> Optional[float]:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _strings(values: Any) -> List[str]:
    if values is None:
        return []
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        return [str(values)]
    return [str(v) for v in values]


def combined_hash(hashes: List[str]) -> Optional[str]:
    """The graph's own hash for one graph; a hash of the hashes for several."""
    if not hashes:
        return None
    if len(hashes) == 1:
        return hashes[0]
    return hashlib.sha256("\n".join(hashes).encode()).hexdigest()[:16]


def summarise(events: List[Dict[str, Any]], count_kernels: bool = True) -> Dict[str, Any]:
    """Case-level metric fields from the events; None where no event reports a metric."""
    metrics = schema.empty_metrics()
    for name in _SUMMED:
        values = [_number(e.get(name)) for e in events]
        known = [v for v in values if v is not None]
        metrics[name] = int(sum(known)) if known else None
    if not count_kernels:
        metrics["kernel_count"] = None
    times = [_number(e.get("compile_time_s")) for e in events]
    metrics["compile_time_s"] = round(sum(t for t in times if t is not None), 6) if events else None
    recompile_reasons = [str(e["recompile_reason"]) for e in events if e.get("recompile_reason")]
    metrics["recompile_count"] = len(recompile_reasons) if events else None
    opcodes: Counter = Counter()
    for e in events:
        opcodes.update({str(k): int(v) for k, v in (e.get("ir_opcodes") or {}).items()})
    hashes = [h for e in events for h in _strings(e.get("graph_hashes"))]
    guards = [f"[{e.get('compile_id', '?')}] {g}" for e in events for g in _strings(e.get("guards"))]
    kernels = [k for e in events for k in _strings(e.get("kernel_sources") or e.get("kernels"))]
    return {
        "metrics": metrics,
        "ir_opcodes": dict(sorted(opcodes.items())),
        "graph_hashes": hashes,
        "graph_hash": combined_hash(hashes),
        "graph_texts": [t for e in events for t in _strings(e.get("graph_texts"))],
        "guards": guards,
        "break_reasons": [r for e in events for r in _strings(e.get("break_reasons"))],
        "recompile_reasons": recompile_reasons,
        "fallback_reasons": [str(e["fallback_reason"]) for e in events if e.get("fallback_reason")],
        "kernels": kernels,
        "events": [_compact_event(e) for e in events],
    }


def _compact_event(event: Dict[str, Any]) -> Dict[str, Any]:
    """The per-frame record kept in the cell (graph texts live at case level)."""
    keep = ("compile_id", "frame_name", "ir_count", "ir_opcodes", "graph_node_count",
            "graph_count", "graph_break_count", "guard_count", "recompile_reason",
            "compile_time_s", "kernel_count", "graph_hashes", "fallback_reason", "backend")
    return {k: _jsonable(event.get(k)) for k in keep if k in event}


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)
