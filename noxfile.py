"""Sessions: tests (every interpreter found), matrix (interpreter x backend), report, lint.

Interpreter discovery works both where `python3.X` is on PATH and where the
interpreters sit in pyenv's versions folder without being activated: when
pyenv is present, PYENV_VERSION is set to every installed version so that the
`python3.X` shims resolve (this changes nothing for machines without pyenv).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List

import nox

ROOT = Path(__file__).resolve().parent
CANDIDATES = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]
CACHE = ROOT / ".cache"

# Keep tool caches inside the project's ignored folders, never shared defaults.
os.environ.setdefault("UV_CACHE_DIR", str(CACHE / "uv"))
os.environ.setdefault("TRITON_CACHE_DIR", str(CACHE / "triton"))

nox.options.default_venv_backend = "uv|venv" if shutil.which("uv") else "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests"]


def _pyenv_versions() -> List[str]:
    root = os.environ.get("PYENV_ROOT") or (
        subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip()
        if shutil.which("pyenv") else "")
    versions_dir = Path(root) / "versions" if root else None
    if not versions_dir or not versions_dir.is_dir():
        return []
    return sorted(p.name for p in versions_dir.iterdir()
                  if re.fullmatch(r"3\.\d+\.\d+", p.name) and (p / "bin" / "python").exists())


def _works(command: str) -> bool:
    exe = shutil.which(command)
    if not exe:
        return False
    try:
        return subprocess.run([exe, "-c", "import sys"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def discover() -> Dict[str, List[str]]:
    """Which CPython 3.8+ interpreters this machine has, as nox version strings."""
    installed = _pyenv_versions()
    if installed:
        os.environ["PYENV_VERSION"] = ":".join(installed)
    found = [v for v in CANDIDATES if _works(f"python{v}")]
    return {"found": found, "missing": [v for v in CANDIDATES if v not in found]}


INTERPRETERS = discover()
if not os.environ.get("_TRACEMATRIX_DISCOVERY_PRINTED"):
    os.environ["_TRACEMATRIX_DISCOVERY_PRINTED"] = "1"
    print(f"tracematrix: interpreters found: {', '.join(INTERPRETERS['found']) or 'none'}; "
          f"missing: {', '.join(INTERPRETERS['missing']) or 'none'}")
PYTHONS = INTERPRETERS["found"] or ["3"]


def _install(session: nox.Session, extras: str) -> None:
    session.install("-e", f".[{extras}]")


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The pytest suite on one interpreter (nox runs it on every interpreter found)."""
    _install(session, "test")
    args = session.posargs or ["-n", "2", "-q"]
    session.run("python", "-m", "pytest", *args,
                env={"TRITON_CACHE_DIR": str(CACHE / "triton" / session.name)})
