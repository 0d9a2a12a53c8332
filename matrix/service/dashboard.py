"""The HTML pages: the dashboard (trend charts, open changes, recent runs) and a run page.

jinja2 with autoescaping renders every text; the charts come from `svg`, which escapes
its own text.  Links to runs are relative and URL-quoted, so an odd run id stays a path
segment of this service."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List
from urllib.parse import quote

import jinja2
import sqlalchemy as sa
from markupsafe import Markup

from matrix.compare import backend_key, version_key
from matrix.service import queries, svg

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def charts(rows: List[Dict[str, Any]], root: str = "/") -> List[Markup]:
    """One chart per interpreter; one line per backend (and machine, where several)."""
    by_python: Dict[str, Dict[tuple, List[svg.Point]]] = {}
    machines = {row["machine"] for row in rows}
    for row in rows:
        line = (row["backend"], row["machine"])
        label = f"{row['run_id']} · {row['timestamp'][:19]}Z · ir_count total {row['ir_total']}"
        by_python.setdefault(row["python"], {}).setdefault(line, []).append(svg.Point(
            row["timestamp"], row["ir_total"], f"{root}runs/{quote(row['run_id'], safe='')}", label))
    made = []
    for python in sorted(by_python, key=version_key):
        lines = [svg.Line(backend if len(machines) == 1 else f"{backend} @ {machine}", points)
                 for (backend, machine), points in sorted(by_python[python].items(),
                                                          key=lambda item: (backend_key(item[0][0]), item[0][1]))]
        made.append(Markup(svg.line_chart(f"Python {python}", lines)))
    return made


def dashboard_page(engine: sa.engine.Engine, subject: str, window_days: float, root: str = "/") -> str:
    return _environment().get_template("dashboard.html").render(
        root=root, subject=subject, subjects=queries.subjects(engine),
        charts=charts(queries.trends(engine, subject), root),
        open=queries.open_changes(engine, subject, window_days), window_days=window_days,
        runs=queries.runs(engine))


def run_page(engine: sa.engine.Engine, run_id: str, root: str = "/") -> str:
    return _environment().get_template("run.html").render(
        root=root, run_id=run_id, subjects=queries.subjects(engine), cells=queries.run_cells(engine, run_id))
