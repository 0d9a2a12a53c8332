"""Run the project's tests twice (plain, then every test function compiled) and compare.

Each run is `python -m pytest` in a subprocess, from the project's root, with the plugin
(`matrix.project_tests.plugin`) recording every outcome.  A regression is a test that
passes (or is skipped, or fails as expected) plainly and does anything else compiled; an
improvement the reverse.  Both are behaviour changes; only regressions fail the command.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

PROJECT_ROOT = Path(__file__).resolve().parents[2]
KIND = "tracematrix-project-tests"
SCHEMA_VERSION = 1
GOOD = ("pass", "skip", "expected_failure")
# This suite's own end-to-end test runs the suite: inside the suite it would run itself.
SELF_TEST = "tests/matrix/test_project_tests.py"

Json = Dict[str, Any]


class RunFailed(RuntimeError):
    """A pytest run ended without writing its outcomes (a crash, a usage error)."""


def _pytest(targets: Sequence[str], backend: Optional[str], jobs: int, out: Path, timeout_s: float) -> Json:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "matrix.project_tests.plugin",
               "--tracematrix-outcomes", str(out), "--ignore", SELF_TEST, *targets]
    if backend:
        command += ["--tracematrix-compile", backend]
    if jobs > 1:
        command += ["-n", str(jobs)]
    env = dict(os.environ, PYTHONHASHSEED=os.environ.get("PYTHONHASHSEED", "0"))
    done = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=timeout_s)
    if not out.exists():
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise RunFailed(f"pytest ({'compiled, ' + backend if backend else 'plain'}) exited {done.returncode} "
                        f"without recording outcomes:\n{tail}")
    with open(out, encoding="utf-8") as handle:
        return json.load(handle)


def compare(plain: Dict[str, List[Any]], compiled: Dict[str, List[Any]]) -> Json:
    regressions, improvements = [], []
    for test, (outcome, _) in plain.items():
        got, detail = compiled.get(test, ("missing", None))
        if got == outcome:
            continue
        change = {"test": test, "plain": outcome, "compiled": got, "detail": detail}
        if outcome in GOOD and got not in GOOD:
            regressions.append(change)
        elif outcome not in GOOD and got in GOOD:
            improvements.append(change)
        elif got != outcome:
            regressions.append(change)  # e.g. skipped plainly, expected failure compiled
    return {"regressions": regressions, "improvements": improvements}


def run(targets: Sequence[str], backend: str = "eager", jobs: int = 1, timeout_s: float = 3600.0) -> Json:
    """Both runs and their comparison, as the cell document."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tracematrix-project-tests-") as tmp:
        plain = _pytest(targets, None, jobs, Path(tmp) / "plain.json", timeout_s)
        plain_s = time.perf_counter() - started
        compiled = _pytest(targets, backend, jobs, Path(tmp) / "compiled.json", timeout_s)
    compiled_s = time.perf_counter() - started - plain_s
    changes = compare(plain["outcomes"], compiled["outcomes"])

    def passed(outcomes: Dict[str, List[Any]]) -> int:
        return sum(1 for outcome, _ in outcomes.values() if outcome == "pass")

    return {
        "schema_version": SCHEMA_VERSION, "kind": KIND,
        "python": ".".join(platform.python_version_tuple()[:2]), "python_version": platform.python_version(),
        "backend": backend, "targets": list(targets), "excluded": [SELF_TEST],
        "duration_s": round(time.perf_counter() - started, 3),
        "plain_duration_s": round(plain_s, 3), "compiled_duration_s": round(compiled_s, 3),
        "totals": {"tests": len(plain["outcomes"]), "compiled_tests": compiled["compiled"],
                   "traced_tests": compiled["traced"],
                   "plain_passed": passed(plain["outcomes"]), "compiled_passed": passed(compiled["outcomes"]),
                   "regressions": len(changes["regressions"]), "improvements": len(changes["improvements"])},
        **changes,
    }
