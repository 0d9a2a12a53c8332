"""The stored ``str(graph)`` of every one-graph corpus call: one file shared by all interpreters.

The file is generated on purpose (``TRACEMATRIX_UPDATE_GRAPHS=1`` when running tests/test_corpus.py), and
then every interpreter must produce exactly the same text: that is the cross-version check of issue 3.  An
update merges: what this interpreter produced replaces the stored text, graphs it did not produce (a case that
traces only on other versions today) are kept.  Format: a header line ``=== <case> [call <i>] ===`` followed by the text.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict

PATH = Path(__file__).with_name("expected_graphs.txt")
UPDATE_ENV = "TRACEMATRIX_UPDATE_GRAPHS"
_HEADER = "=== {key} ==="
_PREAMBLE = ("# str(graph) of every one-graph corpus call; identical on every interpreter the tracer covers.\n"
             "# Written only on purpose: TRACEMATRIX_UPDATE_GRAPHS=1 python -m pytest -p no:xdist tests/test_corpus.py -k graph_text\n")


def key(case_name: str, call_index: int) -> str:
    return f"{case_name} [call {call_index}]"


def updating() -> bool:
    return os.environ.get(UPDATE_ENV, "") not in ("", "0")


def load() -> Dict[str, str]:
    if not PATH.exists():
        return {}
    entries: Dict[str, str] = {}
    current = None
    lines: list = []
    for line in PATH.read_text(encoding="utf-8").splitlines():
        if line.startswith("=== ") and line.endswith(" ==="):
            if current is not None:
                entries[current] = "\n".join(lines).rstrip("\n")
            current, lines = line[4:-4], []
        elif current is not None:
            lines.append(line)
    if current is not None:
        entries[current] = "\n".join(lines).rstrip("\n")
    return entries


def write(entries: Dict[str, str]) -> None:
    chunks = [_PREAMBLE]
    for k in sorted(entries):
        chunks.append(_HEADER.format(key=k) + "\n" + entries[k].rstrip("\n") + "\n")
    PATH.write_text("".join(chunks), encoding="utf-8")
