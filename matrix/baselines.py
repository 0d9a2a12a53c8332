"""Committed baselines: matrix/baselines/<cell name>.json, one per subject x python x backend
(`schema.cell_name`: 3.11-eager.json for the project's compiler, 3.11-dynamo-eager.json
for Dynamo).

Written only by `python -m matrix run ... --accept` (or `nox -s matrix -- --accept`);
nothing else updates them. Comparison is pure Python so the cell runner can print a
verdict without pandas.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from matrix import schema
from matrix.explain import explain_ir_count

BASELINE_DIR = Path(__file__).resolve().parent / "baselines"
BASELINE_KIND = "tracematrix-baseline"
# Baselines are versioned apart from cells: a new cell field changes no committed count.
# Version 2 added `subject` (part of a baseline's identity, like a cell's); a version 1
# baseline was the project's own compiler's and is read as such (`upgrade`).
BASELINE_SCHEMA_VERSION = 2

NO_BASELINE = "no baseline"
SAME = "same"
MOVED = "moved"
NOT_COMPARABLE = "not comparable"
NOT_APPLICABLE = "n/a"


def baseline_path(python: str, backend: str, directory: Union[str, Path, None] = None,
                  subject: str = schema.SUBJECT_TRACEMATRIX) -> Path:
    return Path(directory or BASELINE_DIR) / f"{schema.cell_name(python, backend, subject)}.json"


def upgrade(doc: Any) -> Any:
    """The baseline in the current version (a new dict): version 1 gains subject tracematrix."""
    if not isinstance(doc, dict) or doc.get("schema_version") != 1:
        return doc
    return dict(doc, schema_version=BASELINE_SCHEMA_VERSION, subject=schema.SUBJECT_TRACEMATRIX)


def from_cell(cell: schema.Json) -> schema.Json:
    """What a baseline keeps of a cell: verdict-relevant fields, no timings or machine."""
    keep = ("status", "ir_opcodes", "graph_hash", "graph_texts")
    return {
        "schema_version": BASELINE_SCHEMA_VERSION, "kind": BASELINE_KIND, "subject": cell["subject"],
        "python": cell["python"], "backend": cell["backend"], "cell_status": cell["cell_status"],
        "accepted_from": {"run_id": cell["run_id"], "timestamp": cell["timestamp"],
                          "machine": cell["machine"],
                          "python_version": cell["environment"].get("python_version"),
                          "numpy": cell["environment"].get("numpy"),
                          **({"torch": cell["environment"]["torch"]} if "torch" in cell["environment"] else {}),
                          "git_commit": cell["environment"].get("git_commit")},
        "cases": {name: dict({k: case[k] for k in keep},
                             metrics={m: case["metrics"][m] for m in schema.GATED_METRICS})
                  for name, case in sorted(cell["cases"].items())},
    }


def accept(cell: schema.Json, directory: Union[str, Path, None] = None, merge: bool = False) -> Path:
    """Rewrite the cell's baseline on purpose; returns the path written.

    merge=True (a run restricted with --cases) replaces only the cases this cell ran.
    """
    name = schema.cell_name(cell["python"], cell["backend"], cell["subject"])
    if cell["cell_status"] == schema.CELL_MISSING or not cell["cases"]:
        raise ValueError(f"refusing to accept a baseline for {name}: "
                         f"the cell has no cases (cell status {cell['cell_status']!r})")
    doc = from_cell(cell)
    previous = load(cell["python"], cell["backend"], directory, subject=cell["subject"]) if merge else None
    if previous is not None and previous.get("cell_status") == cell["cell_status"]:
        doc["cases"] = dict(sorted({**previous["cases"], **doc["cases"]}.items()))
    path = baseline_path(cell["python"], cell["backend"], directory, cell["subject"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def load(python: str, backend: str, directory: Union[str, Path, None] = None,
         subject: str = schema.SUBJECT_TRACEMATRIX) -> Optional[schema.Json]:
    """The baseline, None when there is none; ResultFileError when it is unusable."""
    path = baseline_path(python, backend, directory, subject)
    if not path.exists():
        return None
    try:
        doc = upgrade(json.loads(path.read_text(encoding="utf-8")))
    except ValueError as err:
        raise schema.ResultFileError(path, f"baseline is not valid JSON ({err})") from None
    if not isinstance(doc, dict) or doc.get("kind") != BASELINE_KIND:
        raise schema.ResultFileError(path, f"not a baseline file (kind should be {BASELINE_KIND!r})")
    if doc.get("schema_version") != BASELINE_SCHEMA_VERSION:
        raise schema.ResultFileError(path, f"baseline schema_version is {doc.get('schema_version')!r}, "
                                     f"expected {BASELINE_SCHEMA_VERSION}; regenerate with --accept")
    if not isinstance(doc.get("cases"), dict):
        raise schema.ResultFileError(path, "baseline lacks its 'cases' object")
    if doc.get("subject") != subject:
        raise schema.ResultFileError(path, f"baseline is for subject {doc.get('subject')!r}, "
                                     f"expected {subject!r}")
    return doc


def compare_case(now: schema.Json, base: schema.Json) -> List[Dict[str, Any]]:
    """Every gated field that moved, each with its explanation where one exists."""
    changes: List[Dict[str, Any]] = []
    if now["status"] != base.get("status"):
        changes.append({"metric": "status", "baseline": base.get("status"), "now": now["status"],
                        "explanation": now.get("detail")})
    base_metrics = base.get("metrics") or {}
    for metric in schema.GATED_METRICS:
        was, is_ = base_metrics.get(metric), now["metrics"].get(metric)
        if was is None and is_ is None or was == is_:
            continue
        change: Dict[str, Any] = {"metric": metric, "baseline": was, "now": is_, "explanation": None}
        if metric == "ir_count":
            why = explain_ir_count(is_, now["ir_opcodes"], was, base.get("ir_opcodes") or {})
            change["explanation"] = why["text"]
            change["opcodes"] = why["opcodes"]
        changes.append(change)
    if now.get("graph_hash") != base.get("graph_hash"):
        changes.append({"metric": "graph_hash", "baseline": base.get("graph_hash"),
                        "now": now.get("graph_hash"), "explanation": "str(graph) changed"})
    return changes


def compare_cell(cell: schema.Json, baseline: Optional[schema.Json]) -> Dict[str, Any]:
    """state: same / moved / no baseline / not comparable / n/a, with per-case changes."""
    verdict: Dict[str, Any] = {"state": NO_BASELINE, "changes": {}, "new_cases": [],
                               "removed_cases": [], "note": None}
    if not cell["cases"]:
        verdict["state"] = NOT_APPLICABLE
        return verdict
    if baseline is None:
        verdict["note"] = (f"no baseline {schema.cell_name(cell['python'], cell['backend'], cell['subject'])}.json "
                           f"(accept one with --accept)")
        return verdict
    if baseline.get("cell_status") != cell["cell_status"]:
        verdict["state"] = NOT_COMPARABLE
        verdict["note"] = (f"baseline was recorded with cell status {baseline.get('cell_status')!r}, "
                           f"this cell is {cell['cell_status']!r}")
        return verdict
    base_cases = baseline["cases"]
    for name, case in cell["cases"].items():
        if name not in base_cases:
            verdict["new_cases"].append(name)
            continue
        changes = compare_case(case, base_cases[name])
        if changes:
            verdict["changes"][name] = changes
    verdict["removed_cases"] = sorted(set(base_cases) - set(cell["cases"]))
    verdict["state"] = MOVED if verdict["changes"] else SAME
    return verdict
