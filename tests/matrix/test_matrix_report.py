"""The report: merging, red against baselines, amber against the reference, suspicious
differences, escaping, bad input files."""
from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("pandas", reason="the report needs pandas (the 'report' extra)")
pytest.importorskip("jinja2", reason="the report needs jinja2 (the 'report' extra)")

from matrix import baselines  # noqa: E402
from matrix.__main__ import main  # noqa: E402
from matrix.report import build_report, case_slug  # noqa: E402
from matrix_fakes import TEST1_310, TEST1_311, make_case, make_cell, write_cells  # noqa: E402


def _files(tmp_path, *cells):
    return write_cells(tmp_path / "results", *cells)


def _report(tmp_path, *cells, **kw):
    out = tmp_path / "report"
    summary = build_report(_files(tmp_path, *cells), out, baseline_dir=tmp_path / "baselines", **kw)
    return summary, out


def _cell_summary(summary, column):
    return next(c for c in summary["cells"] if c["column"] == column)


def _td(html, case, column_index):
    row = re.search(r'<tr data-case="%s".*?</tr>' % re.escape(case), html, re.S).group(0)
    return re.findall(r"<td.*?</td>", row, re.S)[column_index]


def test_cells_from_different_machines_merge_into_separate_columns(tmp_path):
    a = make_cell("3.11", cases={"t": make_case(TEST1_311)}, machine="ci-linux", run_id="r1")
    b = make_cell("3.11", cases={"t": make_case(TEST1_311)}, machine="gpu-box", run_id="r2")
    c = make_cell("3.10", cases={"t": make_case(TEST1_310)}, machine="ci-linux", run_id="r1")
    summary, out = _report(tmp_path, a, b, c)
    columns = [cell["column"] for cell in summary["cells"]]
    assert columns == ["3.10 eager", "3.11 eager @ci-linux", "3.11 eager @gpu-box"]
    html = (out / "index.html").read_text()
    assert "gpu-box" in html and "ci-linux" in html
    assert (out / "cases" / "t.html").exists()


def test_amber_difference_from_the_reference_names_the_opcodes(tmp_path):
    summary, out = _report(tmp_path, make_cell("3.10", cases={"t": make_case(TEST1_310)}),
                           make_cell("3.11", cases={"t": make_case(TEST1_311)}))
    (diff,) = _cell_summary(summary, "3.10 eager")["differences_from_reference"]
    assert (diff["metric"], diff["reference"], diff["now"]) == ("ir_count", 11, 10)
    assert diff["explanation"] == "+1 BINARY_ADD, +1 BINARY_MULTIPLY, -2 BINARY_OP, -1 RESUME"
    assert diff["suspicious"] is False
    assert summary["suspicious"] == [] and summary["ok"]
    cell = _td((out / "index.html").read_text(), "t", 0)
    assert "amber" in cell and "-1 RESUME" in cell and ">10" in cell
    page = (out / "cases" / "t.html").read_text()
    assert "3.10 eager → 3.11 eager: ir_count 10 → 11" in page and "+1 RESUME" in page


def test_planted_regression_in_a_baseline_shows_red_with_its_explanation(tmp_path):
    cell = make_cell("3.11", cases={"t": make_case(TEST1_311), "u": make_case(TEST1_311)})
    baselines.accept(cell, tmp_path / "baselines")
    path = tmp_path / "baselines" / "3.11-eager.json"
    doc = json.loads(path.read_text())
    doc["cases"]["t"]["metrics"]["ir_count"] = 10           # as if 3.11 used to count 10
    doc["cases"]["t"]["ir_opcodes"].pop("RESUME")
    path.write_text(json.dumps(doc))
    summary, out = _report(tmp_path, cell)
    assert not summary["ok"] and summary["regressed_cells"] == ["3.11 eager"]
    (change,) = _cell_summary(summary, "3.11 eager")["regressions"]
    assert (change["case"], change["metric"], change["baseline"], change["now"]) == ("t", "ir_count", 10, 11)
    assert change["explanation"] == "+1 RESUME"
    html = (out / "index.html").read_text()
    assert "red" in _td(html, "t", 0).split(">")[0]
    assert "red" not in _td(html, "u", 0).split(">")[0]
    assert "ir_count 10 → 11 — +1 RESUME" in html


def test_planted_cross_version_graph_difference_is_suspicious(tmp_path):
    other = make_case(TEST1_310, graph_text="graph\n  add = numpy.add(x, x)\n  extra = numpy.negative(add)")
    summary, out = _report(tmp_path, make_cell("3.10", cases={"t": other}),
                           make_cell("3.11", cases={"t": make_case(TEST1_311)}))
    (flag,) = summary["suspicious"]
    assert (flag["case"], flag["column"], flag["metric"]) == ("t", "3.10 eager", "graph_hash")
    page = (out / "cases" / "t.html").read_text()
    assert "extra = numpy.negative(add)" in page and 'class="d-insert"' in page
    assert "suspicious" in _td((out / "index.html").read_text(), "t", 0)


def test_count_difference_no_opcode_accounts_for_is_suspicious(tmp_path):
    odd = make_case(TEST1_311, ir_count=12)   # opcodes identical, count one higher
    summary, _ = _report(tmp_path, make_cell("3.12", cases={"t": odd}),
                         make_cell("3.11", cases={"t": make_case(TEST1_311)}))
    assert [(s["column"], s["metric"]) for s in summary["suspicious"]] == [("3.12 eager", "ir_count")]


def test_failed_case_fails_the_report(tmp_path):
    summary, out = _report(tmp_path, make_cell("3.11", cases={"t": make_case(TEST1_311, status="mismatch")}))
    assert not summary["ok"] and summary["failed_cells"] == ["3.11 eager"]
    assert "fail" in _td((out / "index.html").read_text(), "t", 0).split(">")[0]


