"""`python -m matrix serve` and `upload` as a person runs them, with a real cell."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request

import pytest
from service_fakes import require_service

require_service()

from server_process import ROOT, Server  # noqa: E402

from matrix.service.auth import TokenFileError, Tokens, hashed_line  # noqa: E402


def _matrix(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "matrix", *args], capture_output=True, text=True,
                          cwd=str(ROOT), env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=timeout)


def test_serve_explains_a_missing_token_file_and_a_bad_db(tmp_path):
    done = _matrix("serve", "--token-file", str(tmp_path / "nope"), "--db", str(tmp_path / "h.db"))
    assert done.returncode == 2 and "token file" in done.stderr and "Traceback" not in done.stderr
    (tmp_path / "tokens").write_text("t0ken\n")
    done = _matrix("serve", "--token-file", str(tmp_path / "tokens"), "--db", "mysql://x/y")
    assert done.returncode == 2 and "postgresql://" in done.stderr and "Traceback" not in done.stderr


def test_hashed_token_lines_admit_the_token_without_containing_it(tmp_path):
    (tmp_path / "client").write_text("s3cret-token\n")
    done = _matrix("serve", "--token-file", str(tmp_path / "client"), "--hash-token")
    assert done.returncode == 0 and done.stdout.strip() == hashed_line("s3cret-token")
    (tmp_path / "server").write_text(done.stdout)
    tokens = Tokens.from_file(tmp_path / "server")
    assert tokens.check("Bearer s3cret-token") and tokens.check("Bearer s3cret-tokem") is None
    assert "s3cret" not in (tmp_path / "server").read_text()
    (tmp_path / "bad").write_text("sha256:1234\n")
    with pytest.raises(TokenFileError, match="64 hex digits"):
        Tokens.from_file(tmp_path / "bad")


def test_a_real_cell_from_matrix_run_goes_through_upload(tmp_path):
    out = tmp_path / "cell.json"
    ran = _matrix("run", "--backend", "eager", "--out", str(out), "--cases", "arithmetic/*", "--jobs", "1",
                  "--no-coverage", "--quiet")
    assert ran.returncode == 0, ran.stderr
    (tmp_path / "tokens").write_text("ci-token\n")
    (tmp_path / "wrong").write_text("not-the-token\n")
    server = Server(str(tmp_path / "history.sqlite"), tmp_path / "tokens", tmp_path / "server.log").start()
    try:
        refused = _matrix("upload", str(out), "--url", server.url, "--token-file", str(tmp_path / "wrong"))
        assert refused.returncode == 1 and "HTTP 401" in refused.stderr
        posted = _matrix("upload", str(out), "--url", server.url, "--token-file", str(tmp_path / "tokens"),
                         "--report-url", "https://example.org/reports/1/")
        assert posted.returncode == 0 and "new (" in posted.stdout, posted.stderr
        doc = json.loads(out.read_text())
        name = sorted(doc["cases"])[0]
        query = (f"case={name}&python={doc['python']}&backend=eager&metric=ir_count")
        with urllib.request.urlopen(f"{server.url}/api/v1/history?{query}") as answer:
            points = json.load(answer)["points"]
        assert [p["value"] for p in points] == [doc["cases"][name]["metrics"]["ir_count"]]
        assert points[0]["environment"] == doc["environment"]
        with urllib.request.urlopen(server.url + "/") as answer:
            assert "<svg" in answer.read().decode()
    finally:
        server.stop()
