"""The cell document: round trip, validation, bad files named with their problem."""
from __future__ import annotations

import json

import pytest

from matrix import schema
from matrix.runner import run_cell
from matrix_fakes import TEST1_311, make_case, make_cell


def test_round_trip_of_a_real_cell(tmp_path):
    cell = run_cell(backend="eager", suite="matrix_fakes", pattern="synthetic/*",
                    engine_spec="matrix_fakes:FakeEngine", jobs=2)
    path = tmp_path / "3.x-eager.json"
    schema.write_cell(path, cell)
    loaded = schema.load_cell(path)
    loaded.pop("_source", None)
    assert loaded == json.loads(json.dumps(cell))
    assert set(loaded["cases"]) == {"doubles", "adds_then_multiplies", "raises_the_same", "wrong_when_compiled"}


def test_every_design_metric_is_in_the_schema():
    for metric in ("ir_count", "graph_node_count", "graph_count", "graph_break_count", "guard_count",
                   "recompile_count", "kernel_count", "compile_time_s"):
        assert metric in schema.METRICS
    assert "compile_time_s" not in schema.GATED_METRICS


def _write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


@pytest.mark.parametrize("mutate, problem", [
    (lambda d: d.update(schema_version=99), "schema_version is 99"),
    (lambda d: d.pop("machine"), "missing field machine"),
    (lambda d: d["cases"]["t"]["metrics"].pop("guard_count"), "missing field cases.t.metrics.guard_count"),
    (lambda d: d["cases"]["t"].update(status="great"), "cases.t.status is 'great'"),
    (lambda d: d["cases"]["t"]["metrics"].update(ir_count=True), "cases.t.metrics.ir_count should be a number"),
    (lambda d: d["environment"].pop("numpy"), "missing field environment.numpy"),
    (lambda d: d.update(cases=[]), "field cases should be dict"),
])
def test_invalid_documents_name_the_field(tmp_path, mutate, problem):
    doc = json.loads(json.dumps(make_cell("3.11", cases={"t": make_case(TEST1_311)})))
    mutate(doc)
    path = _write(tmp_path, "bad.json", doc)
    with pytest.raises(schema.ResultFileError) as info:
        schema.load_cell(path)
    assert str(path) in str(info.value)
    assert problem in str(info.value)


def test_not_json_and_unreadable_files(tmp_path):
    with pytest.raises(schema.ResultFileError, match="not valid JSON"):
        schema.load_cell(_write(tmp_path, "x.json", "{not json"))
    with pytest.raises(schema.ResultFileError, match="cannot read"):
        schema.load_cell(tmp_path / "absent.json")
    with pytest.raises(schema.ResultFileError, match="expected a JSON object"):
        schema.load_cell(_write(tmp_path, "list.json", "[1, 2]"))


def test_load_cells_keeps_the_good_files(tmp_path):
    good = _write(tmp_path, "good.json", make_cell("3.11", cases={"t": make_case(TEST1_311)}))
    bad = _write(tmp_path, "bad.json", "nope")
    cells, errors = schema.load_cells([bad, good])
    assert [c["_source"] for c in cells] == [str(good)]
    assert [e.path for e in errors] == [str(bad)]


def test_write_cell_refuses_an_invalid_document(tmp_path):
    doc = make_cell("3.11")
    doc.pop("run_id")
    with pytest.raises(schema.SchemaError, match="run_id"):
        schema.write_cell(tmp_path / "x.json", doc)
    assert not (tmp_path / "x.json").exists()


def test_version_1_cells_are_upgraded_on_read(tmp_path):
    doc = json.loads(json.dumps(make_cell("3.11", cases={"t": make_case(TEST1_311)})))
    doc["schema_version"] = 1
    del doc["subject"], doc["metric_versions"]
    loaded = schema.load_cell(_write(tmp_path, "old.json", doc))
    assert loaded["schema_version"] == schema.SCHEMA_VERSION
    assert loaded["subject"] == schema.SUBJECT_TRACEMATRIX
    assert loaded["metric_versions"] == {m: 1 for m in schema.METRICS}
    assert loaded["cases"] == doc["cases"]
    assert "subject" not in doc  # upgrade returns a new document


def test_new_cells_record_subject_and_metric_definitions():
    cell = make_cell("3.11")
    assert cell["subject"] == schema.SUBJECT_TRACEMATRIX
    assert cell["metric_versions"] == schema.METRIC_VERSIONS
    schema.validate_cell(cell)


@pytest.mark.parametrize("mutate, problem", [
    (lambda d: d.update(subject="pypy-jit"), "field subject is 'pypy-jit'"),
    (lambda d: d.pop("subject"), "missing field subject"),
    (lambda d: d["metric_versions"].update(ir_count="2"), "metric_versions.ir_count should be int"),
])
def test_invalid_subject_fields_are_named(mutate, problem):
    doc = json.loads(json.dumps(make_cell("3.11")))
    mutate(doc)
    with pytest.raises(schema.SchemaError, match=problem.replace(".", r"\.").replace("(", r"\(")):
        schema.validate_cell(doc)
