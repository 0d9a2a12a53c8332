"""The cpython-tests suite, in process: the cell document, name validation, the comparison,
compiling test methods, and the report's section."""
from __future__ import annotations

import copy
import gc
import inspect
import json
import unittest

import pytest

from matrix.cpython_tests import cell, child, modules, runner

# --------------------------------------------------------------------------- the document

ENVIRONMENT = {"python_version": "3.11.7", "python_implementation": "CPython", "numpy": "2.0",
               "triton": None, "platform": "Linux", "git_commit": "abc"}


def _row(**fields):
    base = dict(tests=3, compiled_tests=3, plain_passed=3, compiled_passed=2, plain_duration_s=1.0,
                compiled_duration_s=2.5, regressions=[{"test": "test.test_x.T.test_a", "plain": "pass",
                                                       "compiled": "fail", "detail": "AssertionError"}])
    base.update(fields)
    return cell.row(fields.pop("status", "regressed"), "1 of 3 tests regressed",
                    **{k: v for k, v in base.items() if k != "status"})


def _doc(**rows):
    rows = rows or {"test_x": _row(), "test_y": cell.row("skipped", "not here")}
    return cell.build(rows, run_id="run-1", timestamp="2026-01-01T00:00:00+00:00", machine="box",
                      python="3.11", backend="eager", cell_status="ok", environment=dict(ENVIRONMENT),
                      duration_s=3.5, timeout_s=120.0, selection="modules")


def test_a_built_document_is_valid_and_its_totals_add_up():
    doc = _doc()
    cell.validate(doc)
    totals = doc["totals"]
    assert (totals["modules"], totals["tests"], totals["regressions"], totals["regressed"], totals["skipped"]) == \
        (2, 3, 1, 1, 1)
    assert totals["slowest"] == {"module": "test_x", "compiled_duration_s": 2.5, "plain_duration_s": 1.0}
    assert cell.failing(doc) == ["test_x"]
    assert json.loads(cell.dumps(doc)) == doc


def _drop(path):
    def change(doc):
        *parents, last = path
        target = doc
        for key in parents:
            target = target[key]
        del target[last]
    return change


def _set(path, value):
    def change(doc):
        *parents, last = path
        target = doc
        for key in parents:
            target = target[key]
        target[last] = value
    return change


@pytest.mark.parametrize("change, named", [
    (_drop(["run_id"]), "missing field run_id"),
    (_set(["schema_version"], 2), "field schema_version"),
    (_set(["kind"], "tracematrix-cell"), "field kind"),
    (_set(["timeout_s"], "120"), "field timeout_s should be int or float"),
    (_set(["duration_s"], True), "field duration_s"),
    (_set(["selection"], "some"), "field selection"),
    (_drop(["environment", "numpy"]), "missing field environment.numpy"),
    (_set(["modules", "test_x"], []), "field modules.test_x should be an object"),
    (_set(["modules", "test_x", "status"], "fine"), "field modules.test_x.status"),
    (_set(["modules", "test_x", "tests"], -1), "field modules.test_x.tests"),
    (_set(["modules", "test_x", "tests"], 1.5), "field modules.test_x.tests should be int"),
    (_drop(["modules", "test_x", "stopped"]), "missing field modules.test_x.stopped"),
    (_set(["modules", "test_x", "compiler"], []), "field modules.test_x.compiler"),
    (_drop(["modules", "test_x", "regressions", 0, "detail"]), "missing field modules.test_x.regressions[0].detail"),
    (_set(["modules", "test_x", "regressions", 0, "compiled"], "boom"), "field modules.test_x.regressions[0].compiled"),
    (_set(["modules", "test_x", "improved"], [{"test": 1}]), "field modules.test_x.improved[0].test"),
    (_set(["totals"], {}), "missing field totals.modules"),
    (_set(["totals", "tests"], 4), "field totals.tests is 4, but the modules add up to 3"),
    (_set(["totals", "regressions"], 0), "field totals.regressions"),
])
def test_each_invalid_field_is_named(change, named):
    doc = copy.deepcopy(_doc())
    change(doc)
    with pytest.raises(cell.CellError) as err:
        cell.validate(doc)
    assert named in str(err.value)


