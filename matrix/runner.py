"""The cell runner: the suite in this interpreter on one backend, one process per case.

Each case runs in its own worker process (forked where the platform allows it, so the
compiler is imported once) with a deadline. A case that raises, crashes the process
(a segfault, os._exit) or hangs is recorded as error / timeout; the cell goes on.
"""
from __future__ import annotations

import dis
import faulthandler
import inspect
import io
import multiprocessing
import os
import signal
import sys
import tempfile
import textwrap
import time
import traceback
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from matrix import environment, schema
from matrix.cases import Case, load_suite, select
from matrix.engines import ENGINE_OF_SUBJECT, BackendState, SubjectUnavailable, UnknownBackend, load_engine
from matrix.metrics import summarise
from matrix.outcomes import observe, outcome_difference

DEFAULT_TIMEOUT_S = 60.0
# GPU kernels may round differently from NumPy on the CPU; the CPU backends must match exactly.
TOLERANCE = {"triton": 1e-5}
_LOG_TAIL = 2000


def execute_case(case: Case, engine: Any, backend: str, count_kernels: bool = True,
                 probe: Optional[str] = None) -> schema.Json:
    """Run the call sequence plainly and compiled; compare; collect the events' metrics.

    `probe`: a backend that compiles but cannot execute here; its kernel count replaces
    the (eager) run's.
    """
    started = time.perf_counter()
    engine.reset()
    compiled = engine.compile(case.fn, backend, **case.options)
    # An engine whose kernels are not NumPy's (Dynamo's: torch) says how close is equal.
    tolerance = getattr(engine, "tolerance", None)
    tolerance = TOLERANCE.get(backend, 0.0) if tolerance is None else tolerance
    problem = None
    for index in range(len(case.calls)):
        args, kwargs = case.call_arguments(index)
        plain = observe(case.fn, args, kwargs)
        args, kwargs = case.call_arguments(index)
        got = observe(compiled, args, kwargs)
        found = outcome_difference(plain, got, tolerance)
        if found and problem is None:
            problem = f"call {index}: {found}"
    summary = summarise(engine.events(), count_kernels)
    if probe:
        summary["metrics"]["kernel_count"] = _probe_kernel_count(case, engine, probe)
    status, detail = _status(problem, summary)
    return schema.case_result(case.group, status, detail, calls=len(case.calls),
                              expected_recompiles=case.expected_recompiles,
                              duration_s=round(time.perf_counter() - started, 6),
                              upstream_expected=case.upstream.for_python(environment.python_key())
                              if case.upstream else None,
                              **listings(case.fn), **summary)


def listings(fn: Any) -> Dict[str, Optional[str]]:
    """The function's source and its `dis` listing on this interpreter (nested code
    objects included), for the report; None where the source is not available."""
    try:
        source: Optional[str] = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        source = None
    listing = io.StringIO()
    try:
        dis.dis(fn, file=listing)
    except TypeError:
        return {"source": source, "dis": None}
    return {"source": source, "dis": listing.getvalue()}


def _probe_kernel_count(case: Case, engine: Any, backend: str) -> Optional[int]:
    """Kernels `backend` generates over the call sequence, each call's execution failing."""
    engine.reset()
    compiled = engine.compile(case.fn, backend, **case.options)
    for index in range(len(case.calls)):
        args, kwargs = case.call_arguments(index)
        observe(compiled, args, kwargs)  # raises inside: the backend cannot run here
    counts = [e.get("kernel_count") for e in engine.events()]
    known = [c for c in counts if isinstance(c, int)]
    return sum(known) if known else None


def _status(problem: Optional[str], summary: schema.Json) -> Tuple[str, Optional[str]]:
    if problem:
        return "mismatch", problem
    if not summary["events"]:
        return "unsupported", "no compilation event recorded (the frame ran natively)"
    if summary["fallback_reasons"] and not summary["metrics"]["graph_count"]:
        return "unsupported", "; ".join(summary["fallback_reasons"])
    return "pass", None


