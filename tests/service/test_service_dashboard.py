"""The dashboard and run pages: server-side SVG, open changes, and escaping of every text."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from service_fakes import require_service

require_service()

from service_fakes import AUTH, TEST1_310, TEST1_311, body, case, cell  # noqa: E402

HOSTILE = '<script>alert("x")</script>'


def _post(client, doc):
    answer = client.post("/api/v1/cells", content=body(doc), headers=AUTH)
    assert answer.status_code == 201, answer.text


def _svgs(page: str):
    charts = []
    start = page.find("<svg")
    while start != -1:
        end = page.index("</svg>", start) + len("</svg>")
        charts.append(ET.fromstring(page[start:end]))     # well-formed XML, or this raises
        start = page.find("<svg", end)
    return charts


def test_dashboard_plots_one_chart_per_interpreter_with_a_point_per_run(client):
    for day in (1, 2, 3):
        for python in ("3.10", "3.11"):
            for backend in ("eager", "numpy"):
                _post(client, cell(f"night-{day}", python=python, backend=backend,
                                   timestamp=f"2026-01-0{day}T03:00:00Z"))
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    charts = _svgs(page.text)
    assert [c.get("aria-label") for c in charts] == ["Python 3.10", "Python 3.11"]
    ns = "{http://www.w3.org/2000/svg}"
    for chart in charts:
        assert len(chart.findall(f"{ns}polyline")) == 2                     # eager and numpy
        links = [a.get("href") for a in chart.iter(f"{ns}a")]
        assert sorted(set(links)) == ["/runs/night-1", "/runs/night-2", "/runs/night-3"]
    assert "<script" not in page.text and "http" not in page.text.replace("http://www.w3.org/2000/svg", "")


def test_open_changes_list_the_first_bad_run_and_escape_names(client):
    _post(client, cell("night-1", timestamp="2026-01-01T00:00:00Z",
                       cases={"test1": case(TEST1_310), HOSTILE: case(TEST1_310)}))
    _post(client, cell("night-2", timestamp="2026-01-02T00:00:00Z", numpy="2.0.0",
                       cases={"test1": case(TEST1_311), HOSTILE: case(TEST1_311)}))
    page = client.get("/").text
    assert HOSTILE not in page
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    assert page.count('href="/runs/night-2"') >= 2          # both open changes point at night-2
    assert "numpy: 1.26.4 → 2.0.0" in page
    assert "+2 BINARY_OP, +1 RESUME" in page


def test_a_change_reverted_inside_the_window_is_not_open(client):
    for day, ops in ((1, TEST1_310), (2, TEST1_311), (3, TEST1_310)):
        _post(client, cell(f"night-{day}", timestamp=f"2026-01-0{day}T00:00:00Z", cases={"test1": case(ops)}))
    assert "Open changes (0)" in client.get("/").text


def test_run_page_escapes_case_details_and_environment(client):
    doc = cell("night-1", cases={HOSTILE: case(status="error")})
    doc["environment"]["numpy"] = HOSTILE
    _post(client, doc)
    page = client.get("/runs/night-1")
    assert page.status_code == 200
    assert HOSTILE not in page.text and "&lt;script&gt;" in page.text
    assert "planted failure" in page.text
    unknown = client.get("/runs/no-such-run")
    assert unknown.status_code == 200 and "No cells stored" in unknown.text


def test_dashboard_of_an_empty_database_says_what_to_do(client):
    page = client.get("/").text
    assert "python -m matrix upload" in page


def test_trends_endpoint_feeds_the_static_report(client, tmp_path):
    for day in (1, 2):
        _post(client, cell(f"night-{day}", timestamp=f"2026-01-0{day}T03:00:00Z"))
    answer = client.get("/api/v1/trends").json()
    assert [row["run_id"] for row in answer["cells"]] == ["night-1", "night-2"]
    assert answer["cells"][0]["ir_total"] == 10
    from matrix.service import trends

    (tmp_path / "history.json").write_text(json.dumps(answer))
    rows, base = trends.load(str(tmp_path / "history.json"))
    (chart,) = trends.charts(rows, lambda run_id: "#")
    assert chart.count("<circle") == 2 and base == ""
