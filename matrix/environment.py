"""Where a cell ran: interpreter build, upstream versions, machine, commit, run id."""
from __future__ import annotations

import datetime
import os
import platform
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Dict, Optional

REPO_ROOT = Path(__file__).resolve().parent.parent


def python_key() -> str:
    """The interpreter's major.minor, the cell's name on the python axis ("3.11")."""
    from opcode_tables import running_version  # the one place that reads the running version
    return "%d.%d" % running_version()


def run_id() -> str:
    """Shared by every cell of one `nox -s matrix` run (TRACEMATRIX_RUN_ID), else fresh."""
    return os.environ.get("TRACEMATRIX_RUN_ID") or new_run_id()


def new_run_id() -> str:
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{uuid.uuid4().hex[:8]}"


def machine_name() -> str:
    return os.environ.get("TRACEMATRIX_MACHINE") or socket.gethostname() or platform.node() or "unknown"


def timestamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def _distribution_version(name: str) -> Optional[str]:
    # importlib.metadata avoids importing triton itself (slow, and it may need a GPU driver).
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - 3.8+ always has it
        return None
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> Optional[str]:
    try:
        done = subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_commit() -> Dict[str, Any]:
    commit = os.environ.get("TRACEMATRIX_GIT_COMMIT") or _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def collect() -> Dict[str, Any]:
    """Everything a history service needs to say which upstream changed."""
    import numpy

    git = git_commit()
    return {
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "python_build": " ".join(platform.python_build()),
        "python_compiler": platform.python_compiler(),
        "python_executable": sys.executable,
        "numpy": numpy.__version__,
        "triton": _distribution_version("triton"),
        "platform": platform.platform(),
        "machine_arch": platform.machine(),
        "cpu_count": os.cpu_count(),
        "git_commit": git["commit"],
        "git_dirty": git["dirty"],
    }
