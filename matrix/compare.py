"""Merge cells (from any machines) with pandas and compute the report's verdicts.

- red: a gated metric, the status or str(graph) moved against the cell's baseline,
  or the case failed (mismatch / error / timeout);
- amber: the case differs from the reference interpreter on the same backend; an
  ir_count difference comes with the opcodes that explain it, and is suspicious when
  the opcode multisets do not add up to it; any other metric or str(graph) differing
  across versions is suspicious.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import pandas as pd

from matrix import baselines, schema
from matrix.explain import explain_ir_count
from matrix.order import BACKEND_ORDER, backend_key, version_key  # noqa: F401 (re-exported)

DEFAULT_REFERENCE = "3.11"
# Differences expected across versions are ir_count's (explained by opcodes); these
# are expected identical, so any difference is suspicious.
IDENTICAL_ACROSS_VERSIONS = ("graph_node_count", "graph_count", "graph_break_count",
                             "guard_count", "recompile_count", "kernel_count")



@dataclass
class Comparison:
    columns: List[Dict[str, Any]]                 # one per cell, in display order
    cases: List[Dict[str, Any]]                   # name, group, in suite order
    frame: pd.DataFrame                           # one row per (column, case)
    references: Dict[str, Optional[str]]          # backend -> reference column id
    reference_python: str
    cells: Dict[str, schema.Json]                 # column id -> the cell document
    baselines: Dict[str, Optional[schema.Json]]   # column id -> its baseline, if any
    problems: List[str] = field(default_factory=list)   # rejected files, duplicate cells

    def __post_init__(self) -> None:
        self.records = self.frame.to_dict("records")
        self._index = {(r["column"], r["case"]): r for r in self.records}
        self._by_case: Dict[str, List[Dict[str, Any]]] = {}
        for record in self.records:
            self._by_case.setdefault(record["case"], []).append(record)

    def rows_of(self, case: str) -> List[Dict[str, Any]]:
        return self._by_case.get(case, [])

    def row(self, column: str, case: str) -> Optional[Dict[str, Any]]:
        return self._index.get((column, case))


def missing_cells(pythons: Sequence[str], backends: Sequence[str]) -> List[schema.Json]:
    """Placeholder cells for interpreters this machine does not have."""
    return [schema.cell_document(run_id="", timestamp="", machine="", python=p, backend=b,
                                 cell_status=schema.CELL_MISSING,
                                 environment={k: None for k in ("python_version", "python_implementation",
                                                                "numpy", "triton", "platform", "git_commit")},
                                 coverage=None, duration_s=0.0, cases={})
            for p in pythons for b in backends]


def _assign_columns(cells: List[schema.Json], problems: List[str]) -> List[schema.Json]:
    """One column per (python, backend, machine); newest file wins; machine shown when needed."""
    newest: Dict[Tuple[str, str, str], schema.Json] = {}
    for cell in cells:
        key = (cell["python"], cell["backend"], cell["machine"])
        if key in newest:
            older, newer = sorted([newest[key], cell], key=lambda c: c["timestamp"])
            problems.append(f"two cells for {key[0]} {key[1]} on {key[2] or 'this machine'}: "
                            f"kept {newer.get('_source', 'the newer')}, ignored {older.get('_source', 'the older')}")
            newest[key] = newer
        else:
            newest[key] = cell
    kept = sorted(newest.values(), key=lambda c: (backend_key(c["backend"]), version_key(c["python"]),
                                                  c["machine"]))
    per_pair: Dict[Tuple[str, str], int] = {}
    for cell in kept:
        per_pair[(cell["python"], cell["backend"])] = per_pair.get((cell["python"], cell["backend"]), 0) + 1
    for cell in kept:
        label = f"{cell['python']} {cell['backend']}"
        if per_pair[(cell["python"], cell["backend"])] > 1 and cell["machine"]:
            label += f" @{cell['machine']}"
        cell["_column"] = label
    return kept


def _records(cells: List[schema.Json], case_order: List[str]) -> pd.DataFrame:
    rows = []
    for cell in cells:
        for name in case_order:
            case = cell["cases"].get(name)
            row: Dict[str, Any] = {"column": cell["_column"], "python": cell["python"],
                                   "backend": cell["backend"], "machine": cell["machine"],
                                   "cell_status": cell["cell_status"], "case": name, "present": case is not None}
            case = case or schema.case_result("?", "error")
            row.update({"status": case["status"] if row["present"] else None, "detail": case["detail"] or "",
                        "graph_hash": case["graph_hash"], "ir_opcodes": case["ir_opcodes"],
                        "graph_texts": case["graph_texts"], "expected_recompiles": case["expected_recompiles"]})
            row.update({m: case["metrics"].get(m) for m in schema.METRICS})
            rows.append(row)
    columns = ["column", "python", "backend", "machine", "cell_status", "case", "present", "status",
               "detail", "graph_hash", "ir_opcodes", "graph_texts", "expected_recompiles", *schema.METRICS]
    frame = pd.DataFrame(rows, columns=columns)
    for metric in schema.METRICS:  # None -> NaN so that sums and comparisons work
        frame[metric] = pd.to_numeric(frame[metric], errors="coerce")
    return frame


def _reference_columns(cells: List[schema.Json], reference: str) -> Dict[str, Optional[str]]:
    """Per backend: the reference interpreter's column, else the newest one with cases."""
    chosen: Dict[str, Optional[str]] = {}
    for backend in sorted({c["backend"] for c in cells}, key=backend_key):
        candidates = [c for c in cells if c["backend"] == backend and c["cases"]]
        exact = [c for c in candidates if c["python"] == reference]
        pick = exact or sorted(candidates, key=lambda c: version_key(c["python"]))[-1:]
        chosen[backend] = pick[0]["_column"] if pick else None
    return chosen


