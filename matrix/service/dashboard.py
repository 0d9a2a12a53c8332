"""The HTML pages: the dashboard (trend charts, open changes, recent runs) and a run page.

jinja2 with autoescaping renders every text; the charts come from `svg`, which escapes
its own text.  Links to runs are relative and URL-quoted, so an odd run id stays a path
segment of this service."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import jinja2
import sqlalchemy as sa
from markupsafe import Markup

from matrix.service import queries, trends

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def dashboard_page(engine: sa.engine.Engine, subject: str, window_days: float, root: str = "/") -> str:
    return _environment().get_template("dashboard.html").render(
        root=root, subject=subject, subjects=queries.subjects(engine),
        charts=[Markup(chart) for chart in trends.charts(
            queries.trends(engine, subject), lambda run_id: f"{root}runs/{quote(run_id, safe='')}")],
        open=queries.open_changes(engine, subject, window_days), window_days=window_days,
        runs=queries.runs(engine))


def run_page(engine: sa.engine.Engine, run_id: str, root: str = "/") -> str:
    return _environment().get_template("run.html").render(
        root=root, run_id=run_id, subjects=queries.subjects(engine), cells=queries.run_cells(engine, run_id))
