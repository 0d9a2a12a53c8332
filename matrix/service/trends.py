"""Trend charts of summed ir_count, one per interpreter, for the dashboard and for the
static report (`python -m matrix report --history`).  Standard library only, so the
report can draw them without the service's dependencies.

A trend row is one stored cell: python, backend, machine, run_id, timestamp (the
service's UTC text), ir_total - what `GET /api/v1/trends` answers.
"""
from __future__ import annotations

import json
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

from matrix.order import backend_key, version_key
from matrix.service import svg

class HistoryUnavailable(ValueError):
    """The history source cannot be read; the message says which and why."""


def charts(rows: List[Dict[str, Any]], link: Callable[[str], str]) -> List[str]:
    """SVG markup, one chart per interpreter; a line per backend (and machine, where the
    rows come from several); `link(run_id)` is where each point leads."""
    machines = {row["machine"] for row in rows}
    by_python: Dict[str, Dict[Tuple[str, str], List[svg.Point]]] = {}
    for row in rows:
        label = f"{row['run_id']} · {row['timestamp'][:19]}Z · ir_count total {row['ir_total']}"
        by_python.setdefault(row["python"], {}).setdefault((row["backend"], row["machine"]), []).append(
            svg.Point(row["timestamp"], row["ir_total"], link(row["run_id"]), label))
    made = []
    for python in sorted(by_python, key=version_key):
        ordered = sorted(by_python[python].items(), key=lambda item: (backend_key(item[0][0]), item[0][1]))
        lines = [svg.Line(backend if len(machines) == 1 else f"{backend} @ {machine}", points)
                 for (backend, machine), points in ordered]
        made.append(svg.line_chart(f"Python {python}", lines))
    return made


def load(source: str, subject: str = "tracematrix", timeout: float = 30.0) -> Tuple[List[Dict[str, Any]], str]:
    """(trend rows, the service's base URL or '') from a service URL or a JSON file of the
    same shape as `GET /api/v1/trends`."""
    if source.startswith(("http://", "https://")):
        base = source.rstrip("/")
        url = f"{base}/api/v1/trends?{urllib.parse.urlencode({'subject': subject})}"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as answer:
                doc = json.load(answer)
        except (OSError, ValueError) as err:
            raise HistoryUnavailable(f"history from {url}: {getattr(err, 'reason', err)}") from None
    else:
        base = ""
        try:
            doc = json.loads(Path(source).read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise HistoryUnavailable(f"history file {source}: {err}") from None
    rows = doc.get("cells") if isinstance(doc, dict) else None
    needed = ("python", "backend", "machine", "run_id", "timestamp", "ir_total")
    if not isinstance(rows, list) or not all(isinstance(r, dict) and all(k in r for k in needed) for r in rows):
        raise HistoryUnavailable(f"history {source}: expected {{\"cells\": [...]}} with {', '.join(needed)} "
                                 f"in every row (what GET /api/v1/trends answers)")
    return rows, base
