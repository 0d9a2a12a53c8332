"""`python -m matrix project-tests`: the command line.

Exit status: 0 when no test regressed; 1 when some did; 2 for bad input or a run that
could not record its outcomes, with a one-line reason.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, List

SHOWN = 20


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "project-tests", help="run this project's tests plainly and with every test function compiled",
        description="Run this project's pytest tests twice on this interpreter, plainly and with every test "
                    "function compiled (compiler.compile(..., observed=False)), and list the tests whose "
                    "outcome differs. Exit 0: no regression; 1: some; 2: bad input or a failed run.")
    parser.add_argument("targets", nargs="*", default=["tests"],
                        help="test files, folders or node ids, relative to the project's root (default: tests)")
    parser.add_argument("--backend", default="eager", help="the compiler's backend (default eager)")
    parser.add_argument("--jobs", type=int, default=0, help="pytest-xdist workers (default: one per CPU; 1: none)")
    parser.add_argument("--json", default=None, metavar="OUT",
                        help="write the cell document here, e.g. reports/results/3.11-project-tests.json")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per pytest run (default 3600)")


def summary_lines(doc: dict) -> List[str]:
    lines = []
    for change in doc["regressions"][:SHOWN]:
        first = (change["detail"] or "").strip().splitlines()
        lines.append(f"regressed: {change['test']} (plain {change['plain']}, compiled {change['compiled']}"
                     f"{': ' + first[-1][:160] if first else ''})")
    if len(doc["regressions"]) > SHOWN:
        lines.append(f"... and {len(doc['regressions']) - SHOWN} more regressions")
    for change in doc["improvements"][:SHOWN]:
        lines.append(f"changed (plain {change['plain']}, compiled {change['compiled']}): {change['test']}")
    t = doc["totals"]
    lines.append(f"{doc['python']} {doc['backend']}: {t['tests']} tests, {t['compiled_tests']} test functions "
                 f"compiled ({t['traced_tests']} with a compiled entry of their own); passed plain {t['plain_passed']}, compiled {t['compiled_passed']}; regressions "
                 f"{t['regressions']}, improvements {t['improvements']}; {doc['duration_s']:.0f} s")
    return lines


def main(args: argparse.Namespace) -> int:
    from matrix.project_tests import runner

    if args.backend not in ("eager", "numpy", "triton"):
        print(f"python -m matrix project-tests: unknown backend {args.backend!r}; use eager, numpy or triton",
              file=sys.stderr)
        return 2
    missing = [t for t in args.targets if not os.path.exists(runner.PROJECT_ROOT / t.split("::")[0])]
    if missing:
        print(f"python -m matrix project-tests: no such test path under {runner.PROJECT_ROOT}: "
              f"{', '.join(missing)}", file=sys.stderr)
        return 2
    jobs = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
    try:
        doc = runner.run(args.targets, backend=args.backend, jobs=jobs, timeout_s=args.timeout)
    except runner.RunFailed as error:
        print(f"python -m matrix project-tests: {error}", file=sys.stderr)
        return 2
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(doc, handle, indent=1)
    for line in summary_lines(doc):
        print(line)
    return 1 if doc["regressions"] else 0
