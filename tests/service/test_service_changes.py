"""The pure parts: change points, what changed, body parsing, token checks."""
from __future__ import annotations

import json

import pytest
from service_fakes import require_service

require_service()

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from matrix.service import changes  # noqa: E402
from matrix.service.auth import Tokens, hash_token  # noqa: E402
from matrix.service.ingest import MAX_DEPTH, Rejected, depth_of, digest_of, parse_body, utc_text  # noqa: E402


@given(st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=1, max_size=30))
def test_change_point_is_the_start_of_the_trailing_run_of_equal_values(values):
    good, bad = changes.change_point(values)
    assert all(v == values[-1] for v in values[bad:])
    if good is None:
        assert bad == 0
    else:
        assert good == bad - 1 and values[good] != values[-1]


def _point(env, metric_version=1, schema_version=2, value=1, run_id="r"):
    return {"environment": env, "metric_version": metric_version, "schema_version": schema_version,
            "value": value, "run_id": run_id}


def test_what_changed_lists_upstream_first_then_project_then_the_rest():
    before = _point({"numpy": "1.26", "git_commit": "a", "platform": "x", "python_version": "3.13.0"})
    after = _point({"numpy": "2.0", "git_commit": "b", "platform": "y", "python_version": "3.13.1",
                    "torch": "2.5"}, metric_version=2, schema_version=1)
    found = changes.what_changed(before, after)
    assert [(c["kind"], c["what"]) for c in found] == [
        ("upstream", "numpy"), ("upstream", "python_version"), ("upstream", "torch"),
        ("project", "git_commit"), ("definition", "metric_version"), ("schema", "schema_version"),
        ("environment", "platform")]
    assert found[2]["before"] is None and found[2]["after"] == "2.5"


@given(st.dictionaries(st.text(max_size=5), st.integers(), max_size=8))
def test_digest_ignores_key_order(doc):
    assert digest_of(doc) == digest_of(dict(reversed(list(doc.items()))))


def test_depth_is_counted_without_recursion():
    deep = []
    for _ in range(5000):
        deep = [deep]
    assert depth_of(deep) == 5001 and depth_of({"a": [1, {"b": 2}]}) == 3 and depth_of(3) == 0
    with pytest.raises(Rejected, match="nested too deeply"):
        parse_body(b"[" * 5001 + b"]" * 5001)
    assert parse_body(json.dumps(json.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH)).encode())


def test_times_are_normalised_to_sortable_utc_text():
    assert utc_text("2026-01-01T02:00:00+02:00") == "2026-01-01T00:00:00.000000Z"
    assert utc_text("2026-01-01T00:00:00Z") == utc_text("2026-01-01T00:00:00")
    with pytest.raises(Rejected) as err:
        utc_text("last tuesday")
    assert err.value.status == 422 and "timestamp" in err.value.message


def test_tokens_need_the_bearer_scheme_and_an_exact_match():
    tokens = Tokens([hash_token("abc"), hash_token("def")])
    assert tokens.check("Bearer def") == hash_token("def").hex()[:12]
    assert tokens.check("bearer abc") and tokens.check("Bearer  abc ")
    for header in (None, "", "Bearer", "Bearer ", "Token abc", "Bearer abcd", "Bearer ab"):
        assert tokens.check(header) is None
    with pytest.raises(ValueError):
        Tokens([])