def cross_version(row: Dict[str, Any], ref: Optional[Dict[str, Any]], ref_python: str) -> List[Dict[str, Any]]:
    """How a case in one cell differs from the same case on the reference interpreter."""
    if ref is None or not row["present"] or not ref["present"] or row["column"] == ref["column"]:
        return []
    diffs: List[Dict[str, Any]] = []
    if row["status"] != ref["status"]:
        # Metrics of a frame that ran natively (or failed) say nothing about tracing: the
        # status difference is the finding.
        return [{"metric": "status", "reference": ref["status"], "now": row["status"],
                 "explanation": f"{row['status']} here, {ref['status']} on {ref_python}",
                 "suspicious": False}]
    now_ir, ref_ir = _int(row["ir_count"]), _int(ref["ir_count"])
    if now_ir is not None and ref_ir is not None and now_ir != ref_ir:
        why = explain_ir_count(now_ir, row["ir_opcodes"], ref_ir, ref["ir_opcodes"])
        diffs.append({"metric": "ir_count", "reference": ref_ir, "now": now_ir,
                      "explanation": why["text"], "opcodes": why["opcodes"],
                      "suspicious": not why["explained"]})
    for metric in IDENTICAL_ACROSS_VERSIONS:
        now, was = _int(row[metric]), _int(ref[metric])
        if now is not None and was is not None and now != was:
            diffs.append({"metric": metric, "reference": was, "now": now,
                          "explanation": f"{metric} is expected identical on every version",
                          "suspicious": True})
    now_hash, ref_hash = _text(row["graph_hash"]), _text(ref["graph_hash"])
    if now_hash and ref_hash and now_hash != ref_hash:
        diffs.append({"metric": "graph_hash", "reference": ref_hash, "now": now_hash,
                      "explanation": f"str(graph) differs from {ref_python}", "suspicious": True})
    return diffs


def unexpected_recompiles(row: Dict[str, Any]) -> Optional[str]:
    """A passing case that recompiled more or less often than its call sequence demands."""
    now = _int(row["recompile_count"])
    if row["status"] != "pass" or now is None or now == row["expected_recompiles"]:
        return None
    return (f"recompiled {now} time(s); the call sequence expects {row['expected_recompiles']} "
            f"(a guard too loose or too strict)")


def _text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None  # pandas turns a missing text into NaN


def _int(value: Any) -> Optional[int]:
    if value is None or (isinstance(value, float) and value != value):  # pandas NaN
        return None
    return int(value)


