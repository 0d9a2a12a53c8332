"""`python -m matrix cpython-tests` end to end: a fake test package (every outcome, a crash,
a hang, a behaviour change, broken imports, an old-style test_main), bad input, the report
section, and a quick run of real Lib/test modules on this interpreter."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from matrix.cpython_tests import cell, modules

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FAKE_MODULES = ["test_outcomes", "test_differs", "test_abort", "test_hang", "test_no_import",
                "test_skips_at_import", "test_old_style"]
HANG_TIMEOUT_S = 10   # the hanging module is killed after this; the others finish well within it


def _python_m(*args, cwd=ROOT, timeout=300):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(HERE)]), TRACEMATRIX_RUN_ID="cpt-run")
    return subprocess.run([sys.executable, "-m", "matrix", *args], capture_output=True, text=True,
                          cwd=str(cwd), env=env, timeout=timeout)


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory):
    """One run of the whole fake package with the fake engine (about HANG_TIMEOUT_S seconds)."""
    from cpython_tests_fakes import write_package

    folder = tmp_path_factory.mktemp("fake")
    write_package(folder)
    out = folder / "cell.json"
    done = _python_m("cpython-tests", "--package", "faketests", "--path", str(folder),
                     "--engine", "cpython_tests_fakes:compile", "--modules", ",".join(FAKE_MODULES),
                     "--timeout", str(HANG_TIMEOUT_S), "--jobs", "4", "--json", str(out))
    return done, json.loads(out.read_text()) if out.exists() else None


def test_the_document_is_valid_and_the_exit_code_says_failure(fake_run):
    done, doc = fake_run
    assert doc is not None, done.stderr
    cell.validate(doc)
    assert done.returncode == 1                      # regressed, crashed and timed out below
    assert doc["run_id"] == "cpt-run" and doc["selection"] == "modules" and doc["timeout_s"] == HANG_TIMEOUT_S
    assert sorted(doc["modules"]) == sorted(FAKE_MODULES)
    assert "Traceback" not in done.stderr


def test_every_outcome_is_recorded_and_counted(fake_run):
    row = fake_run[1]["modules"]["test_outcomes"]
    # Base.test_inherited, and Outcomes' own 8 plus its inherited one
    assert row["tests"] == 10 and row["compiled_tests"] == 9          # not the staticmethod
    assert (row["plain_passed"], row["plain_skipped"]) == (4, 1)
    assert row["status"] == "passed" and row["compiled_passed"] == 4 and row["regressions"] == []


def test_a_behaviour_change_is_a_regression_with_its_detail(fake_run):
    row = fake_run[1]["modules"]["test_differs"]
    assert row["status"] == "regressed"
    (regression,) = row["regressions"]
    assert regression["test"] == "faketests.test_differs.Differs.test_regresses"
    assert (regression["plain"], regression["compiled"]) == ("pass", "fail")
    assert "<script>alert('compiled')</script>" in regression["detail"]
    assert [i["test"].rsplit(".", 1)[1] for i in row["improved"]] == ["test_improves"] and row["improvements"] == 1


def test_a_crash_names_the_running_test(fake_run):
    row = fake_run[1]["modules"]["test_abort"]
    assert row["status"] == "crashed" and row["stopped"] == "faketests.test_abort.Abort.test_b_aborts"
    assert "SIGABRT" in row["reason"] and "test_b_aborts" in row["reason"]
    assert row["compiled_passed"] == 1 and row["regressions"] == []   # test_c never ran compiled


def test_a_hang_is_killed_at_the_timeout(fake_run):
    row = fake_run[1]["modules"]["test_hang"]
    assert row["status"] == "timed_out" and row["stopped"] == "faketests.test_hang.Hang.test_hangs"
    assert HANG_TIMEOUT_S <= row["compiled_duration_s"] < HANG_TIMEOUT_S + 8
    assert "in test_hangs" in row["reason"]             # where it hung: the stack faulthandler dumped


def test_modules_that_do_not_import_are_skipped_with_the_reason(fake_run):
    rows = fake_run[1]["modules"]
    assert rows["test_no_import"]["status"] == "skipped" and "_no_such_module" in rows["test_no_import"]["reason"]
    assert rows["test_skips_at_import"]["status"] == "skipped"
    assert "needs a resource" in rows["test_skips_at_import"]["reason"]


def test_old_modules_run_through_their_test_main(fake_run):
    row = fake_run[1]["modules"]["test_old_style"]
    assert row["status"] == "passed" and row["tests"] == 1 and row["compiled_tests"] == 1


def test_the_text_summary_has_a_line_per_problem_and_the_totals(fake_run):
    out = fake_run[0].stdout
    assert "test_differs: regressed, 1 of 4 tests: Differs.test_regresses" in out
    assert "test_abort: crashed: the compiled run crashed (killed by signal SIGABRT)" in out
    assert "test_hang: timed_out" in out and "test_outcomes" not in out
    assert "7 modules (passed 2, regressed 1, crashed 1, timed out 1, skipped 2)" in out
    assert "slowest module: test_hang" in out


def test_the_report_shows_the_section_escaped_and_fails(fake_run, tmp_path):
    pytest.importorskip("pandas", reason="the report needs pandas")
    pytest.importorskip("jinja2", reason="the report needs jinja2")
    path = tmp_path / "3.x-cpython-tests.json"
    path.write_text(json.dumps(fake_run[1]))
    broken = tmp_path / "broken-cpython-tests.json"
    broken.write_text(json.dumps(dict(fake_run[1], totals={})))
    done = _python_m("report", str(path), str(broken), "--out", str(tmp_path / "rep"))
    assert done.returncode == 1 and "cpython-tests failing: " in done.stdout
    page = (tmp_path / "rep" / "index.html").read_text()
    assert "CPython&#39;s Lib/test under the compiler" in page or "CPython's Lib/test under the compiler" in page
    assert "faketests.test_differs.Differs.test_regresses" in page
    assert "&lt;script&gt;alert(" in page and "<script>alert(" not in page
    assert "faketests.test_abort.Abort.test_b_aborts" in page and "timed_out" in page
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert summary["cpython_tests_failed"] and not summary["ok"]
    (entry,) = summary["cpython_tests"]
    assert entry["totals"]["regressions"] == 1 and sorted(entry["failing"]) == ["test_abort", "test_differs", "test_hang"]
    assert any("broken-cpython-tests.json" in r["file"] and "totals.modules" in r["problem"]
               for r in summary["rejected_files"])


def test_an_unknown_module_is_a_one_line_usage_error(tmp_path):
    out = tmp_path / "cell.json"
    done = _python_m("cpython-tests", "--modules", "test_bool,test_no_such_thing_anywhere", "--json", str(out))
    assert done.returncode == 2 and not out.exists()
    assert done.stderr.strip().count("\n") == 0 and "test_no_such_thing_anywhere" in done.stderr
    assert "Traceback" not in done.stderr
    done = _python_m("cpython-tests", "--backend", "typo", "--modules", "test_bool")
    assert done.returncode == 2 and "unknown backend 'typo'" in done.stderr
    done = _python_m("cpython-tests", "--modules", "test_bool", "--all")
    assert done.returncode == 2 and "not allowed with" in done.stderr
    done = _python_m("cpython-tests", "--modules", "test_bool", "--json", str(tmp_path))
    assert done.returncode == 2 and "cannot write --json" in done.stderr


def test_without_numpy_the_command_parses_and_refuses_in_one_line():
    block_numpy = ("import runpy, sys; sys.modules['numpy'] = None; sys.argv = ['matrix'] + sys.argv[1:]; "
                   "runpy.run_module('matrix', run_name='__main__')")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for args, code in ((["--help"], 0), (["--modules", "test_bool"], 2)):
        done = subprocess.run([sys.executable, "-c", block_numpy, "cpython-tests", *args], capture_output=True,
                              text=True, cwd=str(ROOT), env=env, timeout=60)
        assert done.returncode == code, done.stderr
        assert "Traceback" not in done.stderr
    assert "numpy" in done.stderr and done.stderr.strip().count("\n") == 0


def test_a_module_missing_only_here_is_a_skipped_row(tmp_path):
    here = set(modules.discover())
    name = sorted({n for names in modules.known_names().values() for n in names} - here)[0]
    out = tmp_path / "cell.json"
    done = _python_m("cpython-tests", "--modules", name, "--json", str(out))
    assert done.returncode == 0, done.stderr
    row = json.loads(out.read_text())["modules"][name]
    assert row["status"] == "skipped" and "present on 3." in row["reason"]


# Fast Lib/test modules present on every version 3.8 - 3.15 (about a second per run each).
QUICK_MODULES = ["test_bool", "test_augassign", "test_contains", "test_opcodes", "test_unpack_ex",
                 "test_keywordonlyarg", "test_raise", "test_scope"]


def test_a_quick_subset_of_cpythons_own_tests_runs_plain_and_compiled(tmp_path):
    """CI's check, on every interpreter, that the suite works with the real compiler and that
    these modules behave exactly as plain when every test method is compiled."""
    out = tmp_path / "cell.json"
    done = _python_m("cpython-tests", "--modules", ",".join(QUICK_MODULES), "--jobs", "2",
                     "--timeout", "100", "--json", str(out), timeout=240)
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(out.read_text())
    cell.validate(doc)
    assert sorted(doc["modules"]) == sorted(QUICK_MODULES)
    for name, row in doc["modules"].items():
        assert row["status"] in ("passed", "regressed", "changed"), (name, row["reason"])
        assert row["tests"] > 0 and row["plain_passed"] > 0, name
        assert row["compiled_tests"] > 0 and row["compiled_passed"] > 0, name
        assert row["plain_duration_s"] > 0 and row["compiled_duration_s"] > 0, name
    assert doc["totals"]["crashed"] == doc["totals"]["timed_out"] == 0
    regressions = [(name, r["test"], r["detail"]) for name, row in doc["modules"].items() for r in row["regressions"]]
    assert regressions == [] and doc["totals"]["regressions"] == 0 and done.returncode == 0, regressions
    assert doc["totals"]["tests"] >= 100
