"""Merge cells (from any machines) with pandas and compute the report's verdicts.

- red: a gated metric, the status or str(graph) moved against the cell's baseline,
  or the case failed (mismatch / error / timeout);
- amber: the case differs from the reference interpreter on the same backend (and the
  same subject); an ir_count difference comes with the opcodes that explain it, and is
  suspicious when the opcode multisets do not add up to it; any other metric or
  str(graph) differing across versions is suspicious.

Cells of different subjects (the project's compiler, Dynamo) are separate columns; a
Dynamo cell is also compared with the project's cell of the same interpreter and backend
(`cross_subject`: where the counts differ and by which opcodes), and a case whose cell
records another project's hard-coded expectation is checked against it (`vs_upstream`).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import pandas as pd

from matrix import baselines, schema
from matrix.explain import explain_ir_count, polyfill_count
from matrix.order import BACKEND_ORDER, backend_key, version_key  # noqa: F401 (re-exported)

DEFAULT_REFERENCE = "3.11"
# Differences expected across versions are ir_count's (explained by opcodes); these
# are expected identical, so any difference is suspicious.
IDENTICAL_ACROSS_VERSIONS = ("graph_node_count", "graph_count", "graph_break_count",
                             "guard_count", "recompile_count", "kernel_count")
# Compared between subjects besides ir_count: the same program, two compilers' verdicts.
COMPARED_ACROSS_SUBJECTS = ("graph_count", "graph_break_count", "recompile_count")


def subject_version(cell: schema.Json) -> Optional[str]:
    """The version of the subject's own compiler where it is not this checkout (Dynamo:
    torch), so that two torch versions on one interpreter are two columns."""
    if cell.get("subject", schema.SUBJECT_TRACEMATRIX) == schema.SUBJECT_TRACEMATRIX:
        return None
    return (cell.get("environment") or {}).get("torch")


def lane(subject: str, backend: str) -> str:
    """The comparison lane of a column: versions are compared within one subject and backend
    ('eager' for the project's compiler, 'dynamo eager' for Dynamo's)."""
    return backend if subject == schema.SUBJECT_TRACEMATRIX else f"{subject} {backend}"


def _release_key(version: str) -> Tuple[int, ...]:
    """'2.13.0+cpu' < '2.14.0.dev20261101+cpu': the numbers in the version, in order."""
    return tuple(int(n) for n in re.findall(r"\d+", version))


def _subject_key(subject: str) -> int:
    return schema.SUBJECTS.index(subject) if subject in schema.SUBJECTS else len(schema.SUBJECTS)



@dataclass
class Comparison:
    columns: List[Dict[str, Any]]                 # one per cell, in display order
    cases: List[Dict[str, Any]]                   # name, group, in suite order
    frame: pd.DataFrame                           # one row per (column, case)
    references: Dict[str, Optional[str]]          # lane (subject x backend) -> reference column id
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
    """One column per (subject, its version, python, backend, machine); newest file wins;
    the subject's version and the machine are shown when needed.  A Dynamo column sits
    beside the project's column of the same interpreter and backend."""
    newest: Dict[Tuple[Any, ...], schema.Json] = {}
    for cell in cells:
        key = (cell["subject"], subject_version(cell), cell["python"], cell["backend"], cell["machine"])
        if key in newest:
            older, newer = sorted([newest[key], cell], key=lambda c: c["timestamp"])
            who = "" if cell["subject"] == schema.SUBJECT_TRACEMATRIX else f"{cell['subject']} "
            problems.append(f"two {who}cells for {key[2]} {key[3]} on {key[4] or 'this machine'}: "
                            f"kept {newer.get('_source', 'the newer')}, ignored {older.get('_source', 'the older')}")
            newest[key] = newer
        else:
            newest[key] = cell
    kept = sorted(newest.values(), key=lambda c: (backend_key(c["backend"]), version_key(c["python"]),
                                                  _subject_key(c["subject"]), _release_key(subject_version(c) or ""),
                                                  c["machine"]))
    per_lane: Dict[Tuple[str, str, str], List[schema.Json]] = {}
    for cell in kept:
        per_lane.setdefault((cell["subject"], cell["python"], cell["backend"]), []).append(cell)
    for cell in kept:
        label = f"{cell['python']} {lane(cell['subject'], cell['backend'])}"
        siblings = per_lane[(cell["subject"], cell["python"], cell["backend"])]
        if len({subject_version(c) for c in siblings}) > 1 and subject_version(cell):
            label += f" torch {subject_version(cell)}"
        if len({c["machine"] for c in siblings}) > 1 and cell["machine"]:
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
                                   "subject": cell["subject"], "subject_version": subject_version(cell) or "",
                                   "lane": lane(cell["subject"], cell["backend"]),
                                   "cell_status": cell["cell_status"], "case": name, "present": case is not None}
            case = case or schema.case_result("?", "error")
            row.update({"status": case["status"] if row["present"] else None, "detail": case["detail"] or "",
                        "graph_hash": case["graph_hash"], "ir_opcodes": case["ir_opcodes"],
                        "graph_texts": case["graph_texts"], "expected_recompiles": case["expected_recompiles"],
                        "upstream_expected": case.get("upstream_expected") or {}})
            row.update({m: case["metrics"].get(m) for m in schema.METRICS})
            rows.append(row)
    columns = ["column", "python", "backend", "machine", "subject", "subject_version", "lane", "cell_status",
               "case", "present", "status", "detail", "graph_hash", "ir_opcodes", "graph_texts",
               "expected_recompiles", "upstream_expected", *schema.METRICS]
    frame = pd.DataFrame(rows, columns=columns)
    for metric in schema.METRICS:  # None -> NaN so that sums and comparisons work
        frame[metric] = pd.to_numeric(frame[metric], errors="coerce")
    return frame


