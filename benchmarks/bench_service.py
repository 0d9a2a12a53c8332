"""The results service over a synthetic year of nightlies: ingest rate, history and
first-bad query times, on SQLite and PostgreSQL.

    PYTHONPATH=. python benchmarks/bench_service.py [--db FILE_OR_URL] [--days 365]
        [--queries 200] [--http-cells 200]

The year: `--days` runs x 8 interpreters x 3 backends, each cell with every case of the
suite (`python -m matrix list`) and all 8 metrics - 365 x 24 cells x 115 cases x 8 =
8.06 million points.  Values move like real ones: ir_count steps when the CPython patch
version (every 60 days) or NumPy (every 90 days) changes for some cases; compile time
is noise.  Ingest goes through the storage layer (the same code a POST runs after
parsing); `--http-cells` more cells go through the real server (`python -m matrix
serve`, 4 concurrent clients) for the end-to-end rate.  Queries pick random series of
the stored year; times are per query, measured in this process through the query
functions (what the endpoint runs) and through HTTP.  Goals: first-bad < 50 ms,
history < 100 ms.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from matrix import schema  # noqa: E402
from matrix.cases import load_suite  # noqa: E402
from matrix.service import database, queries  # noqa: E402
from matrix.service.ingest import normalise  # noqa: E402
from matrix.service.storage import Store  # noqa: E402

PYTHONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15"]
BACKENDS = ["eager", "numpy", "triton"]
START = datetime.datetime(2026, 1, 1, 3, 0, tzinfo=datetime.timezone.utc)
TOKEN = "bench-token"


def synthetic_cell(day: int, python: str, backend: str, cases: List[Tuple[str, str]],
                   rng: random.Random, run_prefix: str = "night") -> schema.Json:
    patch, numpy_minor = day // 60, day // 90
    results = {}
    for index, (group, name) in enumerate(cases):
        base = 20 + index % 40 + PYTHONS.index(python)
        ir = base + (patch if index % 7 == 0 else 0) + (numpy_minor if index % 11 == 0 else 0)
        metrics = {"ir_count": ir, "graph_node_count": ir // 3, "graph_count": 1 + index % 3,
                   "graph_break_count": index % 3, "guard_count": 2 + index % 5, "recompile_count": index % 2,
                   "kernel_count": (ir // 5) if backend == "triton" else 0,
                   "compile_time_s": round(rng.uniform(0.001, 0.05), 6)}
        results[name] = schema.case_result(group, "pass", metrics=metrics,
                                           ir_opcodes={"LOAD_FAST": ir - 1, "RETURN_VALUE": 1}, calls=1)
    env = {"python_version": f"{python}.{patch}", "python_implementation": "CPython",
           "numpy": f"2.{numpy_minor}.0", "triton": "3.1.0" if backend == "triton" else None,
           "platform": "Linux-x86_64", "git_commit": f"{day:040x}", "git_dirty": False}
    return schema.cell_document(
        run_id=f"{run_prefix}-{day:03d}", timestamp=(START + datetime.timedelta(days=day)).isoformat(),
        machine="bench", python=python, backend=backend, cell_status=schema.CELL_OK, environment=env,
        coverage=None, duration_s=1.0, cases=results)


def _percentiles(times: List[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {statistics.median(ordered) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, max {ordered[-1] * 1000:.1f} ms"


def ingest_year(store: Store, days: int, cases: List[Tuple[str, str]]) -> Dict[str, float]:
    rng = random.Random(1)
    cells = points = 0
    started = time.perf_counter()
    for day in range(days):
        for python in PYTHONS:
            for backend in BACKENDS:
                result = store.ingest(normalise(synthetic_cell(day, python, backend, cases, rng)), "bench")
                cells += 1
                points += result["points"]
        if day % 30 == 29:
            elapsed = time.perf_counter() - started
            print(f"  day {day + 1}: {cells} cells, {points} points, {cells / elapsed:.1f} cells/s", flush=True)
    elapsed = time.perf_counter() - started
    return {"cells": cells, "points": points, "seconds": elapsed}


def time_queries(engine: Any, cases: List[Tuple[str, str]], count: int) -> Dict[str, List[float]]:
    rng = random.Random(2)
    times: Dict[str, List[float]] = {"history": [], "first_bad": []}
    for _ in range(count):
        query = queries.SeriesQuery("tracematrix", rng.choice(cases)[1], rng.choice(PYTHONS),
                                    rng.choice(BACKENDS), rng.choice(schema.GATED_METRICS), "bench")
        for name, function in (("history", queries.history), ("first_bad", queries.first_bad)):
            started = time.perf_counter()
            function(engine, query)
            times[name].append(time.perf_counter() - started)
    return times


def _serve(db: str, workdir: Path) -> Tuple[subprocess.Popen, str]:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (workdir / "tokens").write_text(TOKEN + "\n")
    process = subprocess.Popen([sys.executable, "-m", "matrix", "serve", "--db", db, "--token-file",
                                str(workdir / "tokens"), "--port", str(port), "--log-level", "warning"],
                               cwd=str(ROOT), env=dict(os.environ, PYTHONPATH=str(ROOT)))
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(url + "/healthz", timeout=1).close()
            return process, url
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the server did not start")


def http_phase(db: str, cases: List[Tuple[str, str]], cells: int, count: int, workdir: Path) -> None:
    """`cells` cells posted by 4 clients (none: only the queries), then `count` queries."""
    from matrix import upload
    process, url = _serve(db, workdir)
    try:
        rng = random.Random(3)
        if cells:
            _post_cells(url, cases, cells, rng, upload)
        _time_http_queries(url, cases, count, rng)
    finally:
        process.terminate()
        process.wait(30)


def _post_cells(url: str, cases: List[Tuple[str, str]], cells: int, rng: random.Random, upload: Any) -> None:
    bodies = [json.dumps(synthetic_cell(day, python, "eager", cases, rng, "http")).encode()
              for day in range(cells // len(PYTHONS) + 1) for python in PYTHONS][:cells]
    started = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        statuses = list(pool.map(lambda b: upload.post(upload.endpoint(url), TOKEN, b)[0], bodies))
    elapsed = time.perf_counter() - started
    assert statuses.count(201) == len(bodies), statuses
    print(f"HTTP ingest: {len(bodies)} cells ({len(bodies) * len(cases) * 8} points) by 4 clients in "
          f"{elapsed:.1f} s: {len(bodies) / elapsed:.1f} cells/s")


def _time_http_queries(url: str, cases: List[Tuple[str, str]], count: int, rng: random.Random) -> None:
    times: Dict[str, List[float]] = {"history": [], "first-bad": []}
    for _ in range(count):
        params = urllib.parse.urlencode({"case": rng.choice(cases)[1], "python": rng.choice(PYTHONS),
                                         "backend": rng.choice(BACKENDS), "metric": "ir_count",
                                         "machine": "bench"})
        for name in times:
            started = time.perf_counter()
            urllib.request.urlopen(f"{url}/api/v1/{name}?{params}", timeout=30).read()
            times[name].append(time.perf_counter() - started)
    for name, found in times.items():
        print(f"HTTP {name}: {_percentiles(found)} over {count} queries")
    started = time.perf_counter()
    urllib.request.urlopen(url + "/", timeout=300).read()
    print(f"HTTP dashboard (/): {time.perf_counter() - started:.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default=None, help="SQLite file or postgresql:// URL (default: a temporary SQLite file)")
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--http-cells", type=int, default=200)
    parser.add_argument("--no-ingest", action="store_true",
                        help="query a database an earlier run of this benchmark filled (needs --db)")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench-service-"))
    db = args.db or str(workdir / "history.sqlite")
    cases = [(c.group, c.name) for c in load_suite("matrix.cases")]
    engine = database.connect(db)
    database.migrate(engine)
    print(f"database: {engine.url.render_as_string(hide_password=True)}; {args.days} days x {len(PYTHONS)} "
          f"interpreters x {len(BACKENDS)} backends x {len(cases)} cases x {len(schema.METRICS)} metrics")
    if args.no_ingest:
        if not args.db:
            parser.error("--no-ingest needs --db naming a database this benchmark filled")
    else:
        done = ingest_year(Store(engine), args.days, cases)
        print(f"storage ingest: {done['cells']} cells, {done['points']} points in {done['seconds']:.1f} s: "
              f"{done['cells'] / done['seconds']:.1f} cells/s, {done['points'] / done['seconds']:.0f} points/s")
    times = time_queries(engine, cases, args.queries)
    for name, found in times.items():
        print(f"{name} (query function, {args.days} points a series): {_percentiles(found)} over {args.queries} queries")
    engine.dispose()
    http_phase(db, cases, 0 if args.no_ingest else args.http_cells, min(args.queries, 100), workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