def _worker(suite: str, case_name: str, backend: str, engine_spec: str, count_kernels: bool,
            probe: Optional[str], log_path: str, conn: Any) -> None:
    """Child process: run one case and send its result (or the traceback) to the parent."""
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    # A crash's Python traceback then lands in the case's log (a parent such as pytest
    # may have pointed faulthandler at its own copy of stderr).
    faulthandler.enable(file=sys.stderr)
    case: Optional[Case] = None
    try:
        case = {c.name: c for c in load_suite(suite)}[case_name]
        result = execute_case(case, load_engine(engine_spec), backend, count_kernels, probe)
    except BaseException as err:  # anything the case or the compiler throws is data
        result = schema.case_result(
            case.group if case else "?", "error",
            f"{type(err).__name__}: {err}\n{traceback.format_exc()[-_LOG_TAIL:]}",
            calls=len(case.calls) if case else 0,
            expected_recompiles=case.expected_recompiles if case else 0)
    conn.send(result)
    conn.close()


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _exit_description(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


def _tail(path: str) -> str:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return ""
    return text[-_LOG_TAIL:].strip()


class _Running:
    def __init__(self, case: Case, process: Any, conn: Any, log_path: str, deadline: float) -> None:
        self.case = case
        self.process = process
        self.conn = conn
        self.log_path = log_path
        self.deadline = deadline
        self.started = time.perf_counter()


def run_cases(cases: List[Case], *, suite: str, backend: str, engine_spec: str = "compiler",
              jobs: int = 0, timeout_s: float = DEFAULT_TIMEOUT_S, count_kernels: bool = True,
              probe: Optional[str] = None,
              progress: Optional[Callable[[str, schema.Json], None]] = None) -> Dict[str, schema.Json]:
    """Results by case name, in suite order; never raises for a misbehaving case."""
    ctx = _context()
    jobs = jobs or os.cpu_count() or 1
    pending = list(cases)
    running: Dict[Any, _Running] = {}
    results: Dict[str, schema.Json] = {}
    with tempfile.TemporaryDirectory(prefix="matrix-cell-") as logs:
        while pending or running:
            while pending and len(running) < jobs:
                case = pending.pop(0)
                parent_end, child_end = ctx.Pipe(duplex=False)
                log_path = os.path.join(logs, f"{len(results) + len(running)}.log")
                process = ctx.Process(target=_worker, args=(suite, case.name, backend, engine_spec,
                                                            count_kernels, probe, log_path, child_end),
                                      daemon=True)
                process.start()
                child_end.close()  # so a dead child reads as EOF here
                running[parent_end] = _Running(case, process, parent_end, log_path,
                                               time.monotonic() + timeout_s)
            next_deadline = min(r.deadline for r in running.values())
            for conn in wait(list(running), timeout=max(0.0, next_deadline - time.monotonic())):
                item = running.pop(conn)
                results[item.case.name] = _collect(item)
                if progress:
                    progress(item.case.name, results[item.case.name])
            now = time.monotonic()
            for conn, item in list(running.items()):
                if now >= item.deadline:
                    running.pop(conn)
                    _stop(item.process)
                    results[item.case.name] = schema.case_result(
                        item.case.group, "timeout",
                        f"no result after {timeout_s:g} s; the worker was killed\n{_tail(item.log_path)}",
                        calls=len(item.case.calls), expected_recompiles=item.case.expected_recompiles,
                        duration_s=round(timeout_s, 3))
                    conn.close()
                    if progress:
                        progress(item.case.name, results[item.case.name])
    return {c.name: results[c.name] for c in cases}


def _collect(item: _Running) -> schema.Json:
    try:
        result = item.conn.recv()
    except (EOFError, OSError):
        item.process.join(5)
        result = schema.case_result(
            item.case.group, "error",
            f"worker died ({_exit_description(item.process.exitcode)}) before reporting\n"
            f"{_tail(item.log_path)}".strip(),
            calls=len(item.case.calls), expected_recompiles=item.case.expected_recompiles,
            duration_s=round(time.perf_counter() - item.started, 6))
    item.conn.close()
    item.process.join(5)
    if item.process.is_alive():
        _stop(item.process)
    return result


def _stop(process: Any) -> None:
    process.terminate()
    process.join(2)
    if process.is_alive():
        process.kill()
        process.join(2)


def run_cell(*, backend: str, subject: str = schema.SUBJECT_TRACEMATRIX, suite: str = "matrix.cases",
             pattern: Optional[str] = None, engine_spec: Optional[str] = None, jobs: int = 0,
             timeout_s: float = DEFAULT_TIMEOUT_S,
             coverage: Optional[Callable[[], Optional[schema.Json]]] = None,
             progress: Optional[Callable[[str, schema.Json], None]] = None) -> schema.Json:
    """The whole cell document for this interpreter, `backend` and `subject` (whose
    compiler measures the suite; `engine_spec` overrides the subject's engine, for tests)."""
    if subject not in ENGINE_OF_SUBJECT:
        raise ValueError(f"unknown subject {subject!r}; expected one of {', '.join(ENGINE_OF_SUBJECT)}")
    engine_spec = engine_spec or ENGINE_OF_SUBJECT[subject]
    started = time.perf_counter()
    cases = select(load_suite(suite), pattern)
    env = environment.collect()
    try:
        engine = load_engine(engine_spec)  # imported once here, inherited by forked workers
        state = engine.backend_state(backend)
        if hasattr(engine, "environment"):
            env.update(engine.environment())
        if hasattr(engine, "warm_up"):
            for warm in (state.run_as, state.probe):
                if warm is not None:
                    engine.warm_up(warm)
    except UnknownBackend:
        raise
    except SubjectUnavailable as err:
        if err.backends and backend not in err.backends:
            raise UnknownBackend(f"unknown backend {backend!r} for the {subject} subject; "
                                 f"it offers {', '.join(err.backends)}") from None
        state = BackendState(f"{schema.CELL_SUBJECT_UNAVAILABLE_PREFIX}{err}", None)
    except Exception as err:
        state = BackendState(f"{schema.CELL_ERROR_PREFIX}cannot load engine {engine_spec!r}: "
                             f"{type(err).__name__}: {err}", None)
    env["backend_note"] = state.note
    env["cases_ran_on"] = state.run_as
    env["kernels_probed_on"] = state.probe
    if state.run_as is None:
        results = {c.name: schema.case_result(c.group, "error", state.cell_status, calls=len(c.calls),
                                              expected_recompiles=c.expected_recompiles)
                   for c in cases} if state.cell_status.startswith(schema.CELL_ERROR_PREFIX) else {}
    else:
        results = run_cases(cases, suite=suite, backend=state.run_as, engine_spec=engine_spec,
                            jobs=jobs, timeout_s=timeout_s,
                            count_kernels=state.run_as == backend, probe=state.probe,
                            progress=progress)
    return schema.cell_document(
        run_id=environment.run_id(), timestamp=environment.timestamp(),
        machine=environment.machine_name(), python=environment.python_key(), backend=backend,
        cell_status=state.cell_status, environment=env,
        coverage=coverage() if coverage else None,
        duration_s=round(time.perf_counter() - started, 3), cases=results, subject=subject,
        suite={"module": suite, "pattern": pattern, "case_count": len(cases), "engine": engine_spec})
