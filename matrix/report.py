"""Render merged cells: index.html, one page per case, coverage.html, summary.json.

Everything goes through jinja2 with autoescaping on; the static files are copied next
to the pages and referenced relatively, so the report works from file:// offline.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from matrix import environment, schema
from matrix.cpython_tests import view as cpython_tests_view
from matrix.compare import (DEFAULT_REFERENCE, Comparison, adjacent_versions, compare,
                            missing_cells, side_by_side, version_key)

PACKAGE = Path(__file__).resolve().parent
TEMPLATES = PACKAGE / "templates"
STATIC = PACKAGE / "static"
SUMMARY_KIND = "tracematrix-summary"


def case_slug(name: str) -> str:
    """A file name for a case page: readable, safe, unique even for hostile names."""
    readable = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:60] or "case"
    if readable == name:
        return readable
    return f"{readable}-{hashlib.sha1(name.encode('utf-8')).hexdigest()[:8]}"


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["slug"] = case_slug
    env.filters["num"] = _number
    return env


def _number(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.4g}"
    return str(int(value)) if isinstance(value, float) else str(value)


def _cell_view(comparison: Comparison, column: Dict[str, Any], case: str) -> Dict[str, Any]:
    """What one matrix cell shows: ir_count, status, colour, and the why in a tooltip."""
    row = comparison.row(column["id"], case)
    view: Dict[str, Any] = {"text": "", "status": "", "classes": [], "why": [], "short": "",
                            "subject_short": "", "upstream": ""}
    if column["cell_status"] == schema.CELL_MISSING:
        view.update(text="missing", classes=["missing"])
        return view
    if column["cell_status"] == schema.CELL_NO_TABLE:
        view.update(text="no table", classes=["missing", "no-table"],
                    why=["no opcode table for this CPython: compiled functions run natively"])
        return view
    if column["cell_status"].startswith(schema.CELL_SUBJECT_UNAVAILABLE_PREFIX):
        view.update(text="subject unavailable", classes=["missing", "subject-unavailable"],
                    why=[column["cell_status"]])
        return view
    if row is None or not row["present"]:
        view.update(text="–", classes=["absent"],
                    why=[column["cell_status"] if column["cell_status"] != schema.CELL_OK else "not run"])
        return view
    view["text"] = _number(row["ir_count"])
    view["status"] = row["status"]
    view["classes"].append(f"status-{row['status']}")
    if row["failed"]:
        view["classes"].append("fail")
        view["why"].append(f"{row['status']}: {(row['detail'] or '').splitlines()[0] if row['detail'] else ''}")
    if row["vs_baseline"]:
        view["classes"].append("red")
        view["why"] += [f"vs baseline: {c['metric']} {c['baseline']} → {c['now']}"
                        + (f" ({c['explanation']})" if c.get("explanation") else "")
                        for c in row["vs_baseline"]]
    if row["amber"]:
        view["classes"].append("amber")
        view["why"] += [f"vs reference: {d['metric']} {d['reference']} → {d['now']}: {d['explanation']}"
                        for d in row["vs_reference"]]
    if row["unexpected_recompiles"]:
        if "amber" not in view["classes"]:
            view["classes"].append("amber")
        view["why"].append(row["unexpected_recompiles"])
    if row["suspicious"]:
        view["classes"].append("suspicious")
    if row["vs_subject"]:
        view["classes"].append("subject-differs")
        view["why"] += [f"vs tracematrix: {d['metric']} {d['ours']} → {d['now']}: {d['explanation']}"
                        for d in row["vs_subject"]]
        view["subject_short"] = _abbreviate(next((f"vs ours: {d['explanation']}" for d in row["vs_subject"]
                                                  if d["metric"] == "ir_count"), ""))
    if row["vs_upstream"]:
        view["classes"].append("upstream-table")
        view["why"] += [u["explanation"] for u in row["vs_upstream"]]
        view["upstream"] = "; ".join(f"test table: {u['expected']}" for u in row["vs_upstream"])
    view["short"] = _abbreviate(next((d["explanation"] for d in row["vs_reference"]
                                      if d["metric"] == "ir_count"), ""))
    return view


def _abbreviate(explanation: str, terms: int = 3) -> str:
    """The first few opcode terms for the matrix cell; the tooltip and case page have all."""
    parts = explanation.split(", ")
    return ", ".join(parts[:terms]) + (f", … ({len(parts) - terms} more)" if len(parts) > terms else "")


def _coverage_by_python(comparison: Comparison) -> List[Dict[str, Any]]:
    seen: Dict[str, Dict[str, Any]] = {}
    for column in comparison.columns:
        if column["cell_status"] == schema.CELL_MISSING:
            seen.setdefault(column["python"], {"python": column["python"], "coverage": None,
                                               "note": "interpreter not found on this machine"})
            continue
        cov = column["coverage"]
        current = seen.get(column["python"])
        if cov and (current is None or current["coverage"] is None):
            seen[column["python"]] = {"python": column["python"], "coverage": cov, "note": None}
        elif current is None:
            seen[column["python"]] = {"python": column["python"], "coverage": None,
                                      "note": "the cell recorded no coverage"}
    rows = sorted(seen.values(), key=lambda r: version_key(r["python"]))
    for row in rows:
        cov = row["coverage"] or {}
        row["lists"] = [(key, sorted(cov[key]) if isinstance(cov.get(key), (list, dict)) else cov.get(key))
                        for key in ("missing", "pending", "unsupported", "handled") if key in cov]
        row["counts"] = cov.get("counts") if isinstance(cov.get("counts"), dict) else {}
        row["error"] = cov.get("error")
    return rows


def summary(comparison: Comparison, rejected: Sequence[schema.ResultFileError],
            cpython_tests: Sequence[Dict[str, Any]] = ()) -> Dict[str, Any]:
    """The verdicts for machines (same facts as the HTML); `cpython_tests`: the
    cpython-tests documents (a module that regressed, crashed or timed out fails them)."""
    rows = comparison.records
    cells = []
    for column in comparison.columns:
        mine = [r for r in rows if r["column"] == column["id"] and r["present"]]
        cells.append({
            "column": column["id"], "python": column["python"], "backend": column["backend"],
            "subject": column["subject"], "subject_version": column["subject_version"],
            "machine": column["machine"], "run_id": column["run_id"], "cell_status": column["cell_status"],
            "baseline": column["baseline"]["state"], "baseline_note": column["baseline"]["note"],
            "new_cases": column["baseline"]["new_cases"], "removed_cases": column["baseline"]["removed_cases"],
            "is_reference": column["is_reference"], "totals": column["totals"],
            "regressions": [dict(change, case=r["case"]) for r in mine for change in r["vs_baseline"]],
            "failures": [{"case": r["case"], "status": r["status"], "detail": r["detail"]}
                         for r in mine if r["failed"]],
            "differences_from_reference": [dict(d, case=r["case"]) for r in mine for d in r["vs_reference"]],
            "unexpected_recompiles": [{"case": r["case"], "explanation": r["unexpected_recompiles"]}
                                      for r in mine if r["unexpected_recompiles"]],
            "differences_from_tracematrix": [dict(d, case=r["case"]) for r in mine for d in r["vs_subject"]],
            "upstream_table_mismatches": [dict(u, case=r["case"]) for r in mine for u in r["vs_upstream"]],
        })
    suspicious = [{"case": r["case"], "column": r["column"], "metric": d["metric"],
                   "explanation": d["explanation"]}
                  for r in rows for d in r["vs_reference"] if d["suspicious"]]
    regressed = [c["column"] for c in cells if c["regressions"]]
    # Another subject's failing case (Dynamo returning a 0-d array for a NumPy scalar) is a
    # finding about that compiler: shown red and listed, gated only through its baseline.
    failed = [c["column"] for c in cells
              if (c["failures"] and c["subject"] == schema.SUBJECT_TRACEMATRIX)
              or c["cell_status"].startswith(schema.CELL_ERROR_PREFIX)]
    problems = [f"{e.path}: {e.problem}" for e in rejected] + list(comparison.problems)
    cpython = cpython_tests_view.summary(cpython_tests)
    cpython_failed = [f"{c['python']} cpython-tests@{c['machine']}" for c in cpython if c["failing"]]
    return {
        "schema_version": schema.SCHEMA_VERSION, "kind": SUMMARY_KIND,
        "generated_at": environment.timestamp(), "reference_python": comparison.reference_python,
        "reference_columns": comparison.references,
        "ok": not (regressed or failed or rejected or cpython_failed),
        "regressed_cells": regressed, "failed_cells": failed,
        "rejected_files": [{"file": e.path, "problem": e.problem} for e in rejected],
        "problems": problems, "suspicious": suspicious, "cells": cells,
        "cpython_tests": cpython, "cpython_tests_failed": cpython_failed,
        # Findings about another project's hard-coded counts: shown, never failing this run.
        "upstream_table_mismatches": [dict(u, column=c["column"]) for c in cells
                                      for u in c["upstream_table_mismatches"]],
    }


def render(comparison: Comparison, out_dir: Union[str, Path],
           rejected: Sequence[schema.ResultFileError] = (), trend_charts: Sequence[str] = (),
           cpython_tests: Sequence[Dict[str, Any]] = ()) -> Dict[str, Any]:
    """Write the whole report into out_dir; returns the summary.  `cpython_tests`: the
    cpython-tests documents, shown in a section of their own."""
    out = Path(out_dir)
    (out / "cases").mkdir(parents=True, exist_ok=True)
    _copy_static(out / "static")
    env = _environment()
    verdicts = summary(comparison, rejected, cpython_tests)
    matrix_rows = []
    for case in comparison.cases:
        cells = [_cell_view(comparison, col, case["name"]) for col in comparison.columns]
        changed = any(({"red", "amber", "fail", "subject-differs", "upstream-table"} & set(c["classes"]))
                      for c in cells)
        matrix_rows.append({"case": case, "cells": cells, "changed": changed})
    backends = []
    for column in comparison.columns:
        if backends and backends[-1]["name"] == column["backend"]:
            backends[-1]["span"] += 1
        else:
            backends.append({"name": column["backend"], "span": 1})
    common = {"summary": verdicts, "reference": comparison.reference_python}
    _write(out / "index.html", env.get_template("index.html").render(
        columns=comparison.columns, rows=matrix_rows, backends=backends, static="static", root=".",
        problems=verdicts["problems"], trend_charts=[Markup(c) for c in trend_charts],
        cpython_sections=cpython_tests_view.sections(cpython_tests),
        metric_changes=[{"metric": metric, "version": version, "text": text}
                        for (metric, version), text in sorted(schema.METRIC_CHANGES.items())],
        metric_versions=schema.METRIC_VERSIONS, **common))
    for case in comparison.cases:
        _write(out / "cases" / f"{case_slug(case['name'])}.html",
               env.get_template("case.html").render(static="../static", root="..", **_case_context(comparison, case), **common))
    _write(out / "coverage.html", env.get_template("coverage.html").render(
        static="static", root=".", interpreters=_coverage_by_python(comparison), **common))
    _write(out / "summary.json", json.dumps(verdicts, indent=1, sort_keys=True, default=str) + "\n")
    return verdicts


def _case_context(comparison: Comparison, case: Dict[str, Any]) -> Dict[str, Any]:
    name = case["name"]
    per_column = []
    for column in comparison.columns:
        row = comparison.row(column["id"], name)
        doc = comparison.cells[column["id"]]["cases"].get(name)
        if row is None or doc is None:
            continue
        ref_col = comparison.references.get(column["lane"])
        ref_doc = comparison.cells[ref_col]["cases"].get(name) if ref_col else None
        graph_diff = None
        if ref_doc is not None and ref_col != column["id"] and doc["graph_texts"] != ref_doc["graph_texts"]:
            graph_diff = {"against": ref_col, "rows": side_by_side(ref_doc["graph_texts"], doc["graph_texts"])}
        base = (comparison.baselines.get(column["id"]) or {}).get("cases", {}).get(name)
        baseline_diff = None
        if base is not None and base.get("graph_hash") != doc["graph_hash"]:
            baseline_diff = side_by_side(base.get("graph_texts") or [], doc["graph_texts"])
        per_column.append({"column": column, "row": row, "case": doc, "graph_diff": graph_diff,
                           "baseline_diff": baseline_diff,
                           "metrics": [(m, doc["metrics"].get(m)) for m in schema.METRICS]})
    return {"case": case, "per_column": per_column, "steps": adjacent_versions(comparison, name),
            "metric_names": schema.METRICS, **_listings(per_column)}


def _listings(per_column: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The case's source (the first cell that recorded it) and one `dis` listing per
    interpreter (the same on every backend); cells older than these fields have none."""
    source = next((pc["case"].get("source") for pc in per_column if pc["case"].get("source")), None)
    by_python: Dict[str, str] = {}
    for pc in per_column:
        if pc["case"].get("dis") and pc["column"]["python"] not in by_python:
            by_python[pc["column"]["python"]] = pc["case"]["dis"]
    return {"source": source, "dis_listings": sorted(by_python.items(), key=lambda item: version_key(item[0]))}