def compare(cells: List[schema.Json], *, baseline_dir: Union[str, Path, None] = None,
            reference: str = DEFAULT_REFERENCE, problems: Optional[List[str]] = None) -> Comparison:
    problems = problems if problems is not None else []
    cells = _assign_columns(cells, problems)
    case_order: List[str] = []
    groups: Dict[str, str] = {}
    for cell in cells:
        for name, case in cell["cases"].items():
            if name not in groups:
                case_order.append(name)
                groups[name] = case["group"]
    case_order.sort(key=lambda name: (groups[name], name))
    frame = _records(cells, case_order)
    references = _reference_columns(cells, reference)
    by_key = {(r["column"], r["case"]): r for r in frame.to_dict("records")}

    baseline_verdicts: Dict[str, Dict[str, Any]] = {}
    baseline_docs: Dict[str, Optional[schema.Json]] = {}
    for cell in cells:
        try:
            base = baselines.load(cell["python"], cell["backend"], baseline_dir)
        except schema.ResultFileError as err:
            problems.append(str(err))
            base = None
        baseline_verdicts[cell["_column"]] = baselines.compare_cell(cell, base)
        baseline_docs[cell["_column"]] = base

    ref_python = {b: (col.split(" ")[0] if col else reference) for b, col in references.items()}
    red, amber, failed, suspicious, vs_baseline, vs_reference, surprises = [], [], [], [], [], [], []
    for row in frame.to_dict("records"):
        changes = baseline_verdicts[row["column"]]["changes"].get(row["case"], [])
        ref_col = references.get(row["backend"])
        ref_row = by_key.get((ref_col, row["case"])) if ref_col else None
        diffs = cross_version(row, ref_row, ref_python.get(row["backend"], reference))
        surprise = unexpected_recompiles(row)
        surprises.append(surprise or "")  # "" not None: pandas would turn None into NaN
        is_failed = row["status"] in schema.FAILED_CASE_STATUSES
        vs_baseline.append(changes)
        vs_reference.append(diffs)
        failed.append(is_failed)
        red.append(bool(changes) or is_failed)
        amber.append(bool(diffs) or surprise is not None)
        suspicious.append(any(d["suspicious"] for d in diffs))
    frame = frame.assign(red=red, amber=amber, failed=failed, suspicious=suspicious,
                         vs_baseline=vs_baseline, vs_reference=vs_reference,
                         unexpected_recompiles=surprises)

    totals = frame.groupby("column", sort=False).agg(
        ir_total=("ir_count", "sum"), cases=("present", "sum"),
        passed=("status", lambda s: int((s == "pass").sum())),
        failed=("failed", "sum"), red=("red", "sum"), amber=("amber", "sum"),
        suspicious=("suspicious", "sum")) if len(frame) else pd.DataFrame()
    columns = []
    for cell in cells:
        col = cell["_column"]
        total = totals.loc[col].to_dict() if col in getattr(totals, "index", []) else {}
        columns.append({
            "id": col, "python": cell["python"], "backend": cell["backend"], "machine": cell["machine"],
            "cell_status": cell["cell_status"], "run_id": cell["run_id"], "timestamp": cell["timestamp"],
            "environment": cell["environment"], "coverage": cell.get("coverage"),
            "source": cell.get("_source"), "duration_s": cell["duration_s"],
            "baseline": baseline_verdicts[col], "is_reference": references.get(cell["backend"]) == col,
            "failed_cell": cell["cell_status"].startswith(schema.CELL_ERROR_PREFIX),
            "totals": {k: int(v) if v == v else 0 for k, v in total.items()},
        })
    cases = [{"name": n, "group": groups[n]} for n in case_order]
    return Comparison(columns, cases, frame, references, reference,
                      {c["_column"]: c for c in cells}, baseline_docs, problems)


def adjacent_versions(comparison: Comparison, case: str) -> List[Dict[str, Any]]:
    """Per backend, each interpreter against the previous one: '3.10 -> 3.11: +1 RESUME'."""
    steps = []
    rows = [r for r in comparison.rows_of(case) if r["present"]]
    for backend in sorted({r["backend"] for r in rows}, key=backend_key):
        chain = sorted([r for r in rows if r["backend"] == backend], key=lambda r: version_key(r["python"]))
        for before, after in zip(chain, chain[1:]):
            a, b = _int(before["ir_count"]), _int(after["ir_count"])
            if a is None or b is None or before["status"] != after["status"]:
                continue
            why = explain_ir_count(b, after["ir_opcodes"], a, before["ir_opcodes"])
            steps.append({"backend": backend, "before": before["column"], "after": after["column"],
                          "ir_before": a, "ir_after": b, "explanation": why["text"],
                          "explained": why["explained"], "changed": a != b})
    return steps


def side_by_side(left: List[str], right: List[str]) -> List[Dict[str, Any]]:
    """Rows of a two-column text diff (difflib), each line kept as plain text for escaping."""
    a = "\n".join(left).splitlines()
    b = "\n".join(right).splitlines()
    rows: List[Dict[str, Any]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        span = max(i2 - i1, j2 - j1)
        for k in range(span):
            li, rj = i1 + k, j1 + k
            rows.append({"kind": tag,
                         "left_no": li + 1 if li < i2 else None, "left": a[li] if li < i2 else "",
                         "right_no": rj + 1 if rj < j2 else None, "right": b[rj] if rj < j2 else ""})
    return rows