def test_not_an_object_is_rejected():
    with pytest.raises(cell.CellError, match="expected a JSON object"):
        cell.validate([])


def test_the_services_minimal_row_is_accepted():
    """The results service's test posts a row without the optional `improved` list."""
    row = _row()
    del row["improved"]
    doc = _doc(test_list=row)
    cell.validate(doc)
    assert cell.MODULE_STATUSES[0] == "passed" and cell.file_name("3.11") == "3.11-cpython-tests.json"


# --------------------------------------------------------------------------- names

def test_the_default_list_is_large_and_known_somewhere():
    known = {n for names in modules.known_names().values() for n in names}
    assert len(modules.DEFAULT_MODULES) >= 80
    assert set(modules.DEFAULT_MODULES) <= known
    assert set(modules.known_names()) == set(modules.SUPPORTED_VERSIONS)


def test_a_name_on_no_supported_version_is_a_one_line_error():
    with pytest.raises(modules.UnknownModule) as err:
        modules.resolve(["test_list", "test_lsit"])
    message = str(err.value)
    assert "test_lsit" in message and "\n" not in message and "(did you mean test_" in message
    with pytest.raises(modules.UnknownModule, match="bad test module name"):
        modules.resolve(["../etc/passwd"])


def _missing_here():
    here = set(modules.discover())
    elsewhere = sorted({n for names in modules.known_names().values() for n in names} - here)
    assert elsewhere, "every version has a module some other lacks (test_unicode / test_str)"
    return elsewhere[0]


def test_a_name_missing_only_on_this_version_is_skipped_with_the_reason():
    name = _missing_here()
    run, skipped = modules.resolve(["test_bool", name])
    assert run == ["test_bool"]
    assert "present on 3." in skipped[name] and "not in this interpreter's Lib/test" in skipped[name]


def test_packages_and_dotted_names_resolve():
    run, skipped = modules.resolve(["test_json", "test_json.test_decode", "test_json.test_no_such_part"])
    assert run == ["test_json", "test_json.test_decode"] and list(skipped) == ["test_json.test_no_such_part"]
    everything, nothing = modules.resolve(None, run_all=True)
    assert "test_json" in everything and "test_bool" in everything and len(everything) > 300 and not nothing


def test_the_names_file_matches_this_interpreter():
    """module_names.json is generated from the interpreters; this one's list must match it."""
    from matrix import environment
    assert modules.known_names()[environment.python_key()] == modules.discover()


# --------------------------------------------------------------------------- the comparison

def _run(mode, outcomes, complete=True, **fields):
    run = runner.Run(mode, outcomes={t: (o, d) for t, o, d in outcomes}, complete=complete, **fields)
    return run


PLAIN = _run("plain", [("a", "pass", None), ("b", "skip", "no network"), ("c", "fail", "boom"),
                       ("d", "expected_failure", "x"), ("e", "error", "E")], duration_s=1.0)


def test_same_outcomes_pass():
    row = runner.judge(PLAIN, _run("compiled", [(t, o, d) for t, (o, d) in PLAIN.outcomes.items()],
                                   compiled_tests=5))
    assert row["status"] == "passed" and row["regressions"] == [] and row["compiled_tests"] == 5
    assert (row["tests"], row["plain_passed"], row["plain_skipped"]) == (5, 1, 1)


def test_regressions_and_improvements_are_told_apart():
    compiled = _run("compiled", [("a", "fail", "AssertionError: 1 != 2"), ("b", "pass", None),
                                 ("c", "pass", None), ("d", "unexpected_success", None), ("e", "fail", "F")])
    row = runner.judge(PLAIN, compiled)
    assert row["status"] == "regressed"
    assert [(r["test"], r["plain"], r["compiled"]) for r in row["regressions"]] == \
        [("a", "pass", "fail"), ("b", "skip", "pass"), ("d", "expected_failure", "unexpected_success")]
    assert row["regressions"][0]["detail"].startswith("compiled fail: AssertionError: 1 != 2")
    assert "plain skip: no network" in row["regressions"][1]["detail"]
    assert [r["test"] for r in row["improved"]] == ["c"] and row["improvements"] == 1


