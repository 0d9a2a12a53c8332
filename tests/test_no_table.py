"""An interpreter with no opcode table (a new CPython): nothing raises, functions run natively.

Simulated with the test hook TRACEMATRIX_PRETEND_PYTHON=3.16, which makes
``opcode_tables.running_version()`` (the one place that reads the version)
report a version that has no table.  Each check runs in a fresh interpreter.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import opcode_tables
from opcode_tables.coverage import real_opnames

ROOT = Path(__file__).resolve().parent.parent
NEW = "3.16"


def _run(*args, code=None, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{opcode_tables.PRETEND_VERSION_VARIABLE: NEW})
    command = [sys.executable, *(["-c", textwrap.dedent(code)] if code else args)]
    return subprocess.run(command, capture_output=True, text=True, cwd=str(ROOT), env=env, timeout=timeout)


def test_compiled_functions_run_natively_with_one_warning_each():
    done = _run(code="""
        import json, warnings
        import numpy as np
        import compiler, opcode_tables
        from compiler.no_table import NoOpcodeTableWarning

        def f(x, scale=2.0):
            return (x * scale + 1.0).sum()

        def boom(x):
            raise KeyError(x)

        out = {"has_table": opcode_tables.has_current_table()}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cf = compiler.compile(f, backend="numpy")
            cboom = compiler.compile(boom)
            results = [cf(np.arange(4.0)), cf(np.arange(3.0), scale=3.0), cf(np.ones(2))]
            try:
                cboom("k")
            except KeyError as err:
                out["raised"] = repr(err)
            explained = compiler.explain(f, np.arange(2.0))
        out["results"] = [float(r) for r in results]
        out["plain"] = [float(f(np.arange(4.0))), float(f(np.arange(3.0), scale=3.0)), float(f(np.ones(2)))]
        out["explain_result"] = [float(explained.result), float(f(np.arange(2.0)))]
        out["graphs"] = explained.graph_count
        out["events"] = len(compiler.events())
        out["name"] = cf.__name__
        out["warnings"] = [(w.category.__name__, str(w.message)) for w in caught]
        print(json.dumps(out))
    """)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["has_table"] is False
    assert out["results"] == out["plain"]
    assert out["raised"] == "KeyError('k')"
    assert out["explain_result"][0] == out["explain_result"][1]
    assert out["graphs"] == 0 and out["events"] == 0
    assert out["name"] == "f"
    # one warning per compiled function (and one for explain), none per call
    assert [category for category, _ in out["warnings"]] == ["NoOpcodeTableWarning"] * 3
    message = out["warnings"][0][1]
    assert f"CPython {NEW}" in message and "opcode_tables/py316.py" in message and "natively" in message


def test_coverage_lists_every_opcode_as_missing():
    done = _run("-m", "opcode_tables", "coverage", "--json")
    assert done.returncode == 1  # missing opcodes: the exit status says the table is incomplete
    report = json.loads(done.stdout)
    assert report["table"] == "py316"
    assert sorted(report["missing"]) == sorted(real_opnames())
    assert report["counts"]["handled"] == report["counts"]["pending"] == 0
    text = _run("-m", "opcode_tables", "coverage")
    assert "add rows to opcode_tables/py316.py" in text.stdout


def test_matrix_run_writes_a_no_table_cell(tmp_path):
    out = tmp_path / "cell.json"
    done = _run("-m", "matrix", "run", "--backend", "eager", "--out", str(out), "--no-coverage",
                "--baselines", str(tmp_path))
    assert done.returncode == 0, done.stderr
    cell = json.loads(out.read_text())
    from matrix import schema
    assert cell["python"] == NEW and cell["cell_status"] == schema.CELL_NO_TABLE
    assert cell["cases"] == {}
    assert "py316.py" in cell["environment"]["backend_note"]


def test_the_hook_only_pretends_versions_without_a_table():
    done = _run(code="import opcode_tables; print(opcode_tables.running_version())")
    assert done.stdout.strip() == "(3, 16)"
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{opcode_tables.PRETEND_VERSION_VARIABLE: "3.11"})
    refused = subprocess.run([sys.executable, "-c", "import opcode_tables; opcode_tables.running_version()"],
                             capture_output=True, text=True, env=env, cwd=str(ROOT))
    assert refused.returncode != 0 and "expected a version with no table" in refused.stderr


def test_table_for_an_unknown_version_names_the_module_to_write():
    with pytest.raises(opcode_tables.NoTableError, match=r"opcode_tables/py399\.py"):
        opcode_tables.table_for((3, 99))
