"""The rendered report opened in headless Chromium: the matrix is there, the filter
works, and the page logs nothing to the console (no script errors, nothing fetched)."""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile

import pytest

pytest.importorskip("pandas", reason="the report needs pandas (the 'report' extra)")
pytest.importorskip("jinja2", reason="the report needs jinja2 (the 'report' extra)")

from matrix import schema  # noqa: E402
from matrix.report import build_report  # noqa: E402
from matrix_fakes import TEST1_310, TEST1_311, make_case, make_cell  # noqa: E402

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed "
                                "(Debian: apt-get install chromium; .ci/run installs it)")


def _open(url: str):
    """(dumped DOM, console lines) of a page loaded in headless Chromium."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
             f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", "--dump-dom", url],
            capture_output=True, text=True, timeout=120)
    console = [line for line in done.stderr.splitlines()
               if ":CONSOLE" in line or "Failed to load resource" in line]
    return done.stdout, console


def test_console_detection_catches_a_planted_error(tmp_path):
    page = tmp_path / "planted.html"
    page.write_text('<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head>'
                    '<body><script>notDefinedAnywhere();</script></body></html>')
    _, console = _open(page.as_uri())
    assert any("notDefinedAnywhere" in line for line in console)


def test_report_renders_its_matrix_without_console_errors(tmp_path):
    cells = [make_cell("3.10", cases={"same": make_case(TEST1_311), "moved": make_case(TEST1_310)}),
             make_cell("3.11", cases={"same": make_case(TEST1_311), "moved": make_case(TEST1_311)}),
             make_cell("3.11", "numpy", cases={"same": make_case(TEST1_311), "moved": make_case(TEST1_311)})]
    paths = []
    for i, cell in enumerate(cells):
        paths.append(tmp_path / f"{i}.json")
        schema.write_cell(paths[-1], cell)
    out = tmp_path / "report"
    build_report(paths, out, baseline_dir=tmp_path / "baselines", missing_pythons=["3.13"])

    dom, console = _open((out / "index.html").as_uri())
    assert console == []
    assert 'data-report-ready="1"' in dom            # report.js ran to its end
    table = re.search(r'<table id="matrix".*?</table>', dom, re.S).group(0)
    assert len(re.findall(r"<tr data-case=", table)) == 2
    assert len(re.findall(r'class="cell-head', table)) == 5   # 3.10, 3.11, 3.13 eager; 3.11, 3.13 numpy
    assert "-1 RESUME" in table and ">missing<" in table

    dom, console = _open((out / "index.html").as_uri() + "#changed")
    assert console == []
    rows = dict(re.findall(r'<tr data-case="(\w+)"[^>]*?( hidden="")?>', dom))
    assert rows == {"same": " hidden=\"\"", "moved": ""}   # only the changed case stays visible

    for page in [out / "coverage.html", *sorted((out / "cases").glob("*.html"))]:
        dom, console = _open(page.as_uri())
        assert console == [], page
        assert 'data-report-ready="1"' in dom
