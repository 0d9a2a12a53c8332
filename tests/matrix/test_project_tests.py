"""`python -m matrix project-tests` end to end, on a part of this project's own tests, and the
comparison it makes.  (The whole suite through it: `nox -s project_tests`.)"""
from __future__ import annotations

import json
import subprocess
import sys

from matrix.project_tests import runner

# Tests of the compiler that look at its events, compile ids and caches, pytest-rewritten
# asserts, hypothesis tests, test classes and a test of the opcode tables.
TARGETS = ["tests/compiler/test_guards.py", "tests/compiler/test_introspection_api.py",
           "tests/test_corpus_compare.py", "tests/compiler/test_graph_exceptions.py::test_warnings_keep_their_order_with_prints_and_appends",
           "tests/test_decompile.py::test_views_of_branches_loops_and_handlers_parse_and_label_every_jump",
           "tests/matrix/test_cpython_tests.py",
           # calls functions built from the compiler's own resume code (never compiled again)
           "tests/test_resume_code.py::test_for_loop_iterator_is_carried_on_the_stack"]


def test_the_project_tests_compiled_behave_as_plain(tmp_path):
    out = tmp_path / "cell.json"
    done = subprocess.run([sys.executable, "-m", "matrix", "project-tests", "--jobs", "1", "--json", str(out),
                           *TARGETS], cwd=runner.PROJECT_ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(out.read_text())
    totals = doc["totals"]
    assert totals["regressions"] == 0 and totals["improvements"] == 0, doc["regressions"] + doc["improvements"]
    assert totals["tests"] > 40 and totals["compiled_tests"] > 40
    assert totals["compiled_passed"] == totals["plain_passed"] > 0
    assert "regressions 0" in done.stdout


def test_the_comparison_names_every_kind_of_change():
    plain = {"a": ["pass", None], "b": ["fail", "x"], "c": ["skip", None], "d": ["pass", None]}
    compiled = {"a": ["fail", "boom"], "b": ["pass", None], "c": ["expected_failure", None]}
    changes = runner.compare(plain, compiled)
    assert [(c["test"], c["compiled"]) for c in changes["regressions"]] == [("a", "fail"), ("c", "expected_failure"),
                                                                          ("d", "missing")]
    assert [c["test"] for c in changes["improvements"]] == ["b"]


def test_bad_input_is_one_line_and_exit_2():
    done = subprocess.run([sys.executable, "-m", "matrix", "project-tests", "tests/no_such_file.py"],
                          cwd=runner.PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "no such test path" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    done = subprocess.run([sys.executable, "-m", "matrix", "project-tests", "--backend", "bogus"],
                          cwd=runner.PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "unknown backend" in done.stderr