def test_missing_interpreters_are_cells(tmp_path):
    summary, out = _report(tmp_path, make_cell("3.11", "eager", cases={"t": make_case(TEST1_311)}),
                           make_cell("3.11", "numpy", cases={"t": make_case(TEST1_311)}),
                           missing_pythons=["3.13", "3.11"])
    missing = [c["column"] for c in summary["cells"] if c["cell_status"] == "missing"]
    assert missing == ["3.13 eager", "3.13 numpy"]
    assert summary["ok"]
    assert ">missing<" in (out / "index.html").read_text()


def test_html_in_names_and_graphs_is_escaped(tmp_path):
    name = '<script>alert("x")</script>'
    hostile = make_case(TEST1_311, graph_text="graph <img src=x onerror=alert(1)>")
    summary, out = _report(tmp_path, make_cell("3.11", cases={name: hostile}))
    html = (out / "index.html").read_text()
    page = (out / "cases" / f"{case_slug(name)}.html").read_text()
    for text in (html, page):
        assert "<script>alert" not in text and "&lt;script&gt;alert" in text
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "/" not in case_slug(name) and "<" not in case_slug(name)


def test_bad_files_are_rejected_by_name_and_the_rest_renders(tmp_path, capsys):
    good = _files(tmp_path, make_cell("3.11", cases={"t": make_case(TEST1_311)}))[0]
    not_json = tmp_path / "broken.json"
    not_json.write_text("{")
    old = json.loads(good.read_text())
    old["schema_version"] = 0
    old_version = tmp_path / "old.json"
    old_version.write_text(json.dumps(old))
    lacking = json.loads(good.read_text())
    del lacking["cases"]["t"]["graph_hash"]
    lacks = tmp_path / "lacks.json"
    lacks.write_text(json.dumps(lacking))
    out = tmp_path / "report"
    code = main(["report", str(not_json), str(good), str(old_version), str(lacks), "--out", str(out),
                 "--baselines", str(tmp_path / "baselines")])
    assert code != 0
    err = capsys.readouterr().err
    assert f"{not_json}: not valid JSON" in err
    assert f"{old_version}: schema_version is 0" in err
    assert f"{lacks}: missing field cases.t.graph_hash" in err
    summary = json.loads((out / "summary.json").read_text())
    assert [r["file"] for r in summary["rejected_files"]] == [str(not_json), str(old_version), str(lacks)]
    assert [c["column"] for c in summary["cells"]] == ["3.11 eager"]
    assert "broken.json" in (out / "index.html").read_text()


def test_run_id_filter_skips_stale_cells(tmp_path):
    summary, _ = _report(tmp_path, make_cell("3.11", cases={"t": make_case(TEST1_311)}, run_id="now"),
                         make_cell("3.10", cases={"t": make_case(TEST1_310)}, run_id="yesterday"),
                         run_id="now")
    assert [c["column"] for c in summary["cells"]] == ["3.11 eager"]
    assert any("from run yesterday" in p for p in summary["problems"])


def test_coverage_page_lists_the_gaps(tmp_path):
    cov = {"python": "3.13.0", "table": "py313", "handled": ["LOAD_FAST"], "pending": ["TO_BOOL"],
           "missing": ["CALL_KW"], "unsupported": {"SEND": "generators"}, "counts": {"handled": 1}}
    _, out = _report(tmp_path, make_cell("3.13", cases={"t": make_case(TEST1_311)}, coverage=cov),
                     missing_pythons=["3.8"])
    page = (out / "coverage.html").read_text()
    assert "CALL_KW" in page and "TO_BOOL" in page and "py313" in page
    assert "interpreter not found" in page


def test_a_frame_that_ran_natively_differs_by_status_only(tmp_path):
    native = make_case({}, status="unsupported", graph_count=0, graph_node_count=0, ir_count=0)
    summary, _ = _report(tmp_path, make_cell("3.8", cases={"t": native}),
                         make_cell("3.11", cases={"t": make_case(TEST1_311)}))
    (diff,) = _cell_summary(summary, "3.8 eager")["differences_from_reference"]
    assert (diff["metric"], diff["reference"], diff["now"]) == ("status", "pass", "unsupported")
    assert summary["suspicious"] == [] and summary["ok"]


def test_a_recompile_count_other_than_the_call_sequence_demands_is_amber(tmp_path):
    case = make_case(TEST1_311, recompile_count=2)
    case["expected_recompiles"] = 1
    summary, out = _report(tmp_path, make_cell("3.11", cases={"t": case, "u": make_case(TEST1_311)}))
    (note,) = _cell_summary(summary, "3.11 eager")["unexpected_recompiles"]
    assert note["case"] == "t" and "recompiled 2 time(s); the call sequence expects 1" in note["explanation"]
    html = (out / "index.html").read_text()
    assert "amber" in _td(html, "t", 0).split(">")[0]
    assert "amber" not in _td(html, "u", 0).split(">")[0]


def test_a_graph_that_moved_against_its_baseline_is_shown_as_a_diff(tmp_path):
    baselines.accept(make_cell("3.11", cases={"t": make_case(TEST1_311)}), tmp_path / "baselines")
    moved = make_case(TEST1_311, graph_text="graph\n  add = numpy.add(x, x)\n  neg = numpy.negative(add)")
    summary, out = _report(tmp_path, make_cell("3.11", cases={"t": moved}))
    assert [c["metric"] for c in _cell_summary(summary, "3.11 eager")["regressions"]] == ["graph_hash"]
    page = (out / "cases" / "t.html").read_text()
    assert "baseline (left) vs this run (right)" in page
    assert re.search(r'<tr class="d-insert">.*?neg = numpy.negative\(add\)', page, re.S)
