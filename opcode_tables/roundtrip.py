"""``python -m opcode_tables roundtrip``: decode and re-assemble real code, unmodified.

Every code object (nested ones included) of the chosen sources is compiled by
the running interpreter, decoded, assembled again and compared: co_code, the
pools, the decoded exception table, the line view (``co_lines()``, or
``dis.findlinestarts`` where the format is lnotab), ``co_positions()`` and a
``co_stacksize`` recomputed by our own flow analysis.  Sources are compiled,
never imported, so every standard-library file can be checked without side
effects.
"""
from __future__ import annotations

import argparse
import dis
import importlib.util
import multiprocessing
import os
import sys
import sysconfig
import time
import warnings
from types import CodeType
from typing import Iterator, List, NamedTuple, Optional, Tuple

from . import current_table
from .assemble import assemble
from .decode import decode
from .exceptiontable import parse_exception_table
from .linetable import TABLE_FIELD
from .spec import VersionTable

_SKIP_DIRS = {"site-packages", "dist-packages", "__pycache__"}


class Outcome(NamedTuple):
    """The result of round-tripping one code object."""

    where: str                  # file:qualname
    differences: List[str]      # empty when identical
    cpython_stacksize: int
    our_stacksize: Optional[int]


def iter_code_objects(code: CodeType) -> Iterator[CodeType]:
    """``code`` and every code object nested in its constants, depth first."""
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from iter_code_objects(const)


def stdlib_sources() -> List[str]:
    """Every .py file of the running interpreter's standard library (site-packages excluded)."""
    root = sysconfig.get_paths()["stdlib"]
    found = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in _SKIP_DIRS)
        found.extend(os.path.join(directory, name) for name in sorted(files) if name.endswith(".py"))
    return found


def module_sources(names: List[str]) -> List[str]:
    """The source file of each named module (found, not imported)."""
    paths = []
    for name in names:
        spec = importlib.util.find_spec(name)
        origin = getattr(spec, "origin", None) if spec is not None else None
        if not origin or not origin.endswith(".py"):
            raise SystemExit(f"roundtrip: module {name!r} has no Python source file "
                             f"(found {origin!r}); name a pure-Python module such as 'json.decoder'")
        paths.append(origin)
    return paths


def _qualname(code: CodeType) -> str:
    return getattr(code, "co_qualname", code.co_name)


def line_view(code: CodeType, fmt: str) -> list:
    return list(dis.findlinestarts(code)) if fmt == "lnotab" else list(code.co_lines())


