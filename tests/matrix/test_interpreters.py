"""`python -m matrix interpreters`: listing, idempotent provisioning, nothing half-installed on failure.

The provisioning steps (apt, dpkg, patchelf) are replaced by fakes here: what is
tested is the orchestration (staging folder, marker, rename, clean-up, messages).
The real recipe is exercised by `python -m matrix interpreters --install 3.14 3.15`
(``.ci/run`` runs it before the tests).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from matrix import debian_python, interpreters
from matrix.debian_python import ProvisionError

ROOT = Path(__file__).resolve().parent.parent.parent


def _fake_python(path: Path, version: str) -> Path:
    """An executable that answers the version probe like CPython ``version`` would."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No real interpreter visible: an empty PATH dir, an empty pyenv root, an empty cache."""
    bin_dir = tmp_path / "path-bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    return tmp_path


def test_listing_merges_pyenv_path_and_project_trees(isolated):
    _fake_python(isolated / "pyenv" / "versions" / "3.41.2" / "bin" / "python3.41", "3.41")
    _fake_python(isolated / "pyenv" / "versions" / "3.41.9" / "bin" / "python3.41", "3.41")
    _fake_python(isolated / "path-bin" / "python3.42", "3.42")
    _fake_python(isolated / "path-bin" / "python3.44", "3.7")  # lies about its version: not listed
    _fake_python(isolated / "path-bin" / "python3.7", "3.7")   # older than the project supports
    cache = isolated / "cache"
    _fake_python(interpreters.tree_interpreter(cache, "3.43"), "3.43")
    (cache / "3.43" / debian_python.MARKER).write_text("{}")
    found = interpreters.discover(cache)
    assert list(found) == ["3.41", "3.42", "3.43"]
    assert found["3.41"].path.endswith("3.41.9/bin/python3.41") and found["3.41"].origin == "pyenv"
    assert found["3.42"].origin == "PATH"
    assert found["3.43"].origin == "project"


def test_a_tree_without_its_marker_is_not_listed(isolated):
    cache = isolated / "cache"
    _fake_python(interpreters.tree_interpreter(cache, "3.43"), "3.43")
    assert interpreters.discover(cache) == {}


def test_install_does_nothing_for_a_version_already_found(isolated, monkeypatch):
    _fake_python(isolated / "path-bin" / "python3.42", "3.42")

    def must_not_run(*args, **kwargs):
        raise AssertionError("install_one called for a version that is present")

    monkeypatch.setattr(interpreters, "install_one", must_not_run)
    said = []
    result = interpreters.install(["3.42"], root=isolated / "cache", log=said.append)
    assert result == {"3.42": str(isolated / "path-bin" / "python3.42")}
    assert "nothing to do" in said[0]


def test_install_rejects_a_malformed_version(isolated):
    with pytest.raises(ProvisionError, match="look like 3.14"):
        interpreters.install(["314"], root=isolated / "cache", log=lambda _: None)


class FakeSteps:
    """Replaces the Debian steps; ``fail_at`` names the step that raises."""

    def __init__(self, monkeypatch, fail_at=None):
        self.fail_at = fail_at
        self.ran = []
        test = self

        class FakeApt:
            def __init__(self, state, log, source=None):
                pass

            def update(self):
                test.step("apt-get update")

        monkeypatch.setattr(debian_python, "check_host", lambda: None)
        monkeypatch.setattr(debian_python, "Apt", FakeApt)
        monkeypatch.setattr(debian_python, "resolve_packages", lambda apt, v: self.step("resolve") or ["p"])
        monkeypatch.setattr(interpreters, "_download",
                            lambda apt, packages, into: self.step("download") or [Path("p.deb")])
        monkeypatch.setattr(debian_python, "extract", self.extract)
        monkeypatch.setattr(debian_python, "patchelf", lambda tools, log: self.step("patchelf") or "true")
        monkeypatch.setattr(debian_python, "relink", lambda binary, final, tool: self.step("relink"))
        monkeypatch.setattr(debian_python, "probe", self.probe)

    def step(self, name):
        self.ran.append(name)
        if name == self.fail_at:
            raise subprocess.CalledProcessError(100, ["apt-get", name], "", "E: simulated failure")

    def extract(self, debs, root, log):
        self.step("extract")
        _fake_python(root / debian_python.relative_interpreter("3.43"), "3.43")

    def probe(self, root, version, through_loader):
        self.step("probe staging" if through_loader else "probe final")
        return "3.43.1"


@pytest.mark.parametrize("failing", ["apt-get update", "download", "extract", "relink", "probe staging",
                                     "probe final"])
