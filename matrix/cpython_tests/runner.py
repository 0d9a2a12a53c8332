"""The parent: each module in child processes (plain, then compiled), timeouts, comparison.

Every run of a module is a fresh `python -m matrix.cpython_tests.child` in its own process
group, its own empty working folder, with `PYTHONHASHSEED` fixed (0 unless set) so that
both runs of a module see the same hash order.  A run that passes its timeout is killed
with its whole process group and recorded as timed out; one that dies (a signal, a
non-zero exit) before its last line is recorded as crashed; either way the events file
names the test that was running, and the other modules go on.  `--jobs` modules run at
once (threads, each waiting on its own child).
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from matrix.cpython_tests import cell, modules as modules_mod

DEFAULT_TIMEOUT_S = 120.0
PROJECT_ROOT = Path(__file__).resolve().parents[2]
_LOG_TAIL_LINES = 10
_STACK_GRACE_S = 2.0        # for a timed-out child to write its stacks (faulthandler, SIGUSR1)
_DETAIL_CHARS = 1500

Progress = Callable[[str, cell.Json], None]


@dataclass
class Options:
    backend: str = "eager"
    timeout_s: float = DEFAULT_TIMEOUT_S
    jobs: int = 1
    package: str = modules_mod.CPYTHON_PACKAGE
    paths: Sequence[str] = ()            # prepended to the child's sys.path (for --package)
    engine: Optional[str] = None         # module:function instead of compiler.compile (tests)
    python: str = sys.executable


@dataclass
class Run:
    """What one child process left: outcomes by test id (in order) and how it ended."""
    mode: str
    outcomes: Dict[str, Tuple[str, Optional[str]]] = field(default_factory=dict)
    complete: bool = False
    timed_out: bool = False
    ending: str = ""                     # "exit code 0", "killed by signal SIGABRT", ...
    stopped: Optional[str] = None        # started, never finished
    skipped: Optional[str] = None
    error: Optional[str] = None
    compiled_tests: int = 0
    compiler: Optional[Dict[str, Any]] = None
    duration_s: float = 0.0
    log_tail: str = ""

    def count(self, outcome: str) -> int:
        return sum(1 for o, _ in self.outcomes.values() if o == outcome)


class _Children:
    """The running children's process groups, so an interrupt can stop them all."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: Dict[int, subprocess.Popen] = {}
        self.stopping = False

    def kill_all(self) -> None:
        with self.lock:
            self.stopping = True
            for process in self.running.values():
                _kill_group(process)


_children = _Children()


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _dump_stacks(process: subprocess.Popen) -> None:
    """Ask a hung child for its Python stacks (the child registered faulthandler on
    SIGUSR1), so that the reason shows where it hung."""
    if not hasattr(signal, "SIGUSR1"):
        return
    try:
        os.kill(process.pid, signal.SIGUSR1)
        process.wait(timeout=_STACK_GRACE_S)
    except (OSError, subprocess.TimeoutExpired):
        pass


def _ending(returncode: Optional[int]) -> str:
    if returncode is not None and returncode < 0:
        try:
            return f"killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def _child_env() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PROJECT_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("PYTHONHASHSEED", "0")
    env.pop("PYTHONSTARTUP", None)
    return env


def _text(value: Any) -> Optional[str]:
    """A string any UTF-8 writer accepts (test messages may hold lone surrogates)."""
    if value is None:
        return None
    return str(value).encode("utf-8", "backslashreplace").decode("utf-8")