def _same_objects(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def check_code(code: CodeType, path: str, table: VersionTable) -> Outcome:
    """Round-trip one code object and list every difference."""
    where = f"{path}:{_qualname(code)}"
    try:
        rebuilt = assemble(decode(code, table).instructions, code)
    except Exception as exc:  # report, do not stop: the summary lists the first failures
        return Outcome(where, [f"failed: {type(exc).__name__}: {exc}"], code.co_stacksize, None)
    fmt = table.fact("linetable")
    differences = []
    if rebuilt.co_code != code.co_code:
        differences.append("co_code")
    for field in ("co_consts", "co_names", "co_varnames"):
        if not _same_objects(getattr(code, field), getattr(rebuilt, field)):
            differences.append(field)
    # Identical table bytes (with identical co_code and first line) mean identical
    # views; the views are compared only where the bytes differ.
    if (table.fact("exception_table") and code.co_exceptiontable != rebuilt.co_exceptiontable
            and parse_exception_table(code.co_exceptiontable) != parse_exception_table(rebuilt.co_exceptiontable)):
        differences.append("exception table")
    field = TABLE_FIELD[fmt]
    if getattr(code, field) != getattr(rebuilt, field):
        if line_view(code, fmt) != line_view(rebuilt, fmt):
            differences.append("findlinestarts" if fmt == "lnotab" else "co_lines()")
        if fmt == "locations" and list(code.co_positions()) != list(rebuilt.co_positions()):
            differences.append("co_positions()")
    if rebuilt.co_stacksize > code.co_stacksize:
        differences.append(f"co_stacksize {rebuilt.co_stacksize} > CPython's {code.co_stacksize}")
    return Outcome(where, differences, code.co_stacksize, rebuilt.co_stacksize)


def _compile(path: str) -> Optional[CodeType]:
    with open(path, "rb") as handle:
        source = handle.read()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings of test data are not ours to report
            return compile(source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # test data with deliberately broken or other-version syntax


def check_file(path: str) -> Optional[List[Outcome]]:
    """Outcomes for every code object of one source file; None if it does not compile."""
    module = _compile(path)
    if module is None:
        return None
    table = current_table()
    return [check_code(code, path, table) for code in iter_code_objects(module)]


def run(paths: List[str], jobs: int = 1) -> Tuple[List[Outcome], List[str]]:
    """Outcomes for every code object of ``paths``, and the files that do not compile."""
    outcomes: List[Outcome] = []
    uncompilable: List[str] = []
    if jobs > 1:
        pool = multiprocessing.Pool(jobs)
        try:
            results = pool.map(check_file, paths, chunksize=8)
        finally:
            pool.close()
            pool.join()  # joined workers count in os.times() (the CPU figure printed)
    else:
        results = [check_file(path) for path in paths]
    for path, result in zip(paths, results):
        if result is None:
            uncompilable.append(path)
        else:
            outcomes.extend(result)
    return outcomes, uncompilable


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished workers."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m opcode_tables roundtrip",
        description="Decode and re-assemble code objects unmodified; exit 1 on any difference.")
    parser.add_argument("modules", nargs="*", help="module names whose source files to check")
    parser.add_argument("--stdlib", action="store_true", help="check every standard-library source file")
    parser.add_argument("--show", type=int, default=10, help="how many differences to list (default 10)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="worker processes (default: 2 for 50 files or more where there are two "
                             "cores, else 1)")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    if not args.stdlib and not args.modules:
        print("roundtrip: name modules to check, or pass --stdlib", file=sys.stderr)
        return 2
    table = current_table()
    paths = (stdlib_sources() if args.stdlib else []) + module_sources(args.modules)
    jobs = max(1, args.jobs if args.jobs is not None else
               (min(2, os.cpu_count() or 1) if len(paths) >= 50 else 1))
    began, began_cpu = time.perf_counter(), _cpu_seconds()
    outcomes, uncompilable = run(paths, jobs)
    elapsed, cpu = time.perf_counter() - began, _cpu_seconds() - began_cpu

    failed = [o for o in outcomes if o.differences]
    over = [o for o in outcomes if not o.differences and o.our_stacksize is not None
            and o.our_stacksize < o.cpython_stacksize]
    identical = len(outcomes) - len(failed)
    version = f"{table.version[0]}.{table.version[1]}"
    print(f"roundtrip on CPython {version}: {len(paths) - len(uncompilable)} files, "
          f"{len(outcomes)} code objects in {elapsed:.1f} s ({cpu:.1f} s CPU, {jobs} process(es))")
    if uncompilable:
        print(f"skipped {len(uncompilable)} files this interpreter cannot compile "
              f"(test data with invalid syntax), e.g. {os.path.basename(uncompilable[0])}")
    for outcome in failed[:args.show]:
        print(f"DIFFERENT {outcome.where}: {', '.join(outcome.differences)}")
    if len(failed) > args.show:
        print(f"... and {len(failed) - args.show} more")
    for outcome in over[:args.show]:
        print(f"  over-estimate {outcome.where}: CPython {outcome.cpython_stacksize}, "
              f"flow analysis {outcome.our_stacksize}")
    print(f"co_stacksize over-estimated by CPython: {len(over)} (CPython sized the stack on an "
          f"earlier form of the code: before folding constant tuples, or with handler code that the "
          f"final exception table no longer reaches; no path of the final bytecode needs it)")
    print(f"roundtrip: {identical}/{len(outcomes)} identical")
    return 1 if failed else 0
