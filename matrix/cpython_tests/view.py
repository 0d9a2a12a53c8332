"""cpython-tests cells in the HTML report: loading them beside the other cells, and what
the report's section shows (per interpreter: totals, each regression with its detail, the
modules that crashed, timed out or could not run).  Standard library only.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple, Union

from matrix import schema
from matrix.cpython_tests import cell


def _version_key(python: str) -> Tuple[Any, ...]:
    try:
        return tuple(int(p) for p in python.split("."))
    except ValueError:
        return (float("inf"), python)


def split(paths: Sequence[Union[str, Path]]) -> Tuple[List[cell.Json], List[schema.ResultFileError], List[str]]:
    """(cpython-tests documents, rejected ones, every other path).  Other paths, unreadable
    files included, are left to `schema.load_cells`, which names their problems."""
    docs: List[cell.Json] = []
    rejected: List[schema.ResultFileError] = []
    others: List[str] = []
    for path in paths:
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            others.append(str(path))
            continue
        if not cell.is_cpython_tests(doc):
            others.append(str(path))
            continue
        try:
            cell.validate(doc)
        except cell.CellError as err:
            rejected.append(schema.ResultFileError(path, str(err)))
            continue
        doc["_source"] = str(path)
        docs.append(doc)
    return docs, rejected, others


def sections(docs: Sequence[cell.Json]) -> List[Dict[str, Any]]:
    """One section per document (interpreter, machine), oldest interpreter first."""
    shown = []
    for doc in sorted(docs, key=lambda d: (_version_key(d["python"]), d["machine"])):
        regressions = [dict(change, module=name) for name, row in doc["modules"].items()
                       for change in row["regressions"]]
        improvements = [dict(change, module=name) for name, row in doc["modules"].items()
                        for change in row.get("improved", [])]
        problems = [dict(module=name, status=row["status"], reason=row["reason"], stopped=row["stopped"])
                    for name, row in doc["modules"].items()
                    if row["status"] in ("crashed", "timed_out", "error")]
        skipped = [dict(module=name, reason=row["reason"]) for name, row in doc["modules"].items()
                   if row["status"] == "skipped"]
        shown.append({"python": doc["python"], "machine": doc["machine"], "run_id": doc["run_id"],
                      "backend": doc["backend"], "cell_status": doc["cell_status"],
                      "timestamp": doc["timestamp"], "duration_s": doc["duration_s"],
                      "timeout_s": doc["timeout_s"], "selection": doc["selection"], "totals": doc["totals"],
                      "regressions": regressions, "improvements": improvements, "problems": problems,
                      "skipped": skipped, "failing": cell.failing(doc), "source": doc.get("_source"),
                      "environment": doc["environment"]})
    return shown


def summary(docs: Sequence[cell.Json]) -> List[Dict[str, Any]]:
    """The same facts for summary.json."""
    return [{key: s[key] for key in ("python", "machine", "run_id", "backend", "cell_status", "totals",
                                     "failing", "regressions", "problems")}
            for s in sections(docs)]
