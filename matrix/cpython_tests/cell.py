"""The cpython-tests cell: one JSON document per interpreter (`<python>-cpython-tests.json`).

    {schema_version: 1, kind: "tracematrix-cpython-tests", run_id, timestamp, machine,
     python, backend, cell_status, environment, duration_s, timeout_s, selection,
     totals: totals(modules), modules: {module name: row}}

A row: status (one of MODULE_STATUSES), reason, tests, compiled_tests, plain_passed,
compiled_passed, plain_skipped, improvements, plain_duration_s, compiled_duration_s,
compiler (counts of the compiler's events, or null), stopped (the test that was running
when a run crashed or timed out), regressions [{test, plain, compiled, detail}] and,
optionally, improved (the same shape: tests that fail plainly and pass compiled).

`validate` raises CellError naming the first bad field; the results service
(`matrix.service.cpython_tests_cells`) and the report use it.  Standard library only.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from matrix import schema

SCHEMA_VERSION = 1
KIND = "tracematrix-cpython-tests"
SELECTIONS = ("default", "all", "modules")
# passed: no test behaves differently compiled; regressed: some test that passes (or is
# skipped, or fails as expected) plainly does not compiled; changed: only improvements
# (plain failure, compiled pass: still a behaviour change); crashed / timed_out: a run
# died or ran past the timeout (`stopped` names the test); error: the module cannot run
# plainly here; skipped: the module does not exist or does not import on this interpreter.
MODULE_STATUSES = ("passed", "regressed", "changed", "crashed", "timed_out", "error", "skipped")
FAILING_STATUSES = ("regressed", "crashed", "timed_out")   # the command exits 1 for these
# Outcomes of one test (the child's) plus "missing": absent from a complete compiled run.
OUTCOMES = ("pass", "fail", "error", "skip", "expected_failure", "unexpected_success", "missing")
# A regression: plainly one of these, compiled something else.
GOOD_OUTCOMES = ("pass", "skip", "expected_failure")

Json = Dict[str, Any]
_NUMBER = (int, float)
_NONE = type(None)

_TOP_FIELDS: Tuple[Tuple[str, tuple], ...] = (
    ("schema_version", (int,)), ("kind", (str,)), ("run_id", (str,)), ("timestamp", (str,)),
    ("machine", (str,)), ("python", (str,)), ("backend", (str,)), ("cell_status", (str,)),
    ("environment", (dict,)), ("duration_s", _NUMBER), ("timeout_s", _NUMBER),
    ("selection", (str,)), ("totals", (dict,)), ("modules", (dict,)),
)
ROW_COUNTS = ("tests", "compiled_tests", "plain_passed", "compiled_passed", "plain_skipped", "improvements")
_ROW_FIELDS: Tuple[Tuple[str, tuple], ...] = (
    ("status", (str,)), ("reason", (str, _NONE)),
    *((name, (int,)) for name in ROW_COUNTS),
    ("plain_duration_s", _NUMBER + (_NONE,)), ("compiled_duration_s", _NUMBER + (_NONE,)),
    ("compiler", (dict, _NONE)), ("stopped", (str, _NONE)), ("regressions", (list,)),
)
_CHANGE_FIELDS: Tuple[Tuple[str, tuple], ...] = (
    ("test", (str,)), ("plain", (str,)), ("compiled", (str,)), ("detail", (str, _NONE)),
)
ENVIRONMENT_FIELDS = ("python_version", "python_implementation", "numpy", "triton", "platform", "git_commit")
# totals: the counts are checked against the modules; the times only for their type.
TOTAL_COUNTS = ("modules",) + ROW_COUNTS + ("regressions",) + MODULE_STATUSES
_TOTAL_TIMES = ("plain_duration_s", "compiled_duration_s")


class CellError(ValueError):
    """The document does not follow this schema; the message names the field."""


def _type_names(types: tuple) -> str:
    return " or ".join("null" if t is _NONE else t.__name__ for t in types)


def _check(obj: Json, fields: Sequence[Tuple[str, tuple]], where: str) -> None:
    for name, types in fields:
        if name not in obj:
            raise CellError(f"missing field {where}{name}")
        value = obj[name]
        if isinstance(value, bool) or not isinstance(value, types):   # a bool is no count
            raise CellError(f"field {where}{name} should be {_type_names(types)}, got {type(value).__name__}")
        if isinstance(value, _NUMBER) and value < 0:
            raise CellError(f"field {where}{name} is {value}; expected a number >= 0")


def _check_changes(changes: Any, where: str) -> None:
    if not isinstance(changes, list):
        raise CellError(f"field {where} should be list, got {type(changes).__name__}")
    for index, change in enumerate(changes):
        here = f"{where}[{index}]"
        if not isinstance(change, dict):
            raise CellError(f"field {here} should be an object")
        _check(change, _CHANGE_FIELDS, here + ".")
        for side in ("plain", "compiled"):
            if change[side] not in OUTCOMES:
                raise CellError(f"field {here}.{side} is {change[side]!r}; expected one of {', '.join(OUTCOMES)}")


def validate_row(name: str, row: Any) -> None:
    where = f"modules.{name}."
    if not isinstance(row, dict):
        raise CellError(f"field modules.{name} should be an object")
    _check(row, _ROW_FIELDS, where)
    if row["status"] not in MODULE_STATUSES:
        raise CellError(f"field {where}status is {row['status']!r}; expected one of {', '.join(MODULE_STATUSES)}")
    _check_changes(row["regressions"], where + "regressions")
    if "improved" in row:
        _check_changes(row["improved"], where + "improved")


def validate(doc: Any) -> None:
    """Raise CellError naming the first problem; None for a valid document."""
    if not isinstance(doc, dict):
        raise CellError(f"expected a JSON object, got {type(doc).__name__}")
    _check(doc, _TOP_FIELDS, "")
    if doc["schema_version"] != SCHEMA_VERSION:
        raise CellError(f"field schema_version is {doc['schema_version']!r}; this harness reads {SCHEMA_VERSION}")
    if doc["kind"] != KIND:
        raise CellError(f"field kind is {doc['kind']!r}, expected {KIND!r}")
    if doc["selection"] not in SELECTIONS:
        raise CellError(f"field selection is {doc['selection']!r}; expected one of {', '.join(SELECTIONS)}")
    for name in ENVIRONMENT_FIELDS:
        if name not in doc["environment"]:
            raise CellError(f"missing field environment.{name}")
    for name, row in doc["modules"].items():
        validate_row(name, row)
    _check_totals(doc["totals"], doc["modules"])


def _check_totals(given: Json, modules: Dict[str, Json]) -> None:
    _check(given, [(name, (int,)) for name in TOTAL_COUNTS] + [(name, _NUMBER) for name in _TOTAL_TIMES],
           "totals.")
    expected = totals(modules)
    for name in TOTAL_COUNTS:
        if given[name] != expected[name]:
            raise CellError(f"field totals.{name} is {given[name]}, but the modules add up to {expected[name]}")


def totals(modules: Dict[str, Json]) -> Json:
    """Sums over the rows: counts, modules per status, times, and the slowest module."""
    rows = list(modules.values())
    result: Json = {"modules": len(rows)}
    for name in ROW_COUNTS:
        result[name] = sum(int(row.get(name) or 0) for row in rows)
    result["regressions"] = sum(len(row.get("regressions") or ()) for row in rows)
    for status in MODULE_STATUSES:
        result[status] = sum(1 for row in rows if row.get("status") == status)
    for name in _TOTAL_TIMES:
        result[name] = round(sum(float(row.get(name) or 0.0) for row in rows), 3)
    timed = [(float(row.get("compiled_duration_s") or 0.0), float(row.get("plain_duration_s") or 0.0), name)
             for name, row in modules.items()]
    slowest = max(timed, default=None)
    result["slowest"] = ({"module": slowest[2], "compiled_duration_s": slowest[0], "plain_duration_s": slowest[1]}
                         if slowest else None)
    return result


def build(modules: Dict[str, Json], *, run_id: str, timestamp: str, machine: str, python: str,
          backend: str, cell_status: str, environment: Json, duration_s: float, timeout_s: float,
          selection: str) -> Json:
    return {
        "schema_version": SCHEMA_VERSION, "kind": KIND, "run_id": run_id, "timestamp": timestamp,
        "machine": machine, "python": python, "backend": backend, "cell_status": cell_status,
        "environment": environment, "duration_s": duration_s, "timeout_s": timeout_s,
        "selection": selection, "totals": totals(modules), "modules": modules,
    }


def row(status: str, reason: Optional[str] = None, **fields: Any) -> Json:
    """A module row with every field present; `fields` override the empty defaults."""
    result: Json = {"status": status, "reason": reason, **{name: 0 for name in ROW_COUNTS},
                    "plain_duration_s": None, "compiled_duration_s": None, "compiler": None,
                    "stopped": None, "regressions": [], "improved": []}
    unknown = set(fields) - set(result)
    if unknown:
        raise CellError(f"unknown row fields: {', '.join(sorted(unknown))}")
    result.update(fields)
    return result


def file_name(python: str) -> str:
    return f"{python}-cpython-tests.json"


def dumps(doc: Json) -> str:
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def write(path: Union[str, Path], doc: Json) -> None:
    """Validate, then write atomically (a reader never sees half a file)."""
    validate(doc)
    schema.write_atomically(path, dumps(doc))


def is_cpython_tests(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("kind") == KIND


def failing(doc: Json) -> List[str]:
    """Modules whose status makes the run fail (regressed, crashed, timed out)."""
    return [name for name, r in doc["modules"].items() if r["status"] in FAILING_STATUSES]
