"""Reading history: the points of one series, its first-bad run, and what the dashboard
shows (trends per interpreter, open changes, recent runs)."""
from __future__ import annotations

import dataclasses
import datetime
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import sqlalchemy as sa

from matrix import schema
from matrix.service import cell_cache, changes
from matrix.service.ingest import Rejected
from matrix.service.tables import case_results, cells, points, series


@dataclass(frozen=True)
class SeriesQuery:
    subject: str
    case: str
    python: str
    backend: str
    metric: str
    machine: Optional[str] = None

    def describe(self) -> str:
        where = f" on machine {self.machine}" if self.machine else ""
        return (f"{self.metric} of case {self.case!r} ({self.subject}) on Python {self.python}, "
                f"backend {self.backend}{where}")


def _series_rows(conn: sa.engine.Connection, query: SeriesQuery) -> List[Any]:
    conditions = [series.c.subject == query.subject, series.c.python == query.python,
                  series.c.backend == query.backend, series.c.case_name == query.case,
                  series.c.metric == query.metric]
    if query.machine is not None:
        conditions.append(series.c.machine == query.machine)
    return list(conn.execute(sa.select(series.c.id, series.c.machine).where(*conditions)))


def _number(value: Optional[float]) -> Any:
    return int(value) if value is not None and float(value).is_integer() else value


def _point(cell: Any, details: cell_cache.Details, value: Optional[float], status: Optional[str],
           metric: str) -> Dict[str, Any]:
    environment, metric_versions = details
    return {"run_id": cell.run_id, "timestamp": cell.timestamp, "value": _number(value),
            "status": status, "machine": cell.machine, "cell_status": cell.cell_status,
            "environment": environment, "metric_version": metric_versions.get(metric),
            "schema_version": cell.schema_version, "report_url": cell.report_url, "cell_id": cell.cell_id}


# A point's cell columns; its environment and metric versions come from `cell_cache`.
_CELL_COLUMNS = (cells.c.id.label("cell_id"), cells.c.run_id, cells.c.timestamp, cells.c.machine,
                 cells.c.cell_status, cells.c.schema_version, cells.c.report_url)


def history(engine: sa.engine.Engine, query: SeriesQuery) -> Dict[str, Any]:
    """Every point of the series in time order (all machines unless one is named);
    Rejected(404) for a series with none."""
    with engine.connect() as conn:
        found = _series_rows(conn, query)
        if not found:
            raise Rejected(404, f"no points for {query.describe()}")
        rows = conn.execute(
            sa.select(points.c.value, case_results.c.status, *_CELL_COLUMNS)
            .select_from(points.join(cells, cells.c.id == points.c.cell_id)
                         .outerjoin(case_results, sa.and_(case_results.c.cell_id == cells.c.id,
                                                          case_results.c.case_name == query.case)))
            .where(points.c.series_id.in_([r.id for r in found]))
            .order_by(cells.c.timestamp, cells.c.id)).all()
        details = cell_cache.for_engine(engine).details(conn, (row.cell_id for row in rows))
        found_points = [_point(row, details[row.cell_id], row.value, row.status, query.metric) for row in rows]
    return {"series": vars(query), "machines": sorted({r.machine for r in found}), "points": found_points}


