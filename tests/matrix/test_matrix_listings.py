"""Case pages show the source and the `dis` listing per interpreter; the report draws
trends from history; a report without pandas says which extra to install."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from matrix_fakes import TEST1_310, TEST1_311, make_case, make_cell

from matrix import schema
from matrix.runner import listings

ROOT = Path(__file__).resolve().parents[2]


def _sample(x):
    y = x + 1
    return y * 2


def test_listings_are_the_source_and_this_interpreters_bytecode():
    found = listings(_sample)
    assert found["source"].startswith("def _sample(x):") and "return y * 2" in found["source"]
    assert "LOAD_FAST" in found["dis"] and "(x)" in found["dis"]
    assert listings(len)["source"] is None          # a builtin has no Python source


def test_the_fields_are_optional_and_typed():
    case = make_case(TEST1_311)
    cell = make_cell("3.11", cases={"test1": case})
    schema.validate_cell(cell)                      # written by this runner: fields present, None
    for key in ("source", "dis"):
        del case[key]
    schema.validate_cell(cell)                      # an older cell without them still reads
    case["dis"] = 3
    with pytest.raises(schema.SchemaError, match="cases.test1.dis"):
        schema.validate_cell(cell)


def _cells(tmp_path):
    paths = []
    for python, ops, listing in (("3.10", TEST1_310, "  2 BINARY_ADD"), ("3.11", TEST1_311, "  2 BINARY_OP <&>")):
        case = make_case(ops)
        case.update(source="def test1(a, b):\n    return a < b", dis=listing)
        path = tmp_path / f"{python}.json"
        schema.write_cell(path, make_cell(python, cases={"test1": case}))
        paths.append(path)
    old = make_case(TEST1_311)
    del old["source"], old["dis"]
    schema.write_cell(tmp_path / "old.json", make_cell("3.12", cases={"other": old}))
    return paths + [tmp_path / "old.json"]


def test_case_pages_show_source_and_dis_per_interpreter(tmp_path):
    pytest.importorskip("pandas", reason="the report needs pandas")
    from matrix.report import build_report

    build_report(_cells(tmp_path), tmp_path / "out", baseline_dir=tmp_path / "none")
    page = (tmp_path / "out" / "cases" / "test1.html").read_text()
    assert "def test1(a, b):\n    return a &lt; b" in page
    assert page.index("dis on Python 3.10") < page.index("dis on Python 3.11")
    assert "BINARY_OP &lt;&amp;&gt;" in page
    assert "Not recorded" in (tmp_path / "out" / "cases" / "other.html").read_text()


def test_the_index_shows_trends_from_a_history_file(tmp_path):
    pytest.importorskip("pandas", reason="the report needs pandas")
    from matrix.report import build_report

    history = tmp_path / "history.json"
    rows = [{"python": "3.11", "backend": "eager", "machine": "m", "run_id": f"night-{d}",
             "timestamp": f"2026-01-0{d}T00:00:00.000000Z", "ir_total": 100.0 + d, "cell_status": "ok"}
            for d in (1, 2, 3)]
    history.write_text(json.dumps({"subject": "tracematrix", "cells": rows}))
    build_report(_cells(tmp_path), tmp_path / "out", baseline_dir=tmp_path / "none", history=str(history))
    index = (tmp_path / "out" / "index.html").read_text()
    assert "Trends" in index and 'aria-label="Python 3.11"' in index and index.count("<circle") == 3
    verdicts = build_report(_cells(tmp_path), tmp_path / "out2", baseline_dir=tmp_path / "none",
                            history=str(tmp_path / "missing.json"))
    assert any("no trends: history file" in p for p in verdicts["problems"])


def test_report_without_pandas_names_the_extra(tmp_path):
    blocker = tmp_path / "blocked" / "pandas"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError(\"No module named 'pandas'\")\n")
    done = subprocess.run([sys.executable, "-m", "matrix", "report", str(tmp_path), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, cwd=str(ROOT), timeout=120,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "blocked"), str(ROOT)])))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "pip install 'tracematrix[report]'" in done.stderr and "pandas" in done.stderr
