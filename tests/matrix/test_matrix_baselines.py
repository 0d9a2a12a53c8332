"""Baselines: accepted on purpose, compared with explanations, absent is not a crash."""
from __future__ import annotations

import json

import pytest

from matrix import baselines, schema
from matrix_fakes import TEST1_311, make_case, make_cell


def test_no_baseline_is_a_state_not_a_crash(tmp_path):
    verdict = baselines.compare_cell(make_cell("3.11", cases={"t": make_case(TEST1_311)}),
                                     baselines.load("3.11", "eager", tmp_path))
    assert verdict["state"] == baselines.NO_BASELINE
    assert "--accept" in verdict["note"]


def test_accept_then_same(tmp_path):
    cell = make_cell("3.11", cases={"t": make_case(TEST1_311)})
    path = baselines.accept(cell, tmp_path)
    assert path.name == "3.11-eager.json"
    assert baselines.compare_cell(cell, baselines.load("3.11", "eager", tmp_path))["state"] == baselines.SAME


def test_moved_ir_count_is_explained_by_opcodes(tmp_path):
    baselines.accept(make_cell("3.11", cases={"t": make_case(TEST1_311)}), tmp_path)
    now = dict(TEST1_311, NOP=1, LOAD_FAST=TEST1_311["LOAD_FAST"] + 1)
    verdict = baselines.compare_cell(make_cell("3.11", cases={"t": make_case(now)}),
                                     baselines.load("3.11", "eager", tmp_path))
    assert verdict["state"] == baselines.MOVED
    (change,) = verdict["changes"]["t"]
    assert (change["metric"], change["baseline"], change["now"]) == ("ir_count", 11, 13)
    assert change["explanation"] == "+1 LOAD_FAST, +1 NOP"


def test_status_and_graph_changes_are_moves(tmp_path):
    baselines.accept(make_cell("3.11", cases={"t": make_case(TEST1_311)}), tmp_path)
    now = make_case(TEST1_311, status="mismatch", graph_text="graph\n  mul = numpy.multiply(x, x)")
    verdict = baselines.compare_cell(make_cell("3.11", cases={"t": now}),
                                     baselines.load("3.11", "eager", tmp_path))
    assert {c["metric"] for c in verdict["changes"]["t"]} == {"status", "graph_hash"}


def test_new_and_removed_cases_and_different_cell_status(tmp_path):
    baselines.accept(make_cell("3.11", cases={"old": make_case(TEST1_311)}), tmp_path)
    base = baselines.load("3.11", "eager", tmp_path)
    verdict = baselines.compare_cell(make_cell("3.11", cases={"new": make_case(TEST1_311)}), base)
    assert verdict["new_cases"] == ["new"] and verdict["removed_cases"] == ["old"]
    gpu = baselines.compare_cell(make_cell("3.11", cases={"old": make_case(TEST1_311)},
                                           cell_status=schema.CELL_NO_GPU), base)
    assert gpu["state"] == baselines.NOT_COMPARABLE


def test_accept_with_a_case_pattern_merges(tmp_path):
    baselines.accept(make_cell("3.11", cases={"a": make_case(TEST1_311), "b": make_case(TEST1_311)}), tmp_path)
    baselines.accept(make_cell("3.11", cases={"b": make_case(dict(TEST1_311, NOP=1))}), tmp_path, merge=True)
    base = baselines.load("3.11", "eager", tmp_path)
    assert set(base["cases"]) == {"a", "b"}
    assert base["cases"]["b"]["metrics"]["ir_count"] == 12


def test_accept_refuses_an_empty_cell(tmp_path):
    with pytest.raises(ValueError, match="no cases"):
        baselines.accept(make_cell("3.11", cell_status=schema.CELL_MISSING), tmp_path)


def test_corrupt_baseline_is_a_named_error(tmp_path):
    (tmp_path / "3.11-eager.json").write_text(json.dumps({"kind": "something else"}))
    with pytest.raises(schema.ResultFileError, match="3.11-eager.json: not a baseline file"):
        baselines.load("3.11", "eager", tmp_path)


def test_subjects_have_their_own_baselines(tmp_path):
    ours = make_cell("3.11", cases={"t": make_case(TEST1_311)})
    dynamo = make_cell("3.11", cases={"t": make_case(dict(TEST1_311, NOP=1))}, subject="dynamo", torch="2.13.0")
    assert baselines.accept(ours, tmp_path).name == "3.11-eager.json"
    assert baselines.accept(dynamo, tmp_path).name == "3.11-dynamo-eager.json"
    mine = baselines.load("3.11", "eager", tmp_path, subject="dynamo")
    assert mine["subject"] == "dynamo" and mine["accepted_from"]["torch"] == "2.13.0"
    assert mine["cases"]["t"]["metrics"]["ir_count"] == 12
    assert baselines.load("3.11", "eager", tmp_path)["cases"]["t"]["metrics"]["ir_count"] == 11
    assert baselines.compare_cell(dynamo, mine)["state"] == baselines.SAME


def test_a_version_1_baseline_is_the_projects_compiler(tmp_path):
    doc = baselines.from_cell(make_cell("3.11", cases={"t": make_case(TEST1_311)}))
    old = {k: v for k, v in doc.items() if k != "subject"}
    (tmp_path / "3.11-eager.json").write_text(json.dumps(dict(old, schema_version=1)))
    loaded = baselines.load("3.11", "eager", tmp_path)
    assert loaded["subject"] == schema.SUBJECT_TRACEMATRIX and loaded["schema_version"] == 2
    assert loaded["cases"] == doc["cases"]


def test_a_baseline_filed_under_the_wrong_subject_is_a_named_error(tmp_path):
    doc = baselines.from_cell(make_cell("3.11", cases={"t": make_case(TEST1_311)}))
    (tmp_path / "3.11-dynamo-eager.json").write_text(json.dumps(doc))
    with pytest.raises(schema.ResultFileError, match="baseline is for subject 'tracematrix', expected 'dynamo'"):
        baselines.load("3.11", "eager", tmp_path, subject="dynamo")


def test_the_committed_baselines_are_the_projects_and_load():
    for path in sorted(baselines.BASELINE_DIR.glob("*.json")):
        doc = json.loads(path.read_text())
        subject = doc["subject"]
        assert path.stem == schema.cell_name(doc["python"], doc["backend"], subject)
        assert baselines.load(doc["python"], doc["backend"], subject=subject)["schema_version"] == 2