def _answers(conn: sa.engine.Connection, wanted: List[Tuple[SeriesQuery, int]],
             since: Optional[str] = None) -> List[Dict[str, Any]]:
    """First-bad answers for many series at once (each query names its machine): one query
    for every value, one for the two runs' details of each series, one for their cases.

    `since`: read only the points from then on - exact when the value then differs from
    the value now (the latest change point, and the point before it, lie after it)."""
    values: Dict[int, List[Any]] = {}
    conditions = [points.c.series_id.in_([sid for _, sid in wanted])]
    if since is not None:
        conditions.append(cells.c.timestamp >= since)
    rows = conn.execute(sa.select(points.c.series_id, points.c.value, points.c.cell_id)
                        .select_from(points.join(cells, cells.c.id == points.c.cell_id))
                        .where(*conditions)
                        .order_by(points.c.series_id, cells.c.timestamp, cells.c.id))
    for row in rows:
        values.setdefault(row.series_id, []).append(row)
    plans = []
    for query, series_id in wanted:
        series_values = values[series_id]
        good_index, bad_index = changes.change_point([row.value for row in series_values])
        good = series_values[good_index] if good_index is not None else None
        plans.append((query, good, series_values[bad_index], len(series_values)))
    cell_ids = {row.cell_id for _, good, bad, _ in plans for row in (good, bad) if row is not None}
    details = {row.cell_id: row for row in conn.execute(sa.select(*_CELL_COLUMNS).where(cells.c.id.in_(cell_ids)))}
    decoded = cell_cache.for_engine(conn.engine).details(conn, cell_ids)
    cases = {(row.cell_id, row.case_name): row for row in conn.execute(
        sa.select(case_results.c.cell_id, case_results.c.case_name, case_results.c.status,
                  case_results.c.ir_opcodes)
        .where(case_results.c.cell_id.in_(cell_ids), case_results.c.case_name.in_({q.case for q, _ in wanted})))}
    answers = []
    for query, good_row, bad_row, count in plans:
        def point(row: Any) -> Dict[str, Any]:
            case = cases.get((row.cell_id, query.case))
            return _point(details[row.cell_id], decoded[row.cell_id], row.value, case.status if case else None,
                          query.metric)

        bad = point(bad_row)
        good = point(good_row) if good_row is not None else None
        changed = changes.what_changed(good, bad) if good else []
        opcodes = None
        if good and query.metric == "ir_count":
            before, after = cases.get((good["cell_id"], query.case)), cases.get((bad["cell_id"], query.case))
            opcodes = changes.opcode_explanation(good, bad, before.ir_opcodes if before else None,
                                                 after.ir_opcodes if after else None)
        answers.append({"series": vars(query), "current_value": bad["value"], "first_bad": bad,
                        "last_good": good, "changed": changed, "opcodes": opcodes, "points": count,
                        "summary": changes.summary(query.metric, good, bad, changed)})
    return answers


def first_bad(engine: sa.engine.Engine, query: SeriesQuery) -> Dict[str, Any]:
    """The first run with the series' current value, the last good run before it, and
    every difference between the two.  Rejected(404) for an unknown series, (400) when
    several machines' points would be mixed."""
    with engine.connect() as conn:
        found = _series_rows(conn, query)
        if not found:
            raise Rejected(404, f"no points for {query.describe()}")
        machines = sorted({r.machine for r in found})
        if len(machines) > 1:
            raise Rejected(400, f"{query.describe()} has points from machines {', '.join(machines)}; "
                                f"name one with machine=")
        (answer,) = _answers(conn, [(dataclasses.replace(query, machine=machines[0]), found[0].id)])
        return answer


# ----------------------------------------------------------------------------- dashboard
def trends(engine: sa.engine.Engine, subject: str, since: Optional[str] = None) -> List[Dict[str, Any]]:
    """Per cell, in time order: the column and its summed ir_count (the trend plots' data)."""
    conditions = [cells.c.subject == subject]
    if since:
        conditions.append(cells.c.timestamp >= since)
    with engine.connect() as conn:
        rows = conn.execute(sa.select(cells.c.python, cells.c.backend, cells.c.machine, cells.c.run_id,
                                      cells.c.timestamp, cells.c.ir_total, cells.c.cell_status)
                            .where(*conditions).order_by(cells.c.timestamp, cells.c.id))
        return [dict(row._mapping) for row in rows]


def subjects(engine: sa.engine.Engine) -> List[str]:
    with engine.connect() as conn:
        return [r[0] for r in conn.execute(sa.select(cells.c.subject).distinct().order_by(cells.c.subject))]


