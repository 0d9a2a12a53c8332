"""Opcode coverage of the running interpreter's table, from `python -m opcode_tables coverage --json`."""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, Dict

from matrix.environment import REPO_ROOT

EXPECTED_KEYS = ("python", "table", "handled", "unsupported", "pending", "missing", "counts")


def collect(timeout_s: float = 120.0) -> Dict[str, Any]:
    """The coverage document, or {"error": why} when it cannot be had (never raises)."""
    command = [sys.executable, "-m", "opcode_tables", "coverage", "--json"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                              cwd=str(REPO_ROOT))
    except (OSError, subprocess.TimeoutExpired) as err:
        return {"error": f"`{' '.join(command[1:])}` failed: {err}"}
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"error": f"`python -m opcode_tables coverage --json` exited {done.returncode}: "
                         + " | ".join(tail)}
    try:
        doc = json.loads(done.stdout)
    except ValueError as err:
        return {"error": f"coverage output is not JSON ({err})"}
    if not isinstance(doc, dict):
        return {"error": "coverage output is not a JSON object"}
    absent = [k for k in EXPECTED_KEYS if k not in doc]
    if absent:
        doc["error"] = f"coverage output lacks {', '.join(absent)}"
    return doc
