"""`python -m matrix cpython-tests`: the command line (parsing needs the standard library only).

Exit status: 0 when no module regressed, crashed or timed out; 1 otherwise; 2 for bad
input (an unknown module name, an unknown backend, bad options), with a one-line message.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, List, Optional

from matrix.cpython_tests import cell

SHOWN_PER_MODULE = 3


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "cpython-tests", help="run CPython's own Lib/test modules plainly and with every test method compiled",
        description="Run CPython's Lib/test modules on this interpreter, each module in its own child "
                    "process: first plainly, then with every test method compiled; record the tests "
                    "whose outcome differs. Exit 0: no regression, crash or timeout; 1: some; 2: bad input.")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--modules", default=None, metavar="A,B",
                       help="comma-separated module names (default: the suite's default list)")
    which.add_argument("--all", action="store_true", help="every test_* module of this interpreter")
    parser.add_argument("--json", default=None, metavar="OUT",
                        help="write the cell document here, e.g. reports/results/3.11-cpython-tests.json")
    parser.add_argument("--jobs", type=int, default=0, help="modules at once (default: one per CPU)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per run of a module (default 120; each module runs twice)")
    parser.add_argument("--backend", default="eager", help="the compiler's backend (default eager)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--package", default="test",
                        help="the package holding the test modules (default: CPython's 'test')")
    parser.add_argument("--path", action="append", default=[], metavar="DIR",
                        help="a folder put first on the children's sys.path (to find --package); repeatable")
    parser.add_argument("--engine", default=None, metavar="MODULE:FUNCTION",
                        help="compile with this function instead of compiler.compile (the harness's tests)")


def _fail(message: str) -> int:
    print(f"python -m matrix cpython-tests: {message}", file=sys.stderr)
    return 2


def _first_line(text: Optional[str]) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def module_line(name: str, row: cell.Json) -> str:
    """One line for a module that needs a look (regressed, crashed, timed out, ...)."""
    status = row["status"]
    if status in ("regressed", "changed"):
        changes = row["regressions"] if status == "regressed" else row.get("improved", [])
        shown = "; ".join(f"{'.'.join(c['test'].split('.')[-2:])} (plain {c['plain']}, "
                          f"{_first_line(c['detail'])[:100]})" for c in changes[:SHOWN_PER_MODULE])
        more = f"; +{len(changes) - SHOWN_PER_MODULE} more" if len(changes) > SHOWN_PER_MODULE else ""
        return f"{name}: {status}, {len(changes)} of {row['tests']} tests: {shown}{more}"
    return f"{name}: {status}: {_first_line(row['reason'])}"


def summary_lines(doc: cell.Json) -> List[str]:
    lines = [module_line(name, row) for name, row in doc["modules"].items()
             if row["status"] not in ("passed", "skipped")]
    t = doc["totals"]
    statuses = ", ".join(f"{s.replace('_', ' ')} {t[s]}" for s in cell.MODULE_STATUSES if t[s])
    lines.append(f"{doc['python']} {doc['backend']}: {t['modules']} modules ({statuses}); "
                 f"{t['tests']} tests, {t['compiled_tests']} compiled test methods; "
                 f"passes plain {t['plain_passed']}, compiled {t['compiled_passed']}; "
                 f"regressions {t['regressions']}, improvements {t['improvements']}; "
                 f"crashed {t['crashed']}, timed out {t['timed_out']}; {doc['duration_s']:.0f} s")
    if t["slowest"]:
        s = t["slowest"]
        lines.append(f"slowest module: {s['module']} {s['compiled_duration_s']:.1f} s compiled, "
                     f"{s['plain_duration_s']:.1f} s plain")
    return lines


def main(args: argparse.Namespace) -> int:
    requested = None
    if args.modules is not None:
        requested = [m.strip() for m in args.modules.split(",") if m.strip()]
        if not requested:
            return _fail("--modules needs at least one name")
    if args.timeout is not None and not args.timeout > 0:
        return _fail(f"--timeout must be a positive number of seconds, got {args.timeout:g}")
    if args.jobs < 0:
        return _fail(f"--jobs must be 0 (one per CPU) or more, got {args.jobs}")
    if args.json:
        folder = os.path.dirname(os.path.abspath(args.json))
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as err:
            return _fail(f"cannot write --json {args.json}: {err.strerror or err}")
        if not os.access(folder, os.W_OK) or os.path.isdir(args.json):
            return _fail(f"cannot write --json {args.json}: not a writable file path")
    # The runner needs the compiler (numpy): loaded only now, so parsing stays light.
    try:
        from compiler import backends
        from matrix.cpython_tests import modules, runner
    except ImportError as err:
        return _fail(f"the suite needs the compiler and its dependencies (pip install -e .): {err}")

    if args.backend not in backends.BACKEND_NAMES:
        return _fail(f"unknown backend {args.backend!r}; accepted: {', '.join(backends.BACKEND_NAMES)}")
    options = runner.Options(backend=args.backend, jobs=args.jobs or os.cpu_count() or 1,
                             timeout_s=args.timeout or runner.DEFAULT_TIMEOUT_S, package=args.package,
                             paths=[os.path.abspath(p) for p in args.path], engine=args.engine)
    done = [0]

    def progress(name: str, row: cell.Json) -> None:
        done[0] += 1
        if not args.quiet:
            times = "/".join(f"{row[k]:.1f}" for k in ("plain_duration_s", "compiled_duration_s")
                             if row[k] is not None)
            print(f"[{done[0]}] {name}: {row['status']}{' ' + times + ' s' if times else ''}",
                  file=sys.stderr, flush=True)

    try:
        doc = runner.run(requested, run_all=args.all, options=options, progress=progress)
    except modules.UnknownModule as err:
        return _fail(str(err))
    except KeyboardInterrupt:
        print("interrupted: every child stopped, no document written", file=sys.stderr)
        return 130
    for line in summary_lines(doc):
        print(line)
    if args.json:
        cell.write(args.json, doc)
        print(f"-> {args.json}")
    return 1 if cell.failing(doc) else 0
