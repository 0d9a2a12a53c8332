"""CPython test-suite cells (`python -m matrix cpython-tests --json`) as history.

Each Lib/test module is a case of the subject 'cpython-tests'; its metrics are counts
(regressions: tests that pass plainly and fail compiled), so first-bad answers "since
which run does test_x regress under the compiler" like it does for IR counts.  The
document is validated by its own module (`matrix.cpython_tests.cell`); an installation
without that module refuses such cells with a 422 that says so.
"""
from __future__ import annotations

from typing import Any, Dict

from matrix.service.ingest import CPYTHON_TESTS_SUBJECT, CaseRow, Cell, Rejected, common_fields

# Module-row fields recorded as metrics (regressions is the length of its list).
METRICS = ("regressions", "tests", "compiled_tests", "plain_passed", "compiled_passed", "improvements")
METRIC_VERSIONS = {name: 1 for name in METRICS}


def cpython_tests_cell(doc: Dict[str, Any]) -> Cell:
    try:
        from matrix.cpython_tests import cell as cpython_cell
    except ImportError:
        raise Rejected(422, "field kind: this installation has no matrix.cpython_tests, so it cannot "
                            "validate cpython-tests cells; upgrade the service") from None
    try:
        cpython_cell.validate(doc)
    except cpython_cell.CellError as err:
        raise Rejected(422, str(err)) from None
    cases = []
    for module, row in doc["modules"].items():
        metrics: Dict[str, Any] = {name: float(row[name]) for name in METRICS if name != "regressions"}
        metrics["regressions"] = float(len(row["regressions"]))
        detail = "; ".join(r["test"] for r in row["regressions"]) or row.get("reason")
        cases.append(CaseRow(module, row["status"], metrics, {}, detail))
    return common_fields(doc, subject=CPYTHON_TESTS_SUBJECT, schema_version=int(doc["schema_version"]),
                         metric_versions=dict(METRIC_VERSIONS), cases=cases)