def _reference_columns(cells: List[schema.Json], reference: str) -> Dict[str, Optional[str]]:
    """Per lane (subject x backend): the reference interpreter's column, else the newest
    one with cases (cells come in display order: the first of several torch versions)."""
    chosen: Dict[str, Optional[str]] = {}
    for cell in cells:
        key = lane(cell["subject"], cell["backend"])
        candidates = [c for c in cells if lane(c["subject"], c["backend"]) == key and c["cases"]]
        exact = [c for c in candidates if c["python"] == reference]
        pick = exact or sorted(candidates, key=lambda c: version_key(c["python"]))[-1:]
        chosen[key] = pick[0]["_column"] if pick else None
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


def cross_subject(row: Dict[str, Any], ours: Optional[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """How another subject's (Dynamo's) case differs from the project's compiler on the same
    interpreter and backend: ir_count with the opcodes behind it, and the graph verdicts."""
    if ours is None or not row["present"] or not ours["present"] or row["column"] == ours["column"]:
        return []
    who = f"tracematrix ({ours['column']})"
    if row["status"] != ours["status"]:
        return [{"metric": "status", "ours": ours["status"], "now": row["status"],
                 "explanation": f"{row['status']} here, {ours['status']} in {who}", "explained": True}]
    diffs: List[Dict[str, Any]] = []
    now_ir, our_ir = _int(row["ir_count"]), _int(ours["ir_count"])
    if now_ir is not None and our_ir is not None and now_ir != our_ir:
        why = explain_ir_count(now_ir, row["ir_opcodes"], our_ir, ours["ir_opcodes"])
        own = polyfill_count(row["ir_opcodes"])
        if own and now_ir - own == our_ir:
            # The same count by the same rule: Dynamo also counts its own polyfills' code.
            explanation = (f"equal to {who}'s {our_ir} without the {own} instructions of Dynamo's own "
                           f"polyfills ({why['text']})")
        elif why["explained"]:
            explanation = why["text"]
        else:
            explanation = f"{why['text']} (the opcodes do not account for the difference)"
        diffs.append({"metric": "ir_count", "ours": our_ir, "now": now_ir, "opcodes": why["opcodes"],
                      "explanation": explanation, "explained": why["explained"],
                      "polyfill_instructions": own})
    for metric in COMPARED_ACROSS_SUBJECTS:
        now, was = _int(row[metric]), _int(ours[metric])
        if now is not None and was is not None and now != was:
            diffs.append({"metric": metric, "ours": was, "now": now,
                          "explanation": f"{metric} {now} here, {was} in {who}", "explained": True})
    return diffs


def vs_upstream(row: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The measured count against the count another project's test hard-codes for this
    interpreter (recorded in the cell: Dynamo's test_ir_count table)."""
    expected = row["upstream_expected"] or {}
    metric = expected.get("metric")
    if not row["present"] or metric not in schema.METRICS:
        return []
    now = _int(row[metric])
    if now is None or now == expected.get("value"):
        return []
    return [{"metric": metric, "expected": expected.get("value"), "now": now, "source": expected.get("source"),
             "explanation": f"{expected.get('source')} expects {expected.get('value')} on Python "
                            f"{row['python']}; measured {now}"}]


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
            base = baselines.load(cell["python"], cell["backend"], baseline_dir, subject=cell["subject"])
        except schema.ResultFileError as err:
            problems.append(str(err))
            base = None
        baseline_verdicts[cell["_column"]] = baselines.compare_cell(cell, base)
        baseline_docs[cell["_column"]] = base

    ref_python = {b: (col.split(" ")[0] if col else reference) for b, col in references.items()}
    ours_of = _our_columns(cells)
    red, amber, failed, suspicious, vs_baseline, vs_reference, surprises = [], [], [], [], [], [], []
    vs_subject, upstream = [], []
    for row in frame.to_dict("records"):
        changes = baseline_verdicts[row["column"]]["changes"].get(row["case"], [])
        ref_col = references.get(row["lane"])
        ref_row = by_key.get((ref_col, row["case"])) if ref_col else None
        diffs = cross_version(row, ref_row, ref_python.get(row["lane"], reference))
        our_col = ours_of.get(row["column"])
        vs_subject.append(cross_subject(row, by_key.get((our_col, row["case"])) if our_col else None))
        upstream.append(vs_upstream(row))
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
                         unexpected_recompiles=surprises, vs_subject=vs_subject, vs_upstream=upstream)

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
            "subject": cell["subject"], "subject_version": subject_version(cell),
            "lane": lane(cell["subject"], cell["backend"]),
            "cell_status": cell["cell_status"], "run_id": cell["run_id"], "timestamp": cell["timestamp"],
            "environment": cell["environment"], "coverage": cell.get("coverage"),
            "source": cell.get("_source"), "duration_s": cell["duration_s"],
            "baseline": baseline_verdicts[col],
            "is_reference": references.get(lane(cell["subject"], cell["backend"])) == col,
            "failed_cell": cell["cell_status"].startswith(schema.CELL_ERROR_PREFIX),
            "totals": {k: int(v) if v == v else 0 for k, v in total.items()},
        })
    cases = [{"name": n, "group": groups[n]} for n in case_order]
    return Comparison(columns, cases, frame, references, reference,
                      {c["_column"]: c for c in cells}, baseline_docs, problems)


def _our_columns(cells: List[schema.Json]) -> Dict[str, str]:
    """Another subject's column -> the project's column it is compared with: same python and
    backend, the same machine where there is one."""
    ours = [c for c in cells if c["subject"] == schema.SUBJECT_TRACEMATRIX and c["cases"]]
    found: Dict[str, str] = {}
    for cell in cells:
        if cell["subject"] == schema.SUBJECT_TRACEMATRIX:
            continue
        same = [c for c in ours if (c["python"], c["backend"]) == (cell["python"], cell["backend"])]
        same.sort(key=lambda c: c["machine"] != cell["machine"])
        if same:
            found[cell["_column"]] = same[0]["_column"]
    return found


def adjacent_versions(comparison: Comparison, case: str) -> List[Dict[str, Any]]:
    """Per lane (subject x backend), each interpreter (and, for Dynamo, each torch version)
    against the previous one: '3.10 -> 3.11: +1 RESUME'."""
    steps = []
    rows = [r for r in comparison.rows_of(case) if r["present"]]
    lanes = sorted({(r["backend"], r["subject"]) for r in rows},
                   key=lambda item: (backend_key(item[0]), _subject_key(item[1])))
    for backend, subject in lanes:
        chain = sorted([r for r in rows if (r["backend"], r["subject"]) == (backend, subject)],
                       key=lambda r: (version_key(r["python"]), _release_key(r["subject_version"])))
        for before, after in zip(chain, chain[1:]):
            a, b = _int(before["ir_count"]), _int(after["ir_count"])
            if a is None or b is None or before["status"] != after["status"]:
                continue
            why = explain_ir_count(b, after["ir_opcodes"], a, before["ir_opcodes"])
            steps.append({"backend": backend, "subject": subject, "lane": after["lane"],
                          "before": before["column"], "after": after["column"],
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
