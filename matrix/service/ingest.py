"""From a posted body to the rows of one cell: parsed, bounded, validated, normalised.

Everything here is pure (no database, no HTTP): `parse_body` turns bytes into a JSON
value or raises Rejected(400); `normalise` checks the document against the cell schema
(upgrading older schema versions first) and the service's own limits, or raises
Rejected(422) naming the field.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from matrix import schema
from matrix.service.tables import CASE_LENGTH, ID_LENGTH

MAX_DEPTH = 32             # a real cell nests about 7 deep
DETAIL_LENGTH = 2000       # of a failed case's detail, kept for the run page
# Ids end up in URLs and file names of reports: a conservative alphabet, no path syntax.
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+@-]*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
CPYTHON_TESTS_KIND = "tracematrix-cpython-tests"
CPYTHON_TESTS_SUBJECT = "cpython-tests"


class Rejected(Exception):
    """A POST the service refuses: an HTTP status and a message naming the problem."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class CaseRow:
    name: str
    status: str
    metrics: Dict[str, Optional[float]]
    ir_opcodes: Dict[str, int]
    detail: Optional[str]


@dataclass
class Cell:
    """One validated cell, as the storage layer writes it."""
    kind: str
    run_id: str
    subject: str
    python: str
    backend: str
    machine: str
    timestamp: str                     # normalised UTC text (see `utc_text`)
    schema_version: int                # as posted
    cell_status: str
    environment: Dict[str, Any]
    metric_versions: Dict[str, int]
    digest: str
    cases: List[CaseRow] = field(default_factory=list)

    @property
    def identity(self) -> Tuple[str, str, str, str, str]:
        return (self.run_id, self.subject, self.python, self.backend, self.machine)

    @property
    def ir_total(self) -> Optional[float]:
        known = [c.metrics.get("ir_count") for c in self.cases if c.metrics.get("ir_count") is not None]
        return float(sum(known)) if known else None  # type: ignore[arg-type]


def _no_constants(name: str) -> Any:
    raise Rejected(400, f"not standard JSON: {name} is not a number JSON allows")


def depth_of(value: Any) -> int:
    """Nesting depth of a parsed JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def parse_body(body: bytes) -> Any:
    """The JSON value of a request body; Rejected(400) for anything that is not one."""
    if not body.strip():
        raise Rejected(400, "empty body: post one cell document as JSON")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise Rejected(400, f"body is not UTF-8 (byte {err.start})") from None
    try:
        doc = json.loads(text, parse_constant=_no_constants)
    except RecursionError:
        raise Rejected(400, f"JSON nested too deeply (the limit is {MAX_DEPTH} levels)") from None
    except ValueError as err:
        raise Rejected(400, f"body is not valid JSON: {err}") from None
    if depth_of(doc) > MAX_DEPTH:
        raise Rejected(400, f"JSON nested too deeply (the limit is {MAX_DEPTH} levels)")
    return doc


def utc_text(value: str, where: str = "timestamp") -> str:
    """An ISO 8601 time as fixed-width UTC text, which sorts as time on any database."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise Rejected(422, f"field {where} is {value[:40]!r}; expected an ISO 8601 time such as "
                            f"2026-01-01T00:00:00+00:00") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _check_id(doc: Dict[str, Any], name: str) -> str:
    value = doc[name]
    if len(value) > ID_LENGTH or not _SAFE_ID.fullmatch(value) or ".." in value:
        raise Rejected(422, f"field {name} is {value[:60]!r}: ids are at most {ID_LENGTH} characters "
                            f"of letters, digits and . _ : + @ - (no path syntax)")
    return value


def _text(value: str, limit: int) -> str:
    """Free text as every database can store it: PostgreSQL's text cannot hold NUL."""
    return value[:limit].replace("\x00", "\\x00")


def _check_case_name(name: str, where: str) -> str:
    if not name or len(name) > CASE_LENGTH or _CONTROL.search(name):
        raise Rejected(422, f"field {where} has a name of {len(name)} characters or with control "
                            f"characters; case names are 1 to {CASE_LENGTH} printable characters")
    return name


def _number(value: Any, where: str) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Rejected(422, f"field {where} should be a finite number or null")
    return float(value)


def digest_of(doc: Any) -> str:
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def normalise(doc: Any) -> Cell:
    """The Cell of a parsed document; Rejected(422) naming the field for a bad one."""
    if not isinstance(doc, dict):
        raise Rejected(422, f"expected a JSON object (one cell document), got {type(doc).__name__}")
    kind = doc.get("kind")
    if kind == schema.CELL_KIND:
        return _tracematrix_cell(doc)
    if kind == CPYTHON_TESTS_KIND:
        from matrix.service.cpython_tests_cells import cpython_tests_cell
        return cpython_tests_cell(doc)
    raise Rejected(422, f"field kind is {str(kind)[:60]!r}; this service accepts {schema.CELL_KIND!r} "
                        f"and {CPYTHON_TESTS_KIND!r} documents")


def common_fields(doc: Dict[str, Any], *, subject: str, schema_version: int,
                  metric_versions: Dict[str, int], cases: List[CaseRow]) -> Cell:
    """The Cell for a document whose own validator has already accepted it."""
    for case in cases:
        _check_case_name(case.name, "cases")
        case.status = _text(case.status, 32)
        case.detail = _text(case.detail, DETAIL_LENGTH) if case.detail else case.detail
    return Cell(kind=doc["kind"], run_id=_check_id(doc, "run_id"), subject=subject,
                python=_check_id(doc, "python"), backend=_check_id(doc, "backend"),
                machine=_check_id(doc, "machine"), timestamp=utc_text(doc["timestamp"]),
                schema_version=schema_version, cell_status=_text(doc["cell_status"], 500),
                environment=doc["environment"], metric_versions=metric_versions,
                digest=digest_of(doc), cases=cases)


def _tracematrix_cell(doc: Dict[str, Any]) -> Cell:
    posted_version = doc.get("schema_version")
    upgraded = schema.upgrade(doc)
    try:
        schema.validate_cell(upgraded)
    except schema.SchemaError as err:
        raise Rejected(422, str(err)) from None
    cases = []
    for name, case in upgraded["cases"].items():
        where = f"cases.{name[:60]}"
        metrics = {m: _number(case["metrics"][m], f"{where}.metrics.{m}") for m in schema.METRICS}
        cases.append(CaseRow(name, case["status"], metrics, dict(case["ir_opcodes"]), case["detail"]))
    return common_fields(upgraded, subject=upgraded["subject"], schema_version=int(posted_version),
                         metric_versions=dict(upgraded["metric_versions"]), cases=cases)
