"""The HTTP routes (Starlette).  Database work runs in Starlette's thread pool; every
error is a JSON object {"error": message} with the status the API promises."""
from __future__ import annotations

from typing import Any, Awaitable, Callable, Dict, Optional, Tuple

import sqlalchemy as sa
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from matrix import schema
from matrix.service import dashboard, queries
from matrix.service.auth import Tokens
from matrix.service.ingest import Cell, Rejected, normalise, parse_body
from matrix.service.storage import Conflict, Store

MAX_BODY_BYTES = 32 * 1024 * 1024   # a full cell of the suite is about 1 MB
DEFAULT_WINDOW_DAYS = 14.0


class _TooLarge(Exception):
    pass


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _TooLarge()
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _TooLarge()
        chunks.append(chunk)
    return b"".join(chunks)


def _error(status: int, message: str, **headers: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers or None)


def _series_query(request: Request) -> queries.SeriesQuery:
    params = request.query_params
    missing = [name for name in ("case", "python", "backend", "metric") if not params.get(name)]
    if missing:
        raise Rejected(400, f"missing query parameter{'s' if len(missing) > 1 else ''} "
                            f"{', '.join(missing)} (history is per case, python, backend, metric)")
    return queries.SeriesQuery(subject=params.get("subject") or schema.SUBJECT_TRACEMATRIX,
                               case=params["case"], python=params["python"], backend=params["backend"],
                               metric=params["metric"], machine=params.get("machine") or None)


def _report_url(request: Request) -> Optional[str]:
    url = request.query_params.get("report_url")
    if not url:
        return None
    if not url.startswith(("https://", "http://")) or len(url) > 2000:
        raise Rejected(422, "field report_url should be an http(s) URL of at most 2000 characters")
    return url


def create_app(engine: sa.engine.Engine, tokens: Tokens, *, max_body: int = MAX_BODY_BYTES,
               window_days: float = DEFAULT_WINDOW_DAYS) -> Starlette:
    """The service as an ASGI application over an already migrated database."""
    store = Store(engine)

    async def post_cell(request: Request) -> Response:
        label = tokens.check(request.headers.get("authorization"))
        if label is None:
            return _error(401, "missing or wrong token: send 'Authorization: Bearer <token>'",
                          **{"WWW-Authenticate": "Bearer"})
        try:
            body = await _read_body(request, max_body)
        except _TooLarge:
            return _error(413, f"body larger than {max_body} bytes")
        def ingest() -> Tuple[Cell, Dict[str, Any]]:   # parsing a large cell is CPU work too
            cell = normalise(parse_body(body))
            return cell, store.ingest(cell, label, report_url)

        try:
            report_url = _report_url(request)
            cell, result = await run_in_threadpool(ingest)
        except Rejected as err:
            return _error(err.status, err.message)
        except Conflict as err:
            return _error(409, str(err))
        except sa.exc.OperationalError as err:
            return _error(503, f"database busy or unreachable, retry: {type(err.orig).__name__}")
        run_id, subject, python, backend, machine = cell.identity
        return JSONResponse(dict(result, run_id=run_id, subject=subject, python=python, backend=backend,
                                 machine=machine, stored="new" if result["created"] else "unchanged"),
                            status_code=201 if result["created"] else 200)

    def _json_query(answer: Callable[[sa.engine.Engine, queries.SeriesQuery], Any]
                    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                query = _series_query(request)
                found = await run_in_threadpool(answer, engine, query)
            except Rejected as err:
                return _error(err.status, err.message)
            return JSONResponse(found)
        return endpoint

    async def trend_rows(request: Request) -> Response:
        subject = request.query_params.get("subject") or schema.SUBJECT_TRACEMATRIX
        rows = await run_in_threadpool(queries.trends, engine, subject)
        return JSONResponse({"subject": subject, "cells": rows})

    async def home(request: Request) -> Response:
        subject = request.query_params.get("subject") or schema.SUBJECT_TRACEMATRIX
        page = await run_in_threadpool(dashboard.dashboard_page, engine, subject, window_days)
        return HTMLResponse(page)

    async def run_page(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        page = await run_in_threadpool(dashboard.run_page, engine, run_id)
        return HTMLResponse(page)

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True})

    return Starlette(routes=[
        Route("/", home),
        Route("/runs/{run_id}", run_page),
        Route("/healthz", health),
        Route("/api/v1/cells", post_cell, methods=["POST"]),
        Route("/api/v1/history", _json_query(queries.history)),
        Route("/api/v1/first-bad", _json_query(queries.first_bad)),
        Route("/api/v1/trends", trend_rows),
    ])
