"""The report with two subjects: a Dynamo column beside ours, why the counts differ, how
Dynamo's count moves across CPython and torch versions, the upstream test's table, and
the "subject unavailable" cell."""
from __future__ import annotations

import re

import pytest

pytest.importorskip("pandas", reason="the report needs pandas (the 'report' extra)")
pytest.importorskip("jinja2", reason="the report needs jinja2 (the 'report' extra)")

from matrix import schema  # noqa: E402
from matrix.report import build_report  # noqa: E402
from matrix_fakes import TEST1_310, TEST1_311, make_case, make_cell, write_cells  # noqa: E402

# Dynamo counts inlined callees' segments; shaped like a case where it counts 3 more.
DYNAMO_311 = dict(TEST1_311, LOAD_GLOBAL=1, CALL=1, PRECALL=1)
TABLE = {"metric": "ir_count", "value": 10, "source": "Dynamo's test_ir_count table"}


def _report(tmp_path, *cells):
    out = tmp_path / "report"
    return build_report(write_cells(tmp_path / "results", *cells), out, baseline_dir=tmp_path / "baselines"), out


def _cell(summary, column):
    return next(c for c in summary["cells"] if c["column"] == column)


def _dynamo(python, opcodes, torch="2.13.0+cpu", **kw):
    return make_cell(python, cases={"t": make_case(opcodes, **kw)}, subject="dynamo", torch=torch)


def test_the_dynamo_column_sits_beside_ours_and_says_why_the_counts_differ(tmp_path):
    summary, out = _report(tmp_path, make_cell("3.11", cases={"t": make_case(TEST1_311)}),
                           _dynamo("3.11", DYNAMO_311), make_cell("3.10", cases={"t": make_case(TEST1_310)}))
    assert [c["column"] for c in summary["cells"]] == ["3.10 eager", "3.11 eager", "3.11 dynamo eager"]
    assert [c["subject"] for c in summary["cells"]] == ["tracematrix", "tracematrix", "dynamo"]
    (diff,) = _cell(summary, "3.11 dynamo eager")["differences_from_tracematrix"]
    assert (diff["metric"], diff["ours"], diff["now"]) == ("ir_count", 11, 14)
    assert diff["explanation"] == "+1 CALL, +1 LOAD_GLOBAL, +1 PRECALL" and diff["explained"]
    # Versions are compared within a subject: the Dynamo column is its own lane's reference.
    assert summary["reference_columns"] == {"eager": "3.11 eager", "dynamo eager": "3.11 dynamo eager"}
    assert _cell(summary, "3.11 dynamo eager")["differences_from_reference"] == []
    html = (out / "index.html").read_text()
    assert 'class="subject-tag">Dynamo</span>' in html and "torch 2.13.0+cpu" in html
    row = re.search(r'<tr data-case="t".*?</tr>', html, re.S).group(0)
    dynamo_td = re.findall(r"<td.*?</td>", row, re.S)[2]
    assert "subject-differs" in dynamo_td and "vs ours: +1 CALL, +1 LOAD_GLOBAL, +1 PRECALL" in dynamo_td
    page = (out / "cases" / "t.html").read_text()
    assert "Against this project's compiler" in page and "ours 11, here 14" in page


def test_dynamos_own_polyfill_instructions_are_named_and_left_out_of_the_comparison(tmp_path):
    from matrix.explain import polyfill_opname

    polyfill = {polyfill_opname("FOR_ITER", "enumerate"): 3, polyfill_opname("JUMP_BACKWARD", "enumerate"): 3}
    summary, out = _report(tmp_path, make_cell("3.11", cases={"t": make_case(TEST1_311)}),
                           _dynamo("3.11", dict(TEST1_311, **polyfill)))
    (diff,) = _cell(summary, "3.11 dynamo eager")["differences_from_tracematrix"]
    assert (diff["ours"], diff["now"], diff["polyfill_instructions"]) == (11, 17, 6)
    assert diff["explanation"].startswith("equal to tracematrix (3.11 eager)'s 11 without the 6 "
                                          "instructions of Dynamo's own polyfills")
    assert "FOR_ITER [Dynamo polyfill enumerate]" in diff["explanation"]


