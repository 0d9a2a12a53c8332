"""A second subject in the harness: Dynamo's cells, runnable and testable without torch.

The Dynamo engine itself is exercised in test_dynamo_subject_torch.py where torch is
importable; here a fake engine stands in for it, and torch is made unimportable on
purpose to check the "subject unavailable" cell.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from matrix import schema
from matrix.cases import UpstreamExpectation, load_suite
from matrix.engines import UnknownBackend
from matrix.runner import run_cell

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FAKE_DYNAMO = "matrix_fakes:FakeDynamoEngine"


def _python_m(*args, pythonpath=()):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, pythonpath), str(ROOT), str(HERE)]),
               TRACEMATRIX_RUN_ID="subject-run")
    return subprocess.run([sys.executable, "-m", "matrix", *args], capture_output=True, text=True,
                          cwd=str(ROOT), env=env, timeout=300)


def _broken_torch(tmp_path):
    """A `torch` package that fails to import, first on the path: torch "installed but broken"."""
    package = tmp_path / "shadow" / "torch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('planted: this torch cannot be imported')\n")
    return package.parent


def test_a_dynamo_cell_names_its_subject_and_torch(tmp_path):
    cell = run_cell(backend="eager", subject=schema.SUBJECT_DYNAMO, suite="matrix_fakes",
                    pattern="doubles,adds_then_multiplies", engine_spec=FAKE_DYNAMO, jobs=2)
    schema.validate_cell(cell)
    assert cell["subject"] == "dynamo" and cell["cell_status"] == schema.CELL_OK
    assert cell["environment"]["torch"] == "9.9.0+fake"
    assert cell["suite"]["engine"] == FAKE_DYNAMO
    assert [c["status"] for c in cell["cases"].values()] == ["pass", "pass"]
    assert cell["cases"]["adds_then_multiplies"]["metrics"]["recompile_count"] == 1


def test_the_subject_chooses_its_engine_and_rejects_unknown_subjects():
    with pytest.raises(ValueError, match="unknown subject 'pypy'; expected one of tracematrix, dynamo"):
        run_cell(backend="eager", subject="pypy", suite="matrix_fakes")


def test_without_torch_the_dynamo_cell_is_subject_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises, as where it is absent
    cell = run_cell(backend="eager", subject=schema.SUBJECT_DYNAMO, suite="matrix_fakes", pattern="doubles")
    schema.validate_cell(cell)
    assert cell["cell_status"].startswith(schema.CELL_SUBJECT_UNAVAILABLE_PREFIX + "torch is not importable")
    assert cell["cases"] == {} and cell["subject"] == "dynamo"


def test_without_torch_a_backend_typo_is_still_a_usage_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(UnknownBackend, match="'inductr' for the dynamo subject; it offers eager, aot_eager"):
        run_cell(backend="inductr", subject=schema.SUBJECT_DYNAMO, suite="matrix_fakes")


def test_cli_subject_dynamo_with_a_broken_torch_writes_an_unavailable_cell(tmp_path):
    out = tmp_path / "3.11-dynamo-eager.json"
    done = _python_m("run", "--subject", "dynamo", "--backend", "eager", "--out", str(out), "--suite",
                     "matrix_fakes", "--baselines", str(tmp_path / "baselines"),
                     pythonpath=[_broken_torch(tmp_path)])
    assert done.returncode == 0, done.stderr
    cell = schema.load_cell(out)
    assert cell["cell_status"] == (schema.CELL_SUBJECT_UNAVAILABLE_PREFIX + "torch is not importable here "
                                   "(ImportError: planted: this torch cannot be imported)")
    assert "-dynamo-eager: subject unavailable" in done.stdout
    assert cell["coverage"] is None  # the opcode coverage of this project's tables is not Dynamo's


def test_cli_names_the_valid_subjects(tmp_path):
    done = _python_m("run", "--subject", "foo", "--backend", "eager", "--out", str(tmp_path / "c.json"))
    assert done.returncode == 2
    assert "invalid choice: 'foo'" in done.stderr and "'tracematrix', 'dynamo'" in done.stderr
    assert not (tmp_path / "c.json").exists()


def test_cli_fake_dynamo_engine_and_its_own_baseline(tmp_path):
    out = tmp_path / "cell.json"
    args = ["run", "--subject", "dynamo", "--backend", "eager", "--out", str(out), "--suite", "matrix_fakes",
            "--engine", FAKE_DYNAMO, "--cases", "doubles", "--no-coverage",
            "--baselines", str(tmp_path / "baselines")]
    first = _python_m(*args, "--accept")
    assert first.returncode == 0, first.stderr
    written = json.loads((tmp_path / "baselines" / f"{schema.load_cell(out)['python']}-dynamo-eager.json").read_text())
    assert written["subject"] == "dynamo" and written["accepted_from"]["torch"] == "9.9.0+fake"
    again = _python_m(*args)
    assert "baseline: same" in again.stdout


def test_cell_names_keep_the_projects_names_and_add_the_subject():
    assert schema.cell_name("3.11", "eager") == "3.11-eager"
    assert schema.cell_name("3.11", "eager", "dynamo") == "3.11-dynamo-eager"


def test_dynamo_test_ir_count_cases_carry_the_upstream_table():
    cases = {c.name: c for c in load_suite()}
    table = cases["dynamo_test_ir_count_test1"].upstream
    assert isinstance(table, UpstreamExpectation) and table.metric == "ir_count"
    # The founding bug: the 3.11 row says 10 and 6 (Dynamo counts 11 and 7 there).
    assert table.for_python("3.11")["value"] == 10
    assert cases["dynamo_test_ir_count_test2"].upstream.for_python("3.11")["value"] == 6
    assert table.for_python("3.8") is None  # the upstream test has no 3.8 row


def test_a_cell_records_the_upstream_expectation_of_its_interpreter():
    cell = run_cell(backend="eager", suite="matrix.cases", pattern="dynamo_test_ir_count_*", engine_spec="plain",
                    jobs=2)
    found = cell["cases"]["dynamo_test_ir_count_test1"]["upstream_expected"]
    table = {c.name: c for c in load_suite()}["dynamo_test_ir_count_test1"].upstream
    assert found == table.for_python(cell["python"])
    schema.validate_cell(cell)


def test_upstream_expected_must_be_an_object_or_null():
    case = schema.case_result("g", "pass", upstream_expected=[10])
    with pytest.raises(schema.SchemaError, match="cases.t.upstream_expected should be dict or null"):
        schema.validate_case("t", case)