def _copy_static(target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for item in STATIC.iterdir():
        shutil.copy2(str(item), str(target / item.name))


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def build_report(paths: Sequence[Union[str, Path]], out_dir: Union[str, Path], *,
                 baseline_dir: Union[str, Path, None] = None, reference: str = DEFAULT_REFERENCE,
                 missing_pythons: Sequence[str] = (), backends: Optional[Sequence[str]] = None,
                 run_id: Optional[str] = None, history: Optional[str] = None) -> Dict[str, Any]:
    """Load, compare, render; rejected files are reported, never fatal to the others.

    `history`: the results service's URL or a JSON file of its trends; the index then
    shows the IR-count trend per interpreter (an unreadable source is a listed problem)."""
    cpython_tests, rejected, paths = cpython_tests_view.split(paths)
    cells, cell_rejected = schema.load_cells(paths)
    rejected += cell_rejected
    problems: List[str] = []
    if run_id:
        stale = [c for c in cells + cpython_tests if c["run_id"] != run_id]
        problems += [f"{c['_source']}: skipped, from run {c['run_id']} (this run is {run_id})" for c in stale]
        cells = [c for c in cells if c["run_id"] == run_id]
        cpython_tests = [d for d in cpython_tests if d["run_id"] == run_id]
    present = {c["python"] for c in cells if c["cell_status"] != schema.CELL_MISSING}
    axis = list(backends or sorted({c["backend"] for c in cells}) or ["eager"])
    cells += missing_cells([p for p in missing_pythons if p not in present], axis)
    charts = _trend_charts(history, problems) if history else []
    comparison = compare(cells, baseline_dir=baseline_dir, reference=reference, problems=problems)
    return render(comparison, out_dir, rejected, charts, cpython_tests)


def _trend_charts(history: str, problems: List[str]) -> List[str]:
    from matrix.service import trends   # standard library only, like this module's other needs

    try:
        rows, base = trends.load(history)
    except trends.HistoryUnavailable as err:
        problems.append(f"no trends: {err}")
        return []
    return trends.charts(rows, lambda run_id: f"{base}/runs/{quote(run_id, safe='')}" if base else "#")
