"""`python -m matrix run` and `report` end to end, as nox calls them."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def _python_m(*args, env_extra=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(HERE)]),
               TRACEMATRIX_RUN_ID="cli-run", **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "matrix", *args], capture_output=True, text=True,
                          cwd=str(ROOT), env=env, timeout=300)


def _run_cell(tmp_path, *extra):
    out = tmp_path / "results" / "cell.json"
    done = _python_m("run", "--backend", "eager", "--out", str(out), "--suite", "matrix_fakes",
                     "--engine", "matrix_fakes:FakeEngine", "--cases", "synthetic/*", "--jobs", "2",
                     "--no-coverage", "--baselines", str(tmp_path / "baselines"), *extra)
    return done, out


def test_run_writes_a_cell_and_exits_zero_even_with_a_mismatch(tmp_path):
    done, out = _run_cell(tmp_path)
    assert done.returncode == 0, done.stderr
    cell = json.loads(out.read_text())
    assert cell["run_id"] == "cli-run"
    assert cell["cases"]["wrong_when_compiled"]["status"] == "mismatch"
    assert "no baseline" in done.stdout
    assert "wrong_when_compiled: mismatch" in done.stderr


def test_accept_writes_the_baseline_only_when_asked(tmp_path):
    baseline = tmp_path / "baselines" / f"{json.loads(_run_cell(tmp_path)[1].read_text())['python']}-eager.json"
    assert not baseline.exists()
    done, _ = _run_cell(tmp_path, "--accept")
    assert done.returncode == 0 and baseline.exists()
    assert "accepted: wrote" in done.stdout
    done, _ = _run_cell(tmp_path)
    assert "baseline: same" in done.stdout


def test_report_exit_code_follows_the_verdicts(tmp_path):
    pytest.importorskip("pandas", reason="the report needs pandas")
    pytest.importorskip("jinja2", reason="the report needs jinja2")
    _, cell = _run_cell(tmp_path, "--accept")
    done = _python_m("report", str(cell), "--out", str(tmp_path / "rep"),
                     "--baselines", str(tmp_path / "baselines"), "--missing", "3.99")
    # the synthetic suite has a planted mismatch: the report is written, then the exit is non-zero
    assert done.returncode == 1
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert summary["failed_cells"] and (tmp_path / "rep" / "index.html").exists()
    assert "3.99 eager" in [c["column"] for c in summary["cells"]]

    done, cell = _run_cell(tmp_path, "--cases", "doubles")
    done = _python_m("report", str(cell), "--out", str(tmp_path / "rep2"),
                     "--baselines", str(tmp_path / "baselines"))
    assert done.returncode == 0, done.stdout + done.stderr


def test_report_without_files_is_an_error(tmp_path):
    pytest.importorskip("pandas", reason="the report needs pandas")
    done = _python_m("report", "--out", str(tmp_path / "rep"))
    assert done.returncode == 2 and "no cell files" in done.stderr


def test_an_unknown_backend_name_is_a_usage_error(tmp_path):
    out = tmp_path / "cell.json"
    done = _python_m("run", "--backend", "typo", "--out", str(out), "--suite", "matrix_fakes",
                     "--engine", "matrix_fakes:FakeEngine", "--no-coverage")
    assert done.returncode == 2
    assert "unknown backend 'typo'" in done.stderr and not out.exists()