def test_only_improvements_is_a_change_not_a_regression():
    compiled = _run("compiled", [("a", "pass", None), ("b", "skip", "no network"), ("c", "pass", None),
                                 ("d", "expected_failure", "x"), ("e", "error", "E")])
    row = runner.judge(PLAIN, compiled)
    assert row["status"] == "changed" and row["status"] not in cell.FAILING_STATUSES


def test_a_test_missing_from_a_finished_compiled_run_is_a_regression():
    row = runner.judge(PLAIN, _run("compiled", [("b", "skip", "no network"), ("c", "fail", "boom"),
                                                ("d", "expected_failure", "x"), ("e", "error", "E")]))
    assert [(r["test"], r["compiled"]) for r in row["regressions"]] == [("a", "missing")]


def test_a_crashed_compiled_run_names_the_running_test_and_compares_what_ran():
    compiled = _run("compiled", [("a", "fail", "F")], complete=False, stopped="b",
                    ending="killed by signal SIGSEGV", log_tail="Fatal Python error: Segmentation fault")
    row = runner.judge(PLAIN, compiled)
    assert row["status"] == "crashed" and row["stopped"] == "b"
    assert "SIGSEGV" in row["reason"] and "while running b" in row["reason"] and "Segmentation" in row["reason"]
    assert [r["test"] for r in row["regressions"]] == ["a"]


def test_plain_problems_rule_the_module_out_before_compiling():
    assert runner.judge(_run("plain", [], skipped="import failed: no _testcapi"), None)["status"] == "skipped"
    assert runner.judge(_run("plain", [], error="import raised"), None)["status"] == "error"
    row = runner.judge(_run("plain", [("a", "pass", None)], complete=False, timed_out=True, stopped="b",
                            ending="no result after 5 s, killed"), None)
    assert row["status"] == "timed_out" and "the plain run timed out" in row["reason"]


def test_an_error_only_the_compiled_run_has_counts_as_a_crash():
    compiled = _run("compiled", [("a", "fail", "F")], error="running test.test_x raised outside any test: TypeError")
    row = runner.judge(_run("plain", [("a", "pass", None), ("b", "pass", None)]), compiled)
    assert row["status"] == "crashed" and "raised outside any test" in row["reason"]
    assert [r["test"] for r in row["regressions"]] == ["a"]     # b was never reached: not 'missing'


def test_events_files_survive_a_torn_last_line(tmp_path):
    events = tmp_path / "e.jsonl"
    events.write_text('{"start": "t1"}\n{"test": "t1", "outcome": "pass", "detail": null}\n'
                      '{"compiled": 2, "compile_errors": 0}\n{"start": "t2"}\n{"test": "t2", "outc')
    run = runner.Run("compiled")
    runner.read_events(events, run)
    assert run.outcomes == {"t1": ("pass", None)} and run.stopped == "t2" and run.compiled_tests == 2
    assert not run.complete


def test_lone_surrogates_in_messages_become_writable_text(tmp_path):
    events = tmp_path / "e.jsonl"
    events.write_text(json.dumps({"test": "t\udc80", "outcome": "fail", "detail": "bad \ud800 text"}) + "\n"
                      + json.dumps({"done": True}) + "\n")
    run = runner.Run("plain")
    runner.read_events(events, run)
    ((test, (outcome, detail)),) = run.outcomes.items()
    assert (test, outcome, detail) == ("t\\udc80", "fail", "bad \\ud800 text")
    (tmp_path / "out.txt").write_text(test + detail, encoding="utf-8")


# --------------------------------------------------------------------------- compiling test methods

def _classes():
    """Fresh TestCase classes (made in a function, so pytest does not collect them)."""
    class Base(unittest.TestCase):
        def test_inherited(self):
            pass

    class Case(Base):
        @unittest.skip("kept")
        def test_skipped(self):
            pass

        @unittest.expectedFailure
        def test_xfail(self):
            self.fail("expected")

        test_static = staticmethod(lambda: None)

    return Base, Case


def _fake_compile(function, backend="eager"):
    def compiled(*args, **kwargs):
        return function(*args, **kwargs)
    compiled.__dict__.update(function.__dict__)
    compiled.compiled_from = function
    return compiled