def read_events(path: Path, run: Run) -> None:
    """Fill `run` from the child's JSON lines (a torn last line is ignored)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return
    started: Optional[str] = None
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        if "start" in event:
            started = _text(event["start"])
        elif "test" in event:
            test = str(_text(event["test"]))
            key, n = test, 2
            while key in run.outcomes:         # the same id run twice: keep both
                key, n = f"{test} (run {n})", n + 1
            outcome = event.get("outcome")
            run.outcomes[key] = (outcome if outcome in cell.OUTCOMES else "error", _text(event.get("detail")))
            if started == test:
                started = None
        elif "compiled" in event:
            run.compiled_tests += int(event.get("compiled") or 0)
        elif "skipped" in event:
            run.skipped = _text(event["skipped"])
        elif "error" in event:
            run.error = _text(event["error"])
        elif event.get("done"):
            run.complete = True
            run.compiler = event.get("compiler")
    run.stopped = started


def _tail(path: Path) -> str:
    try:
        with open(str(path), "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 8192))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = text.strip().splitlines()
    # faulthandler's report (a crash, or the stacks a timed-out child was asked for) starts
    # with the fatal error or the current thread, innermost frame first: keep its top
    marks = [i for i, line in enumerate(lines)
             if line.startswith(("Fatal Python error", "Current thread 0x", "Stack (most recent call first)"))]
    return "\n".join(lines[marks[-1]:marks[-1] + _LOG_TAIL_LINES] if marks else lines[-_LOG_TAIL_LINES:])


def run_child(module: str, mode: str, options: Options, workdir: Path) -> Run:
    """One child process for `module` in `mode`; never raises for what the child does."""
    run = Run(mode)
    events = workdir / f"{mode}.jsonl"
    log = workdir / f"{mode}.log"
    cwd = workdir / f"{mode}-cwd"
    cwd.mkdir()
    command = [options.python, "-X", "faulthandler", "-m", "matrix.cpython_tests.child",
               "--module", module, "--mode", mode, "--backend", options.backend,
               "--package", options.package, "--out", str(events)]
    for path in options.paths:
        command += ["--path", str(path)]
    if options.engine:
        command += ["--engine", options.engine]
    started = time.perf_counter()
    with open(str(log), "wb") as log_file:
        with _children.lock:
            if _children.stopping:
                run.error = "interrupted"
                return run
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log_file,
                                       stderr=subprocess.STDOUT, cwd=str(cwd), env=_child_env(),
                                       start_new_session=True)
            _children.running[process.pid] = process
        try:
            process.wait(timeout=options.timeout_s)
        except subprocess.TimeoutExpired:
            run.timed_out = True
            _dump_stacks(process)
            _kill_group(process)
            process.wait()
        finally:
            _kill_group(process)            # whatever the tests left running in its group
            with _children.lock:
                _children.running.pop(process.pid, None)
    run.duration_s = round(time.perf_counter() - started, 3)
    run.ending = f"no result after {options.timeout_s:g} s, killed" if run.timed_out else _ending(process.returncode)
    read_events(events, run)
    if run.timed_out:
        run.complete = False
    if not run.complete:
        run.log_tail = _tail(log)
    return run


def _shorten(text: str) -> str:
    return text if len(text) <= _DETAIL_CHARS else text[:_DETAIL_CHARS] + " ..."


def _change(test: str, plain: Tuple[str, Optional[str]], compiled: Tuple[str, Optional[str]]) -> cell.Json:
    lines = [f"compiled {compiled[0]}" + (f": {compiled[1]}" if compiled[1] else "")]
    if plain[1]:
        lines.append(f"plain {plain[0]}: {plain[1]}")
    return {"test": test, "plain": plain[0], "compiled": compiled[0], "detail": _shorten("\n".join(lines))}


def compare(plain: Run, compiled: Run) -> Tuple[List[cell.Json], List[cell.Json]]:
    """(regressions, improvements): tests that pass (or skip, or fail as expected) plainly
    and do otherwise compiled; tests that fail plainly and pass compiled.  A test absent
    from a compiled run that finished is a regression ('missing'); one that a compiled run
    never reached because it crashed, timed out or broke off (an error outside any test)
    is not compared: the module's status says what stopped it."""
    regressions: List[cell.Json] = []
    improved: List[cell.Json] = []
    for test, seen in plain.outcomes.items():
        got = compiled.outcomes.get(test)
        if got is None:
            if not compiled.complete or compiled.error:
                continue
            got = ("missing", "the compiled run did not run this test")
        if seen[0] in cell.GOOD_OUTCOMES and got[0] != seen[0]:
            regressions.append(_change(test, seen, got))
        elif seen[0] in ("fail", "error") and got[0] == "pass":
            improved.append(_change(test, seen, got))
    return regressions, improved


def _died(run: Run) -> str:
    where = f" while running {run.stopped}" if run.stopped else (
        " before any test started" if not run.outcomes else " between tests")
    tail = f"\n{run.log_tail}" if run.log_tail else ""
    return f"the {run.mode} run {'timed out' if run.timed_out else 'crashed'} ({run.ending}){where}{tail}"


