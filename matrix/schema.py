"""The cell result document: versioned, validated on write and on read.

A cell file is one JSON object (see `validate_cell` for the exact fields). Bad files
raise ResultFileError naming the file and the problem, so that a report can reject
one file and still render the others.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

# Version 2 added `subject` (whose compiler the cell measured: part of a cell's
# identity) and `metric_versions` (which definition of each metric produced the numbers,
# so that history can tell a changed count from a changed definition).  Older documents
# are read through `upgrade`.
SCHEMA_VERSION = 2
CELL_KIND = "tracematrix-cell"

# The compilers the matrix can measure; the project's own is the default subject.
SUBJECT_TRACEMATRIX = "tracematrix"
SUBJECT_DYNAMO = "dynamo"
SUBJECTS = (SUBJECT_TRACEMATRIX, SUBJECT_DYNAMO)


def cell_name(python: str, backend: str, subject: str = SUBJECT_TRACEMATRIX) -> str:
    """A cell's name in files (results, baselines): '3.11-eager' for the project's own
    compiler (the names cells had before subjects existed), '3.11-dynamo-eager' otherwise."""
    return f"{python}-{backend}" if subject == SUBJECT_TRACEMATRIX else f"{python}-{subject}-{backend}"

# Metric names follow DESIGN.md; they are part of the schema.
COUNT_METRICS = ("ir_count", "graph_node_count", "graph_count", "graph_break_count",
                 "guard_count", "recompile_count", "kernel_count")
METRICS = COUNT_METRICS + ("compile_time_s",)
# Compared against baselines and across versions; compile time is a trend, not a gate.
GATED_METRICS = COUNT_METRICS
# The definition each metric is computed by; bump one when its meaning changes (and say
# how in the report), never silently.  A cell records the definitions it was made with.
METRIC_VERSIONS: Dict[str, int] = {name: 1 for name in METRICS}
METRIC_VERSIONS["ir_count"] = 2
# What each definition after the first changed, and why: shown in the report (index.html,
# "Metric definitions") so that a moved series is read against its definition.
METRIC_CHANGES: Dict[Tuple[str, int], str] = {
    ("ir_count", 2): (
        "Dynamo's rule exactly (issue 19), checked against torch 2.13's own numbers on 3.11: the "
        "instructions of inlined functions (comprehensions before 3.12, helpers, generators, "
        "lambdas) are counted up to each function's last taken jump, a generator's yield ends a "
        "segment uncounted, a frame that breaks is counted twice up to the break (Dynamo restarts "
        "there), a continuation counts Dynamo's resume-prologue flag (4 instructions), and "
        "instructions Dynamo's cleaned bytecode expands count as their expansion (IF_NONE jumps 3 "
        "from 3.11, slices 2 from 3.12, a bare super() 3 before 3.12). Version 1 counted the "
        "frame's own instructions only, at every jump whether taken or not: the comment that "
        "inlined instructions are not Dynamo's was wrong, as measured."),
}

CASE_STATUSES = ("pass", "mismatch", "error", "timeout", "unsupported")
FAILED_CASE_STATUSES = ("mismatch", "error", "timeout")
CELL_OK = "ok"
CELL_NO_GPU = "no GPU"
CELL_MISSING = "missing"
CELL_UNAVAILABLE_PREFIX = "backend unavailable: "
CELL_NO_TABLE = "no table"                       # this interpreter has no opcode table yet
CELL_SUBJECT_UNAVAILABLE_PREFIX = "subject unavailable: "   # e.g. torch not importable here
CELL_ERROR_PREFIX = "error: "

Json = Dict[str, Any]


class SchemaError(ValueError):
    """A document does not follow the schema; the message names the field."""


class ResultFileError(ValueError):
    """A result file cannot be used; names the file and the problem."""

    def __init__(self, path: Union[str, Path], problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)
        self.problem = problem


_CELL_FIELDS: Tuple[Tuple[str, tuple], ...] = (
    ("schema_version", (int,)), ("kind", (str,)), ("run_id", (str,)), ("timestamp", (str,)),
    ("machine", (str,)), ("python", (str,)), ("backend", (str,)), ("subject", (str,)),
    ("metric_versions", (dict,)), ("cell_status", (str,)),
    ("environment", (dict,)), ("coverage", (dict, type(None))), ("duration_s", (int, float)),
    ("cases", (dict,)),
)
_CASE_FIELDS: Tuple[Tuple[str, tuple], ...] = (
    ("group", (str,)), ("status", (str,)), ("detail", (str, type(None))), ("metrics", (dict,)),
    ("ir_opcodes", (dict,)), ("graph_hash", (str, type(None))), ("graph_hashes", (list,)),
    ("graph_texts", (list,)), ("guards", (list,)), ("break_reasons", (list,)),
    ("recompile_reasons", (list,)), ("fallback_reasons", (list,)), ("kernels", (list,)),
    ("events", (list,)), ("calls", (int,)), ("expected_recompiles", (int,)),
    ("duration_s", (int, float)),
)
# Optional case fields (cells written before they existed lack them): the case's source
# and its `dis` listing on the cell's interpreter, for the report's case pages; and the
# count another project's test hard-codes for the case on this interpreter
# ({"metric", "value", "source"}, see matrix.cases.UpstreamExpectation).
_OPTIONAL_CASE_FIELDS: Tuple[Tuple[str, tuple], ...] = (
    ("source", (str, type(None))), ("dis", (str, type(None))), ("upstream_expected", (dict, type(None))),
)
_ENVIRONMENT_FIELDS = ("python_version", "python_implementation", "numpy", "triton",
                       "platform", "git_commit")


def _type_names(types: tuple) -> str:
    return " or ".join("null" if t is type(None) else t.__name__ for t in types)


def _check_fields(obj: Json, fields: Sequence[Tuple[str, tuple]], where: str) -> None:
    for name, types in fields:
        if name not in obj:
            raise SchemaError(f"missing field {where}{name}")
        value = obj[name]
        # bool is an int subclass; a boolean where a count belongs is a bug.
        if isinstance(value, bool) or not isinstance(value, types):
            raise SchemaError(f"field {where}{name} should be {_type_names(types)}, "
                              f"got {type(value).__name__}")


def validate_case(name: str, case: Any) -> None:
    where = f"cases.{name}."
    if not isinstance(case, dict):
        raise SchemaError(f"field cases.{name} should be an object")
    _check_fields(case, _CASE_FIELDS, where)
    _check_fields(case, [f for f in _OPTIONAL_CASE_FIELDS if f[0] in case], where)
    if case["status"] not in CASE_STATUSES:
        raise SchemaError(f"field {where}status is {case['status']!r}; expected one of "
                          f"{', '.join(CASE_STATUSES)}")
    for metric in METRICS:
        if metric not in case["metrics"]:
            raise SchemaError(f"missing field {where}metrics.{metric}")
        value = case["metrics"][metric]
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise SchemaError(f"field {where}metrics.{metric} should be a number or null, "
                              f"got {type(value).__name__}")
    for opname, count in case["ir_opcodes"].items():
        if isinstance(count, bool) or not isinstance(count, int):
            raise SchemaError(f"field {where}ir_opcodes.{opname} should be an int")


def upgrade(doc: Any) -> Any:
    """The document in the current schema version (a new dict; the input is not changed).

    Version 1 cells were all made by the project's own compiler with the first definition
    of every metric.  Anything that is not an older cell is returned as it is, for
    `validate_cell` to judge.
    """
    if not isinstance(doc, dict) or doc.get("schema_version") != 1:
        return doc
    upgraded = dict(doc, schema_version=SCHEMA_VERSION)
    upgraded.setdefault("subject", SUBJECT_TRACEMATRIX)
    upgraded.setdefault("metric_versions", {name: 1 for name in METRICS})
    return upgraded


def validate_cell(doc: Any) -> None:
    """Raise SchemaError naming the first problem; return None for a valid cell (of the
    current version: pass older ones through `upgrade` first)."""
    if not isinstance(doc, dict):
        raise SchemaError(f"expected a JSON object, got {type(doc).__name__}")
    version = doc.get("schema_version")
    if version != SCHEMA_VERSION:
        raise SchemaError(f"schema_version is {version!r}; this harness reads versions "
                          f"1 to {SCHEMA_VERSION} (re-run `python -m matrix run` with this checkout)")
    _check_fields(doc, _CELL_FIELDS, "")
    if doc["kind"] != CELL_KIND:
        raise SchemaError(f"kind is {doc['kind']!r}, expected {CELL_KIND!r}")
    if doc["subject"] not in SUBJECTS:
        raise SchemaError(f"field subject is {doc['subject']!r}; expected one of {', '.join(SUBJECTS)}")
    for name, number in doc["metric_versions"].items():
        if isinstance(number, bool) or not isinstance(number, int):
            raise SchemaError(f"field metric_versions.{name} should be int")
    for name in _ENVIRONMENT_FIELDS:
        if name not in doc["environment"]:
            raise SchemaError(f"missing field environment.{name}")
    for name, case in doc["cases"].items():
        validate_case(name, case)


def empty_metrics() -> Json:
    return {name: None for name in METRICS}


def case_result(group: str, status: str, detail: Optional[str] = None, **fields: Any) -> Json:
    """A case entry with every field present; `fields` override the empty defaults."""
    result: Json = {
        "group": group, "status": status, "detail": detail, "metrics": empty_metrics(),
        "ir_opcodes": {}, "graph_hash": None, "graph_hashes": [], "graph_texts": [],
        "guards": [], "break_reasons": [], "recompile_reasons": [], "fallback_reasons": [],
        "kernels": [], "events": [], "calls": 0, "expected_recompiles": 0, "duration_s": 0.0,
        "source": None, "dis": None, "upstream_expected": None,
    }
    unknown = set(fields) - set(result)
    if unknown:
        raise SchemaError(f"unknown case fields: {', '.join(sorted(unknown))}")
    result.update(fields)
    return result


def cell_document(*, run_id: str, timestamp: str, machine: str, python: str, backend: str,
                  cell_status: str, environment: Json, coverage: Optional[Json],
                  duration_s: float, cases: Dict[str, Json], suite: Optional[Json] = None,
                  subject: str = SUBJECT_TRACEMATRIX,
                  metric_versions: Optional[Dict[str, int]] = None) -> Json:
    return {
        "schema_version": SCHEMA_VERSION, "kind": CELL_KIND, "run_id": run_id,
        "timestamp": timestamp, "machine": machine, "python": python, "backend": backend,
        "subject": subject, "metric_versions": dict(metric_versions or METRIC_VERSIONS),
        "cell_status": cell_status, "environment": environment, "coverage": coverage,
        "duration_s": duration_s, "suite": suite or {}, "cases": cases,
    }


def dumps(doc: Json) -> str:
    return json.dumps(doc, indent=1, sort_keys=True, default=str) + "\n"


def write_cell(path: Union[str, Path], doc: Json) -> None:
    validate_cell(doc)
    write_atomically(path, dumps(doc))


def write_atomically(path: Union[str, Path], text: str) -> None:
    """Write through a temporary file and a rename: a reader never sees half a file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)


def load_cell(path: Union[str, Path]) -> Json:
    """Read and validate one cell file; ResultFileError names the file and the problem."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ResultFileError(path, f"cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise ResultFileError(path, "not a UTF-8 text file") from None
    try:
        doc = json.loads(text)
    except ValueError as err:
        raise ResultFileError(path, f"not valid JSON ({err})") from None
    doc = upgrade(doc)
    try:
        validate_cell(doc)
    except SchemaError as err:
        raise ResultFileError(path, str(err)) from None
    return doc


def load_cells(paths: Sequence[Union[str, Path]]) -> Tuple[List[Json], List[ResultFileError]]:
    """Every readable cell, plus one error per rejected file (the caller decides the exit)."""
    cells: List[Json] = []
    errors: List[ResultFileError] = []
    for path in paths:
        try:
            cell = load_cell(path)
        except ResultFileError as err:
            errors.append(err)
            continue
        cell["_source"] = str(path)
        cells.append(cell)
    return cells, errors
