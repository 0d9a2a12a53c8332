"""Command line: `python -m matrix run|report|list|serve|upload|interpreters|cpython-tests|project-tests`
(see --help of each)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Optional

from matrix import baselines, coverage, interpreters, schema, upload
from matrix.cpython_tests import cli as cpython_tests_cli
from matrix.project_tests import cli as project_tests_cli
from matrix.engines import UnknownBackend
from matrix.service import server


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m matrix", description=__doc__)
    sub = parser.add_subparsers(dest="command")

    run = sub.add_parser("run", help="run the suite in this interpreter on one backend (one cell)")
    run.add_argument("--backend", required=True,
                     help="eager, numpy, triton (what the compiler offers); the dynamo subject: eager, aot_eager")
    run.add_argument("--subject", default=schema.SUBJECT_TRACEMATRIX, choices=schema.SUBJECTS,
                     help="whose compiler runs the suite: tracematrix (this project's, the default) or "
                          "dynamo (torch.compile in this interpreter; 'subject unavailable' without torch)")
    run.add_argument("--out", required=True,
                     help="the cell's JSON file, e.g. reports/results/3.11-eager.json or 3.11-dynamo-eager.json")
    run.add_argument("--accept", action="store_true",
                     help="rewrite the cell's baseline (matrix/baselines/<subject>/) from this run, on purpose")
    run.add_argument("--jobs", type=int, default=0, help="worker processes (default: one per CPU)")
    run.add_argument("--cases", default=None, help="comma-separated glob patterns on name or group/name")
    run.add_argument("--timeout", type=float, default=None, help="seconds per case (default: the runner's)")
    run.add_argument("--engine", default=None,
                     help="the subject's engine by default; 'plain' (run natively, checks the suite) "
                          "or module:Class (a test double)")
    run.add_argument("--suite", default="matrix.cases", help="module holding the cases")
    run.add_argument("--baselines", default=None, help="baseline folder (default matrix/baselines)")
    run.add_argument("--no-coverage", action="store_true", help="skip the opcode coverage hook")
    run.add_argument("--quiet", action="store_true")

    report = sub.add_parser("report", help="merge cell files and render the HTML report")
    report.add_argument("files", nargs="*", help="cell JSON files (any machines, any runs), or folders of them")
    report.add_argument("--out", required=True, help="output folder (index.html, cases/, summary.json)")
    report.add_argument("--baselines", default=None, help="baseline folder (default matrix/baselines)")
    report.add_argument("--reference", default="3.11", help="reference interpreter for amber (default 3.11)")
    report.add_argument("--missing", action="append", default=[], metavar="PYTHON",
                        help="an interpreter this machine lacks; shown as 'missing' cells (repeatable)")
    report.add_argument("--backends", default=None, help="comma-separated backend axis for missing cells")
    report.add_argument("--run-id", default=None, help="only merge cells of this run id")
    report.add_argument("--history", default=None, metavar="URL_OR_FILE",
                        help="the results service (or a JSON file of its /api/v1/trends): adds trend charts")

    listing = sub.add_parser("list", help="list the suite's cases")
    listing.add_argument("--cases", default=None)
    listing.add_argument("--suite", default="matrix.cases")
    server.add_parser(sub)
    upload.add_parser(sub)
    cpython_tests_cli.add_parser(sub)   # its runner (numpy) is imported only when it runs
    project_tests_cli.add_parser(sub)

    interpreters.add_arguments(sub.add_parser(
        "interpreters", help="list the interpreters found (version -> path); --install provisions missing ones"))
    return parser


def _run(args: argparse.Namespace) -> int:
    def progress(name: str, result: schema.Json) -> None:
        if result["status"] not in ("pass", "unsupported") and not args.quiet:
            first = (result["detail"] or "").splitlines()[:1]
            print(f"  {name}: {result['status']} {first[0] if first else ''}", file=sys.stderr)

    # The runner imports numpy, so it is loaded only here: `interpreters` must work on a bare
    # system Python (CI provisions 3.14/3.15 before any virtual environment exists).
    from matrix.runner import DEFAULT_TIMEOUT_S, run_cell

    try:
        cell = run_cell(backend=args.backend, subject=args.subject, suite=args.suite, pattern=args.cases,
                        engine_spec=args.engine,
                        jobs=args.jobs, timeout_s=args.timeout or DEFAULT_TIMEOUT_S,
                        # opcode coverage is of this project's tables: not the Dynamo subject's
                        coverage=None if args.no_coverage or args.subject != schema.SUBJECT_TRACEMATRIX
                        else coverage.collect, progress=progress)
    except UnknownBackend as err:
        print(f"python -m matrix run: {err}", file=sys.stderr)
        return 2
    schema.write_cell(args.out, cell)
    statuses = [c["status"] for c in cell["cases"].values()]
    counts = ", ".join(f"{s} {statuses.count(s)}" for s in schema.CASE_STATUSES if statuses.count(s))
    print(f"{schema.cell_name(cell['python'], cell['backend'], cell['subject'])}: {cell['cell_status']}; "
          f"{len(statuses)} cases{': ' + counts if counts else ''}; {cell['duration_s']:.1f} s -> {args.out}")
    try:
        verdict = baselines.compare_cell(cell, baselines.load(cell["python"], cell["backend"], args.baselines,
                                                              subject=cell["subject"]))
    except schema.ResultFileError as err:
        print(f"  baseline unusable: {err}", file=sys.stderr)
        verdict = None
    if verdict is not None:
        moved = ", ".join(sorted(verdict["changes"]))
        print(f"  baseline: {verdict['state']}{' (' + moved + ')' if moved else ''}"
              f"{' - ' + verdict['note'] if verdict['note'] else ''}")
    if args.accept:
        try:
            path = baselines.accept(cell, args.baselines, merge=bool(args.cases))
        except ValueError as err:
            print(f"  not accepted: {err}", file=sys.stderr)
            return 1
        print(f"  accepted: wrote {path}")
    return 0


def _cell_files(arguments: List[str]) -> List[str]:
    """The files given, with a folder standing for the *.json files in it (for tox, which
    runs commands without a shell to expand globs)."""
    found: List[str] = []
    for argument in arguments:
        path = Path(argument)
        found += sorted(str(p) for p in path.glob("*.json")) if path.is_dir() else [argument]
    return found


def _report(args: argparse.Namespace) -> int:
    try:
        from matrix.report import build_report  # pandas and jinja2 are needed only here
    except ImportError as err:
        print(f"python -m matrix report: the report needs the 'report' extra "
              f"(pip install 'tracematrix[report]'): {err}", file=sys.stderr)
        return 2
    args.files = _cell_files(args.files)
    verdicts = build_report(args.files, args.out, baseline_dir=args.baselines, reference=args.reference,
                            missing_pythons=args.missing,
                            backends=args.backends.split(",") if args.backends else None,
                            run_id=args.run_id, history=args.history)
    index = Path(args.out) / "index.html"
    for problem in verdicts["problems"]:
        print(f"problem: {problem}", file=sys.stderr)
    print(f"report: {index} ({len(verdicts['cells'])} cells); "
          f"regressed: {', '.join(verdicts['regressed_cells']) or 'none'}; "
          f"failed: {', '.join(verdicts['failed_cells']) or 'none'}; "
          f"cpython-tests failing: {', '.join(verdicts['cpython_tests_failed']) or 'none'}; "
          f"suspicious: {len(verdicts['suspicious'])}; rejected files: {len(verdicts['rejected_files'])}")
    if not args.files:
        print("no cell files given", file=sys.stderr)
        return 2
    return 0 if verdicts["ok"] else 1


def _list(args: argparse.Namespace) -> int:
    from matrix.cases import load_suite, select
    for case in select(load_suite(args.suite), args.cases):
        print(f"{case.group}/{case.name}\t{len(case.calls)} calls, {case.expected_recompiles} recompiles")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "run":
        return _run(args)
    if args.command == "report":
        return _report(args)
    if args.command == "list":
        return _list(args)
    if args.command == "serve":
        return server.main(args)
    if args.command == "upload":
        return upload.main(args)
    if args.command == "interpreters":
        return interpreters.main(args)
    if args.command == "cpython-tests":
        return cpython_tests_cli.main(args)
    if args.command == "project-tests":
        return project_tests_cli.main(args)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
