"""Where a series last changed, and what changed with it (pure functions over points).

IR counts are deterministic, so the answer is exact: the first run of the trailing
stretch of equal values is the first bad run, the run before it the last good one, and
what changed between them is read off their environments, metric definitions and
schema versions - no statistics, no thresholds.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from matrix.explain import explain_ir_count

# Environment keys by what they say changed; any other differing key is listed as
# "environment" (a new platform, another runner image).
UPSTREAM = ("python_version", "python_implementation", "python_build", "python_compiler",
            "numpy", "triton", "torch")
PROJECT = ("git_commit", "git_dirty")
_ORDER = {"upstream": 0, "project": 1, "definition": 2, "schema": 3, "environment": 4}


def change_point(values: Sequence[Any]) -> Tuple[Optional[int], int]:
    """(index of the last good point or None, index of the first point with the current value)."""
    if not values:
        raise ValueError("no points")
    first = len(values) - 1
    while first > 0 and values[first - 1] == values[-1]:
        first -= 1
    return (first - 1 if first > 0 else None), first


def _kind(key: str) -> str:
    if key in UPSTREAM:
        return "upstream"
    if key in PROJECT:
        return "project"
    return "environment"


def what_changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """Every difference between two points' environments, metric definition and schema."""
    found = []
    env_before, env_after = before["environment"] or {}, after["environment"] or {}
    for key in sorted(set(env_before) | set(env_after)):
        if env_before.get(key) != env_after.get(key):
            found.append({"what": key, "kind": _kind(key), "before": env_before.get(key),
                          "after": env_after.get(key)})
    if before["metric_version"] != after["metric_version"]:
        found.append({"what": "metric_version", "kind": "definition",
                      "before": before["metric_version"], "after": after["metric_version"]})
    if before["schema_version"] != after["schema_version"]:
        found.append({"what": "schema_version", "kind": "schema",
                      "before": before["schema_version"], "after": after["schema_version"]})
    return sorted(found, key=lambda item: (_ORDER[item["kind"]], item["what"]))


def summary(metric: str, last_good: Optional[Mapping[str, Any]], first_bad: Mapping[str, Any],
            changed: List[Dict[str, Any]]) -> str:
    """One sentence for people: the runs, the values and the upstream that moved."""
    if last_good is None:
        return (f"{metric} has been {first_bad['value']} since the first run in this series "
                f"({first_bad['run_id']})")
    moved = ", ".join(f"{c['what']} {c['before']} -> {c['after']}" for c in changed
                      if c["kind"] != "environment") or "nothing recorded in the environment"
    return (f"{metric} changed {last_good['value']} -> {first_bad['value']} at run {first_bad['run_id']} "
            f"(last good: {last_good['run_id']}); changed with it: {moved}")


def opcode_explanation(last_good: Mapping[str, Any], first_bad: Mapping[str, Any],
                       opcodes_before: Optional[Mapping[str, int]],
                       opcodes_after: Optional[Mapping[str, int]]) -> Optional[Dict[str, Any]]:
    """For ir_count: the traced opcodes that account for the change (None without both)."""
    if opcodes_before is None or opcodes_after is None:
        return None
    as_int = [None if v is None else int(v) for v in (first_bad["value"], last_good["value"])]
    return explain_ir_count(as_int[0], opcodes_after, as_int[1], opcodes_before)
