"""The HTTP API on SQLite and on PostgreSQL: auth, validation, idempotency, history, first-bad."""
from __future__ import annotations

import json

import pytest
from service_fakes import require_service

require_service()

from matrix import schema  # noqa: E402
from service_fakes import AUTH, TEST1_310, TEST1_311, body, case, cell, version_1  # noqa: E402

QUERY = {"case": "test1", "python": "3.11", "backend": "eager", "metric": "ir_count"}


def post(client, doc, headers=AUTH, **params):
    return client.post("/api/v1/cells", content=body(doc) if not isinstance(doc, bytes) else doc,
                       headers=headers, params=params)


def test_a_cell_is_accepted_with_the_token_and_refused_without(client):
    refused = post(client, cell(), headers={})
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    assert "token" in refused.json()["error"]
    assert post(client, cell(), headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert post(client, cell(), headers={"Authorization": "Basic " + AUTH["Authorization"][7:]}).status_code == 401
    assert client.get("/api/v1/history", params=QUERY).status_code == 404   # nothing was stored
    stored = post(client, cell())
    assert stored.status_code == 201, stored.text
    assert stored.json()["stored"] == "new" and stored.json()["points"] == 8


def test_posting_the_same_cell_twice_stores_it_once(client):
    assert post(client, cell()).status_code == 201
    again = post(client, cell())
    assert again.status_code == 200 and again.json()["stored"] == "unchanged"
    points = client.get("/api/v1/history", params=QUERY).json()["points"]
    assert len(points) == 1


def test_an_older_schema_version_is_upgraded_on_ingest(client):
    old = version_1(cell("run-old", timestamp="2026-01-01T00:00:00+00:00"))
    assert post(client, old).status_code == 201
    assert post(client, cell("run-new", timestamp="2026-01-02T00:00:00+00:00")).status_code == 201
    points = client.get("/api/v1/history", params=QUERY).json()["points"]
    assert [p["schema_version"] for p in points] == [1, 2]
    # version 1 meant the first definitions; a new cell records this checkout's
    assert [p["metric_version"] for p in points] == [1, schema.METRIC_VERSIONS[QUERY["metric"]]]
    # re-posting the version-1 file is still the same cell
    assert post(client, old).status_code == 200


def test_same_identity_with_different_content_is_a_conflict(client):
    assert post(client, cell()).status_code == 201
    changed = post(client, cell(cases={"test1": case(TEST1_311)}))
    assert changed.status_code == 409 and "run-1" in changed.json()["error"]
    assert client.get("/api/v1/history", params=QUERY).json()["points"][0]["value"] == 10


@pytest.mark.parametrize("breaks, field", [
    (lambda d: d["cases"]["test1"]["metrics"].pop("ir_count"), "cases.test1.metrics.ir_count"),
    (lambda d: d.pop("environment"), "environment"),
    (lambda d: d["cases"]["test1"].update(status="great"), "cases.test1.status"),
    (lambda d: d.update(subject="someone-else"), "subject"),
    (lambda d: d.update(run_id="../../etc/passwd"), "run_id"),
    (lambda d: d.update(machine="a/b"), "machine"),
    (lambda d: d.update(timestamp="yesterday"), "timestamp"),
    (lambda d: d.update(kind="something"), "kind"),
])
def test_a_malformed_cell_is_refused_naming_the_field(client, breaks, field):
    doc = cell()
    breaks(doc)
    refused = post(client, doc)
    assert refused.status_code == 422, refused.text
    assert field in refused.json()["error"]


def test_bad_json_oversized_and_deeply_nested_bodies_are_refused(client):
    assert post(client, b"{not json").status_code == 400
    assert post(client, b"").status_code == 400
    assert post(client, b'{"a": NaN}').status_code == 400
    assert post(client, b"\xff\xfe").status_code == 400
    deep = post(client, b"[" * 100000 + b"]" * 100000)
    assert deep.status_code in (400, 413)
    nested = post(client, json.dumps(json.loads("[" * 40 + "]" * 40)).encode())
    assert nested.status_code == 400 and "nested" in nested.json()["error"]
    big = post(client, b" " * (1024 * 1024 + 1))
    assert big.status_code == 413
    infinite = cell()
    infinite["cases"]["test1"]["metrics"]["ir_count"] = 1e400    # json.dumps writes Infinity
    assert post(client, body(infinite).replace(b"Infinity", b"1e400")).status_code == 422


def _three_nights(client, *, second_numpy="2.0.0", second_ops=TEST1_311):
    nights = [("night-1", "2026-01-01", "1.26.4", TEST1_310),
              ("night-2", "2026-01-02", second_numpy, second_ops),
              ("night-3", "2026-01-03", second_numpy, second_ops)]
    for run_id, day, numpy, ops in reversed(nights):     # posted out of order on purpose
        assert post(client, cell(run_id, timestamp=f"{day}T03:00:00Z", numpy=numpy,
                                 cases={"test1": case(ops)})).status_code == 201


def test_history_returns_every_run_in_time_order_with_its_environment(client):
    _three_nights(client)
    answer = client.get("/api/v1/history", params=QUERY).json()
    assert [p["run_id"] for p in answer["points"]] == ["night-1", "night-2", "night-3"]
    assert [p["value"] for p in answer["points"]] == [10, 11, 11]
    first = answer["points"][0]
    assert first["environment"]["numpy"] == "1.26.4" and first["environment"]["python_version"] == "3.11.7"
    assert first["environment"]["git_commit"] == "a" * 40 and first["status"] == "pass"
    assert first["timestamp"] == "2026-01-01T03:00:00.000000Z"


def test_first_bad_names_the_run_and_the_upstream_that_changed(client):
    _three_nights(client)
    answer = client.get("/api/v1/first-bad", params=QUERY).json()
    assert answer["first_bad"]["run_id"] == "night-2"
    assert answer["last_good"]["run_id"] == "night-1"
    assert answer["current_value"] == 11
    assert answer["changed"] == [{"what": "numpy", "kind": "upstream", "before": "1.26.4", "after": "2.0.0"}]
    assert answer["opcodes"]["text"] == "+2 BINARY_OP, +1 RESUME, -1 BINARY_ADD, -1 BINARY_MULTIPLY"
    assert answer["opcodes"]["explained"] is True
    assert "night-2" in answer["summary"] and "numpy 1.26.4 -> 2.0.0" in answer["summary"]


def test_first_bad_of_a_series_that_never_changed(client):
    _three_nights(client, second_numpy="1.26.4", second_ops=TEST1_310)
    answer = client.get("/api/v1/first-bad", params=QUERY).json()
    assert answer["first_bad"]["run_id"] == "night-1" and answer["last_good"] is None
    assert answer["changed"] == [] and "since the first run" in answer["summary"]


def test_first_bad_reports_a_metric_definition_change(client):
    assert post(client, cell("r1", timestamp="2026-01-01T00:00:00Z")).status_code == 201
    versions = dict({m: 1 for m in case()["metrics"]}, guard_count=2)
    assert post(client, cell("r2", timestamp="2026-01-02T00:00:00Z", metric_versions=versions,
                             cases={"test1": case(guard_count=3)})).status_code == 201
    answer = client.get("/api/v1/first-bad", params=dict(QUERY, metric="guard_count")).json()
    assert answer["first_bad"]["run_id"] == "r2"
    assert answer["changed"] == [{"what": "metric_version", "kind": "definition", "before": 1, "after": 2}]


def test_machines_are_separate_measurements(client):
    assert post(client, cell(machine="cpu-box")).status_code == 201
    assert post(client, cell(machine="gpu-box", cases={"test1": case(TEST1_311)})).status_code == 201
    history = client.get("/api/v1/history", params=QUERY).json()
    assert history["machines"] == ["cpu-box", "gpu-box"] and len(history["points"]) == 2
    mixed = client.get("/api/v1/first-bad", params=QUERY)
    assert mixed.status_code == 400 and "machine=" in mixed.json()["error"]
    one = client.get("/api/v1/first-bad", params=dict(QUERY, machine="gpu-box")).json()
    assert one["current_value"] == 11 and one["series"]["machine"] == "gpu-box"


def test_subject_defaults_to_the_project_and_separates_series(client):
    assert post(client, cell(subject="dynamo", cases={"test1": case(TEST1_311)})).status_code == 201
    assert client.get("/api/v1/history", params=QUERY).status_code == 404
    dynamo = client.get("/api/v1/history", params=dict(QUERY, subject="dynamo")).json()
    assert [p["value"] for p in dynamo["points"]] == [11]


def test_dynamos_count_changing_in_a_torch_nightly_is_one_query(client):
    """'Dynamo's ir_count for this case changed in torch nightly X on 3.11': the Dynamo
    subject's own series, and first-bad names the torch that moved and the opcodes."""
    nights = [("n1", "2.14.0.dev20261101+cpu", TEST1_311), ("n2", "2.14.0.dev20261102+cpu", TEST1_311),
              ("n3", "2.14.0.dev20261103+cpu", dict(TEST1_311, NOP=1))]
    for day, (run_id, torch, ops) in enumerate(nights, start=1):
        doc = cell(run_id, timestamp=f"2026-01-0{day}T00:00:00Z", subject="dynamo", torch=torch,
                   machine="gha-ubuntu-torch-nightly", cases={"test1": case(ops)})
        assert post(client, doc).status_code == 201
        ours = cell(run_id, timestamp=f"2026-01-0{day}T00:00:00Z", cases={"test1": case(TEST1_311)})
        assert post(client, ours).status_code == 201   # same run, the project's own series
    answer = client.get("/api/v1/first-bad", params=dict(QUERY, subject="dynamo")).json()
    assert (answer["first_bad"]["run_id"], answer["last_good"]["run_id"]) == ("n3", "n2")
    assert (answer["current_value"], answer["series"]["subject"]) == (12, "dynamo")
    assert answer["changed"] == [{"what": "torch", "kind": "upstream", "before": "2.14.0.dev20261102+cpu",
                                  "after": "2.14.0.dev20261103+cpu"}]
    assert answer["opcodes"]["text"] == "+1 NOP"
    ours = client.get("/api/v1/first-bad", params=QUERY).json()
    assert ours["current_value"] == 11 and ours["last_good"] is None


def test_query_errors_say_what_is_missing(client):
    missing = client.get("/api/v1/history", params={"case": "test1"})
    assert missing.status_code == 400 and "python, backend, metric" in missing.json()["error"]
    assert client.get("/api/v1/first-bad", params=QUERY).status_code == 404


def test_report_url_must_be_http(client):
    refused = post(client, cell(), report_url="javascript:alert(1)")
    assert refused.status_code == 422 and "report_url" in refused.json()["error"]
    assert post(client, cell(), report_url="https://example.org/run-1/").status_code == 201
    page = client.get("/runs/run-1").text
    assert 'href="https://example.org/run-1/"' in page


def test_cpython_test_suite_cells_become_per_module_history(client):
    """Cells of `python -m matrix cpython-tests`: accepted where that module is installed,
    otherwise refused with a 422 that says why (never a 500)."""
    doc = {"schema_version": 1, "kind": "tracematrix-cpython-tests", "run_id": "weekly-1",
           "timestamp": "2026-01-03T00:00:00Z", "machine": "box-a", "python": "3.11", "backend": "eager",
           "cell_status": "ok", "environment": cell()["environment"], "duration_s": 1.0, "timeout_s": 60.0,
           "selection": "modules", "totals": {}, "modules": {}}
    answer = post(client, doc)
    try:
        from matrix.cpython_tests import cell as cpython_cell
    except ImportError:
        assert answer.status_code == 422 and "matrix.cpython_tests" in answer.json()["error"]
        return
    assert answer.status_code == 422 and "totals" in answer.json()["error"]   # its own validator
    row = {"status": "passed", "reason": None, "tests": 10, "compiled_tests": 10, "plain_passed": 10,
           "compiled_passed": 9, "plain_skipped": 0, "improvements": 0, "plain_duration_s": 1.0,
           "compiled_duration_s": 1.0, "compiler": None, "stopped": None,
           "regressions": [{"test": "test_x", "plain": "pass", "compiled": "fail", "detail": "boom"}]}
    row["status"] = next(iter(getattr(cpython_cell, "MODULE_STATUSES", ["passed"])), "passed")
    doc.update(modules={"test_list": row}, totals=cpython_cell.totals({"test_list": row}))
    stored = post(client, doc)
    assert stored.status_code == 201, stored.text
    history = client.get("/api/v1/history", params={"subject": "cpython-tests", "case": "test_list",
                                                    "python": "3.11", "backend": "eager", "metric": "regressions"})
    assert [p["value"] for p in history.json()["points"]] == [1]


def test_nul_characters_and_markup_in_free_text_are_stored_and_escaped(client):
    doc = cell(cases={"test1": case(status="error")})
    doc["cases"]["test1"]["detail"] = "boom\x00<b>bold</b>"
    doc["cell_status"] = "error: \x00 nul"
    doc["environment"]["numpy"] = "1.26\x00<i>"
    assert post(client, doc).status_code == 201
    page = client.get("/runs/run-1").text
    assert "boom\\x00&lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold" not in page
    point = client.get("/api/v1/history", params=QUERY).json()["points"][0]
    assert point["environment"]["numpy"] == "1.26\x00<i>" and point["cell_status"] == "error: \\x00 nul"