def test_the_index_states_the_metric_definitions_and_what_changed(tmp_path):
    from markupsafe import escape as html_escape  # jinja2's (the report extra)

    _, out = _report(tmp_path, make_cell("3.11", cases={"t": make_case(TEST1_311)}))
    html = (out / "index.html").read_text()
    section = html[html.index('id="metric-definitions"'):html.index("<h2>Cells</h2>")]
    assert f"<code>ir_count</code> v{schema.METRIC_VERSIONS['ir_count']}" in section
    for (metric, version), text in schema.METRIC_CHANGES.items():
        assert f"<code>{metric}</code> v{version}:" in section and str(html_escape(text)) in section


def test_dynamo_moving_across_cpython_and_torch_versions_names_the_opcodes(tmp_path):
    summary, out = _report(tmp_path, _dynamo("3.10", TEST1_310), _dynamo("3.11", TEST1_311),
                           _dynamo("3.11", dict(TEST1_311, NOP=1), torch="2.14.0.dev20261120+cpu"))
    columns = [c["column"] for c in summary["cells"]]
    assert columns == ["3.10 dynamo eager", "3.11 dynamo eager torch 2.13.0+cpu",
                       "3.11 dynamo eager torch 2.14.0.dev20261120+cpu"]
    page = (out / "cases" / "t.html").read_text()
    assert ("3.10 dynamo eager → 3.11 dynamo eager torch 2.13.0+cpu: ir_count 10 → 11 "
            "(+2 BINARY_OP, +1 RESUME, -1 BINARY_ADD, -1 BINARY_MULTIPLY)") in page
    assert ("3.11 dynamo eager torch 2.13.0+cpu → 3.11 dynamo eager torch 2.14.0.dev20261120+cpu: "
            "ir_count 11 → 12 (+1 NOP)") in page


def test_the_upstream_tables_row_is_flagged_without_failing_the_run(tmp_path):
    case = make_case(TEST1_311)
    case["upstream_expected"] = TABLE
    dynamo_case = make_case(TEST1_311)
    dynamo_case["upstream_expected"] = TABLE
    summary, out = _report(tmp_path, make_cell("3.11", cases={"t": case}),
                           make_cell("3.11", cases={"t": dynamo_case}, subject="dynamo", torch="2.13.0"))
    flags = summary["upstream_table_mismatches"]
    assert [(f["column"], f["case"], f["expected"], f["now"]) for f in flags] == [
        ("3.11 eager", "t", 10, 11), ("3.11 dynamo eager", "t", 10, 11)]
    assert summary["ok"]
    html = (out / "index.html").read_text()
    assert "≠ test table: 10" in html and "Dynamo&#39;s test_ir_count table expects 10 on Python 3.11" in html


def test_a_matching_table_row_is_not_flagged(tmp_path):
    case = make_case(TEST1_311)
    case["upstream_expected"] = dict(TABLE, value=11)
    summary, _ = _report(tmp_path, make_cell("3.11", cases={"t": case}))
    assert summary["upstream_table_mismatches"] == []


def test_subject_unavailable_is_a_visible_cell_not_a_failure(tmp_path):
    unavailable = make_cell("3.8", subject="dynamo",
                            cell_status=schema.CELL_SUBJECT_UNAVAILABLE_PREFIX + "torch is not importable here")
    summary, out = _report(tmp_path, make_cell("3.8", cases={"t": make_case(TEST1_310)}), unavailable)
    assert summary["ok"] and summary["failed_cells"] == []
    row = re.search(r'<tr data-case="t".*?</tr>', (out / "index.html").read_text(), re.S).group(0)
    td = re.findall(r"<td.*?</td>", row, re.S)[1]
    assert "subject unavailable" in td and "torch is not importable here" in td


def test_dynamos_failing_cases_are_shown_but_gate_only_through_its_baseline(tmp_path):
    failing = _dynamo("3.11", TEST1_311, status="mismatch")
    summary, out = _report(tmp_path, make_cell("3.11", cases={"t": make_case(TEST1_311)}), failing)
    assert _cell(summary, "3.11 dynamo eager")["failures"][0]["status"] == "mismatch"
    assert summary["failed_cells"] == [] and summary["ok"]
    ours_failing = make_cell("3.11", cases={"t": make_case(TEST1_311, status="mismatch")})
    summary, _ = _report(tmp_path, ours_failing)
    assert summary["failed_cells"] == ["3.11 eager"]