def test_test_methods_are_compiled_per_instance_and_classes_stay_as_they_were(monkeypatch):
    monkeypatch.setattr(child, "load_engine", lambda spec: _fake_compile)
    _Base, _Case = _classes()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(_Case)
    before = {name: inspect.getattr_static(_Case, name) for name in ("test_inherited", "test_skipped")}
    compiler = child.Compiler("eager")
    assert compiler.apply(suite) == (3, 0)            # the staticmethod stays plain, uncounted
    cases = {case._testMethodName: case for case in child.iter_cases(suite)}
    assert cases["test_inherited"].__dict__["test_inherited"].__func__.compiled_from is _Base.test_inherited
    assert "test_static" not in cases["test_static"].__dict__
    assert {name: inspect.getattr_static(_Case, name) for name in before} == before
    assert "test_inherited" not in _Base.__dict__["test_inherited"].__dict__
    result = unittest.TestResult()
    suite.run(result)
    assert (len(result.skipped), len(result.expectedFailures), result.wasSuccessful()) == (1, 1, True)


def test_a_case_made_after_an_earlier_one_died_is_compiled_too(monkeypatch):
    """unittest drops each case once it has run, so a later suite's case may get the id() of
    one already handled: it is still compiled (found by identity, not by id)."""
    monkeypatch.setattr(child, "load_engine", lambda spec: _fake_compile)
    base = _classes()[0]
    compiler = child.Compiler("eager")
    ids = set()
    for _ in range(20):   # CPython's allocator hands a freed case's memory to the next one
        suite = unittest.TestSuite([base("test_inherited")])
        ids.add(id(next(child.iter_cases(suite))))
        assert compiler.apply(suite) == (1, 0)
        del suite
        gc.collect()      # (the compiled method bound to its case is a cycle)
    assert compiler.compiled == 20 and len(ids) < 20   # (the ids did repeat)


def test_the_real_compiler_keeps_unittests_markers():
    """compiler.compile copies the function's attributes (functools.update_wrapper)."""
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(_classes()[1])
    compiler = child.Compiler("eager")
    assert compiler.apply(suite)[0] == 3
    skipped = next(c for c in child.iter_cases(suite) if c._testMethodName == "test_skipped")
    assert skipped.__dict__["test_skipped"].__unittest_skip__ is True
    result = unittest.TestResult()
    suite.run(result)
    assert (len(result.skipped), len(result.expectedFailures)) == (1, 1)


def test_a_compile_error_becomes_the_tests_outcome(monkeypatch):
    def refuses(function, backend="eager"):
        raise TypeError("cannot compile this")
    monkeypatch.setattr(child, "load_engine", lambda spec: refuses)
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(_classes()[0])
    compiler = child.Compiler("eager")
    assert compiler.apply(suite) == (1, 1)
    result = unittest.TestResult()
    suite.run(result)
    assert len(result.errors) == 1 and "cannot compile this" in result.errors[0][1]


def test_an_unformattable_exception_is_described_not_raised():
    class Bad(Exception):
        def __str__(self):
            raise TypeError("unhashable type: 'list'")
    try:
        raise Bad()
    except Bad:
        import sys
        text = child.describe(sys.exc_info())
    assert "Bad" in text


def test_frames_are_named_even_when_linecache_fails(monkeypatch):
    import sys
    import traceback
    import types

    class BrokenStackSummary:
        @staticmethod
        def extract(*args, **kwargs):
            raise TypeError("unhashable type: 'list'")
    try:
        raise ValueError("inner")
    except ValueError:
        err = sys.exc_info()
    # the child's view of the traceback module only (pytest's own must keep working)
    fake = types.SimpleNamespace(format_exception_only=traceback.format_exception_only,
                                 walk_tb=traceback.walk_tb, format_list=traceback.format_list,
                                 StackSummary=BrokenStackSummary)
    monkeypatch.setattr(child, "traceback", fake)
    text = child.describe(err)
    assert text.startswith("ValueError: inner") and "source lines left out: TypeError" in text
    assert "in test_frames_are_named_even_when_linecache_fails" in text