def test_a_failed_step_says_what_failed_and_leaves_nothing_behind(isolated, monkeypatch, failing):
    cache = isolated / "cache"
    steps = FakeSteps(monkeypatch, fail_at=failing)
    with pytest.raises(ProvisionError) as raised:
        interpreters.install(["3.43"], root=cache, downloads=isolated / "downloads", log=lambda _: None)
    message = str(raised.value)
    assert "CPython 3.43" in message and "E: simulated failure" in message
    if failing in ("apt-get update", "download"):
        assert "what to do: check the network" in message
    assert steps.ran[-1] == failing
    leftovers = sorted(p.name for p in cache.iterdir() if p.name not in (".lock", "bin"))
    assert leftovers == []
    assert interpreters.discover(cache) == {}


def test_a_successful_install_is_listed_and_a_second_one_does_nothing(isolated, monkeypatch):
    cache = isolated / "cache"
    steps = FakeSteps(monkeypatch)
    said = []
    result = interpreters.install(["3.43"], root=cache, downloads=isolated / "downloads", log=said.append)
    tree = interpreters.tree_interpreter(cache, "3.43")
    assert result == {"3.43": str(tree)}
    assert steps.ran == ["apt-get update", "resolve", "download", "extract", "patchelf", "relink",
                         "probe staging", "probe final"]
    marker = json.loads((cache / "3.43" / debian_python.MARKER).read_text())
    assert marker["full_version"] == "3.43.1"
    assert os.readlink(cache / "bin" / "python3.43") == str(tree)
    assert interpreters.discover(cache)["3.43"].origin == "project"
    steps.ran.clear()
    said.clear()
    interpreters.install(["3.43"], root=cache, downloads=isolated / "downloads", log=said.append)
    assert steps.ran == [] and "nothing to do" in said[0]


def test_an_unfinished_tree_is_replaced(isolated, monkeypatch):
    cache = isolated / "cache"
    (cache / "3.43" / "usr").mkdir(parents=True)   # an earlier run died before its marker
    (cache / ".partial-3.43-old").mkdir()
    FakeSteps(monkeypatch)
    interpreters.install(["3.43"], root=cache, downloads=isolated / "downloads", log=lambda _: None)
    assert (cache / "3.43" / debian_python.MARKER).exists()
    assert not (cache / ".partial-3.43-old").exists()


def test_dependencies_are_followed_through_library_packages_only():
    fields = {"Depends": "libpython3.43-minimal (= 3.43.1-1), media-types | mime-support, libc6 (>= 2.42)",
              "Pre-Depends": "libzstd1"}
    assert debian_python._dependency_names(fields) == [
        ["libzstd1"], ["libpython3.43-minimal"], ["media-types", "mime-support"], ["libc6"]]


def test_the_system_sources_are_read_for_mirror_and_keyring(tmp_path):
    sources = tmp_path / "debian.sources"
    sources.write_text("Types: deb-src\nURIs: http://src.example/debian\n\n"
                       "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm\n"
                       "Components: main\nSigned-By: /keys/debian.gpg\n")
    assert debian_python.system_debian_source([str(sources)]) == {
        "uri": "http://mirror.example/debian", "keyring": "/keys/debian.gpg"}
    listing = tmp_path / "sources.list"
    listing.write_text("# comment\ndeb [signed-by=/k.gpg arch=amd64] http://one.example/debian bookworm main\n")
    assert debian_python.system_debian_source([str(listing)]) == {"uri": "http://one.example/debian",
                                                                    "keyring": "/k.gpg"}


def test_cli_json_lists_the_running_interpreter():
    done = subprocess.run([sys.executable, "-m", "matrix", "interpreters", "--json"], capture_output=True,
                          text=True, cwd=str(ROOT), timeout=120,
                          env=dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep
                                   + os.environ.get("PATH", ""), PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    assert "%d.%d" % sys.version_info[:2] in listing
    assert all(os.path.isabs(path) for path in listing.values())


def test_cli_runs_on_a_python_without_numpy():
    """CI provisions 3.14/3.15 with the bare system Python, before any environment has numpy:
    the command line must not import the runner (numpy) for `interpreters`."""
    block_numpy = ("import runpy, sys; sys.modules['numpy'] = None; sys.argv = ['matrix'] + sys.argv[1:]; "
                   "runpy.run_module('matrix', run_name='__main__', alter_sys=True)")
    done = subprocess.run([sys.executable, "-c", block_numpy, "interpreters", "--json"], capture_output=True,
                          text=True, cwd=str(ROOT), timeout=120,
                          env=dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep
                                   + os.environ.get("PATH", ""), PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    assert "%d.%d" % sys.version_info[:2] in json.loads(done.stdout)