def _days_before(timestamp: str, days: float) -> str:
    moment = datetime.datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%S.%fZ")
    return (moment - datetime.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def open_changes(engine: sa.engine.Engine, subject: str, window_days: float = 14.0,
                 metrics: Sequence[str] = schema.GATED_METRICS, limit: int = 100) -> List[Dict[str, Any]]:
    """Series whose newest value differs from their value `window_days` before the newest
    cell of their column (or from the column's first cell when it is younger), each with
    its exact first-bad answer, newest first (at most `limit`).  A change that was
    reverted inside the window is not open."""
    with engine.connect() as conn:
        columns = conn.execute(
            sa.select(cells.c.python, cells.c.backend, cells.c.machine, sa.func.max(cells.c.timestamp))
            .where(cells.c.subject == subject).group_by(cells.c.python, cells.c.backend, cells.c.machine))
        pairs = []
        for python, backend, machine, newest in columns:
            column = [cells.c.subject == subject, cells.c.python == python, cells.c.backend == backend,
                      cells.c.machine == machine]
            latest = conn.execute(sa.select(cells.c.id).where(*column, cells.c.timestamp == newest)
                                  .order_by(cells.c.id.desc()).limit(1)).scalar_one()
            reference = conn.execute(
                sa.select(cells.c.id).where(*column, cells.c.timestamp <= _days_before(newest, window_days))
                .order_by(cells.c.timestamp.desc(), cells.c.id.desc()).limit(1)).scalar()
            if reference is None:
                reference = conn.execute(sa.select(cells.c.id).where(*column)
                                         .order_by(cells.c.timestamp, cells.c.id).limit(1)).scalar_one()
            if reference != latest:
                pairs.append((latest, reference))
        answered = []
        for latest, reference in pairs:
            found: List[Tuple[SeriesQuery, int]] = []
            values = conn.execute(
                sa.select(points.c.cell_id, points.c.value, points.c.series_id, series.c.case_name,
                          series.c.metric, series.c.python, series.c.backend, series.c.machine)
                .select_from(points.join(series, series.c.id == points.c.series_id))
                .where(points.c.cell_id.in_([latest, reference]), series.c.metric.in_(list(metrics))))
            by_series: Dict[tuple, Dict[int, Any]] = {}
            for row in values:
                key = (row.series_id, row.case_name, row.python, row.backend, row.machine, row.metric)
                by_series.setdefault(key, {})[row.cell_id] = row.value
            for key, pair in sorted(by_series.items()):
                if pair.get(latest) != pair.get(reference):
                    found.append((SeriesQuery(subject, key[1], key[2], key[3], key[5], key[4]), key[0]))
            if found:
                since = conn.execute(sa.select(cells.c.timestamp).where(cells.c.id == reference)).scalar_one()
                answered += [dict(vars(query), answer=answer)
                             for (query, _), answer in zip(found, _answers(conn, found, since))]
    answered.sort(key=lambda item: item["answer"]["first_bad"]["timestamp"], reverse=True)
    return answered[:limit]


def runs(engine: sa.engine.Engine, limit: int = 30) -> List[Dict[str, Any]]:
    """The newest runs: id, time, cell count, failed cases, a report link if one was posted."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(cells.c.run_id, sa.func.min(cells.c.timestamp).label("timestamp"),
                      sa.func.count().label("cells"), sa.func.sum(cells.c.failed_count).label("failed"),
                      sa.func.max(cells.c.report_url).label("report_url"))
            .group_by(cells.c.run_id).order_by(sa.func.min(cells.c.timestamp).desc()).limit(limit))
        return [dict(row._mapping) for row in rows]


def run_cells(engine: sa.engine.Engine, run_id: str) -> List[Dict[str, Any]]:
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(cells.c.id, cells.c.subject, cells.c.python, cells.c.backend, cells.c.machine,
                      cells.c.timestamp, cells.c.cell_status, cells.c.case_count, cells.c.failed_count,
                      cells.c.ir_total, cells.c.environment, cells.c.report_url, cells.c.schema_version)
            .where(cells.c.run_id == run_id).order_by(cells.c.subject, cells.c.python, cells.c.backend))
        found = [dict(row._mapping) for row in rows]
        ids = [c["id"] for c in found]
        failures = conn.execute(sa.select(case_results.c.cell_id, case_results.c.case_name,
                                          case_results.c.status, case_results.c.detail)
                                .where(case_results.c.cell_id.in_(ids),
                                       case_results.c.status.in_(schema.FAILED_CASE_STATUSES))) if ids else []
        by_cell: Dict[int, List[Dict[str, Any]]] = {}
        for row in failures:
            by_cell.setdefault(row.cell_id, []).append(dict(row._mapping))
    for cell in found:
        cell["failures"] = by_cell.get(cell["id"], [])
    return found
