"""The real server process under concurrent clients, restarts and bad files."""
from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from service_fakes import require_service

require_service()

import sqlalchemy as sa  # noqa: E402
from server_process import ROOT, Server  # noqa: E402
from service_fakes import TOKEN, body, case, cell  # noqa: E402

from matrix import upload  # noqa: E402
from matrix.service import database  # noqa: E402
from matrix.service.tables import cells, points  # noqa: E402

CLIENTS, CELLS_EACH = 8, 50


@pytest.fixture
def server(db_url, tmp_path):
    token_file = tmp_path / "tokens"
    token_file.write_text(f"# the CI token\n{TOKEN}\n")
    made = Server(db_url, token_file, tmp_path / "server.log").start()
    yield made
    made.stop()


def _history(url: str, **query: str) -> dict:
    params = dict({"case": "test1", "python": "3.11", "backend": "eager", "metric": "ir_count"}, **query)
    with urllib.request.urlopen(f"{url}/api/v1/history?{urllib.parse.urlencode(params)}", timeout=30) as answer:
        return json.load(answer)


def _client(url: str, index: int) -> list:
    statuses = []
    for n in range(CELLS_EACH):
        doc = cell(f"client{index}-run{n:02d}", timestamp=f"2026-02-01T{index:02d}:{n:02d}:00Z",
                   cases={"test1": case(), "test2": case()})
        statuses.append(upload.post(upload.endpoint(url), TOKEN, body(doc))[0])
        if n % 10 == 0:        # a retry of the same cell, as a flaky network would cause
            statuses.append(upload.post(upload.endpoint(url), TOKEN, body(doc))[0])
    return statuses


def test_concurrent_clients_lose_nothing_and_duplicate_nothing(server, db_url):
    with ThreadPoolExecutor(CLIENTS) as pool:
        results = list(pool.map(lambda i: _client(server.url, i), range(CLIENTS)))
    assert [s.count(201) for s in results] == [CELLS_EACH] * CLIENTS
    assert [s.count(200) for s in results] == [CELLS_EACH // 10] * CLIENTS   # the retries
    engine = database.connect(db_url)
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(cells)).scalar_one() == CLIENTS * CELLS_EACH
        assert conn.execute(sa.select(sa.func.count()).select_from(points)).scalar_one() == \
            CLIENTS * CELLS_EACH * 2 * 8
    engine.dispose()
    history = _history(server.url)["points"]
    assert len(history) == CLIENTS * CELLS_EACH
    assert len({p["run_id"] for p in history}) == CLIENTS * CELLS_EACH
    assert [p["timestamp"] for p in history] == sorted(p["timestamp"] for p in history)


def test_a_restart_keeps_every_point(server):
    for day in range(1, 6):
        status, _ = upload.post(upload.endpoint(server.url), TOKEN,
                                body(cell(f"night-{day}", timestamp=f"2026-03-0{day}T00:00:00Z")))
        assert status == 201
    before = _history(server.url)
    server.stop()
    server.start()
    assert _history(server.url) == before and len(before["points"]) == 5


def test_a_corrupt_cell_is_rejected_without_affecting_the_others(server, tmp_path):
    files = []
    for n in range(3):
        path = tmp_path / f"cell-{n}.json"
        path.write_text(json.dumps(cell(f"batch-{n}", timestamp=f"2026-04-01T0{n}:00:00Z")))
        files.append(path)
    files[1].write_text(files[1].read_text()[:-40])       # truncated mid-file
    token_file = tmp_path / "client-token"
    token_file.write_text(TOKEN + "\n")
    done = subprocess.run([sys.executable, "-m", "matrix", "upload", *map(str, files), "--url", server.url,
                           "--token-file", str(token_file)], capture_output=True, text=True, cwd=str(ROOT),
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert done.returncode == 1
    assert "cell-1.json: HTTP 400: body is not valid JSON" in done.stderr
    assert "uploaded 2 of 3 cell files" in done.stdout
    assert [p["run_id"] for p in _history(server.url)["points"]] == ["batch-0", "batch-2"]