def judge(plain: Run, compiled: Optional[Run]) -> cell.Json:
    """The module's row from its two runs (compiled is None when the plain run ruled it out)."""
    counts = dict(tests=len(plain.outcomes), plain_passed=plain.count("pass"), plain_skipped=plain.count("skip"),
                  plain_duration_s=plain.duration_s)
    if plain.skipped:
        return cell.row("skipped", plain.skipped, **counts)
    if not plain.complete:
        status = "timed_out" if plain.timed_out else "crashed"
        return cell.row(status, _died(plain), stopped=plain.stopped, **counts)
    if plain.error:
        return cell.row("error", f"the plain run: {plain.error}", **counts)
    assert compiled is not None
    regressions, improved = compare(plain, compiled)
    counts.update(compiled_tests=compiled.compiled_tests, compiled_passed=compiled.count("pass"),
                  improvements=len(improved), compiled_duration_s=compiled.duration_s,
                  compiler=compiled.compiler, regressions=regressions, improved=improved)
    if not compiled.complete:
        status = "timed_out" if compiled.timed_out else "crashed"
        return cell.row(status, _died(compiled), stopped=compiled.stopped, **counts)
    if compiled.error or compiled.skipped:
        # the plain run of the same module got through: the compiled one broke outside any test
        return cell.row("crashed", f"the compiled run: {compiled.error or compiled.skipped}", **counts)
    if regressions:
        return cell.row("regressed", f"{len(regressions)} of {len(plain.outcomes)} tests regressed", **counts)
    if improved:
        return cell.row("changed", f"{len(improved)} of {len(plain.outcomes)} tests pass compiled, not plainly",
                        **counts)
    return cell.row("passed", None, **counts)


def run_module(module: str, options: Options) -> cell.Json:
    workdir = Path(tempfile.mkdtemp(prefix=f"cpython-tests-{module}-"))
    try:
        plain = run_child(module, "plain", options, workdir)
        compiled = None
        if plain.complete and not (plain.skipped or plain.error):
            compiled = run_child(module, "compiled", options, workdir)
        return judge(plain, compiled)
    finally:
        shutil.rmtree(str(workdir), ignore_errors=True)


def run_modules(names: Sequence[str], options: Options, progress: Optional[Progress] = None) -> Dict[str, cell.Json]:
    """Rows by module, in the order given; an interrupt stops every child and re-raises."""
    rows: Dict[str, cell.Json] = {}
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, options.jobs))
    try:
        futures = {pool.submit(run_module, name, options): name for name in names}
        for future in concurrent.futures.as_completed(futures):
            name = futures[future]
            rows[name] = future.result()
            if progress:
                progress(name, rows[name])
    except BaseException:
        _children.kill_all()
        pool.shutdown(wait=False)
        raise
    pool.shutdown(wait=True)
    return {name: rows[name] for name in names}


def run(requested: Optional[Sequence[str]], *, run_all: bool = False, options: Optional[Options] = None,
        progress: Optional[Progress] = None) -> cell.Json:
    """The whole document for this interpreter.  Raises modules.UnknownModule for bad names
    (before anything runs)."""
    from matrix import environment      # numpy (environment.collect): the suite needs it anyway
    import opcode_tables
    from matrix import schema

    options = options or Options()
    started = time.perf_counter()
    names, skipped = modules_mod.resolve(requested, run_all=run_all, package=options.package, paths=options.paths)
    rows = run_modules(names, options, progress)
    for name, reason in skipped.items():
        rows[name] = cell.row("skipped", reason)
        if progress:
            progress(name, rows[name])
    wanted = names if run_all else (modules_mod.DEFAULT_MODULES if requested is None else requested)
    order = [name for name in dict.fromkeys(wanted) if name in rows]
    env = environment.collect()
    env.update(cpython_tests_package=options.package, hash_seed=_child_env()["PYTHONHASHSEED"],
               jobs=options.jobs, cpython_tests_engine=options.engine or "compiler.compile")
    return cell.build(
        {name: rows[name] for name in order},
        run_id=environment.run_id(), timestamp=environment.timestamp(), machine=environment.machine_name(),
        python=environment.python_key(), backend=options.backend,
        cell_status=schema.CELL_OK if opcode_tables.has_current_table() else schema.CELL_NO_TABLE,
        environment=env, duration_s=round(time.perf_counter() - started, 3), timeout_s=options.timeout_s,
        selection="all" if run_all else ("default" if requested is None else "modules"))
