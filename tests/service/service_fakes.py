"""Cells for the service's tests, built with the schema's own constructors."""
from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional

import pytest

from matrix import schema

# Set by .ci/run (with a PostgreSQL server): there, nothing of the service's may be skipped.
REQUIRE_VARIABLE = "TRACEMATRIX_REQUIRE_POSTGRES"
SERVICE_MODULES = ("starlette", "sqlalchemy", "alembic", "uvicorn", "psycopg", "httpx")


def require_service() -> None:
    """Skip the calling test module, with the reason, where the service extra is missing;
    under CI a missing package is an import error instead."""
    for name in SERVICE_MODULES:
        if os.environ.get(REQUIRE_VARIABLE):
            __import__(name)
        else:
            pytest.importorskip(name, reason=f"the service tests need the 'service' and 'test' extras "
                                             f"(pip install -e '.[service,test]'): no {name}")

TOKEN = "test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TEST1_310 = {"LOAD_FAST": 5, "BINARY_ADD": 1, "STORE_FAST": 2, "BINARY_MULTIPLY": 1, "RETURN_VALUE": 1}
TEST1_311 = {"RESUME": 1, "LOAD_FAST": 5, "BINARY_OP": 2, "STORE_FAST": 2, "RETURN_VALUE": 1}


def case(ir_opcodes: Optional[Dict[str, int]] = None, *, status: str = "pass", **metrics: Any) -> schema.Json:
    ops = dict(TEST1_310 if ir_opcodes is None else ir_opcodes)
    values = {"ir_count": sum(ops.values()), "graph_node_count": 2, "graph_count": 1,
              "graph_break_count": 0, "guard_count": 2, "recompile_count": 0, "kernel_count": 0,
              "compile_time_s": 0.002}
    values.update(metrics)
    return schema.case_result("g", status, None if status == "pass" else "planted failure",
                              metrics=values, ir_opcodes=ops, calls=1)


def cell(run_id: str = "run-1", *, python: str = "3.11", backend: str = "eager", machine: str = "box-a",
         timestamp: str = "2026-01-01T00:00:00+00:00", numpy: str = "1.26.4", commit: str = "a" * 40,
         cases: Optional[Dict[str, schema.Json]] = None, subject: str = schema.SUBJECT_TRACEMATRIX,
         metric_versions: Optional[Dict[str, int]] = None, torch: Optional[str] = None) -> schema.Json:
    env = {"python_version": f"{python}.7", "python_implementation": "CPython", "numpy": numpy,
           "triton": None, "platform": "Linux-x86_64", "git_commit": commit, "git_dirty": False}
    if torch is not None:  # a Dynamo cell records the torch it measured
        env["torch"] = torch
    doc = schema.cell_document(run_id=run_id, timestamp=timestamp, machine=machine, python=python,
                               backend=backend, cell_status=schema.CELL_OK, environment=env,
                               coverage=None, duration_s=1.0,
                               cases={"test1": case()} if cases is None else cases,
                               subject=subject, metric_versions=metric_versions)
    schema.validate_cell(doc)
    return doc


def version_1(doc: schema.Json) -> schema.Json:
    """The same cell as schema version 1 wrote it (no subject, no metric_versions)."""
    old = {k: v for k, v in doc.items() if k not in ("subject", "metric_versions")}
    old["schema_version"] = 1
    return old


def body(doc: Any) -> bytes:
    return json.dumps(doc).encode("utf-8")
