"""Command line: ``python -m opcode_tables {coverage,roundtrip} ...``."""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import List, Optional

ROUNDTRIP_MODULE = "opcode_tables.roundtrip"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m opcode_tables",
        description="Inspect the running interpreter's opcode table.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    coverage = commands.add_parser(
        "coverage", help="which opcodes the tracer handles, declares unsupported, or still lacks",
        description="Count the running interpreter's opcodes by category; exit 1 if the table misses any.")
    coverage.add_argument("--json", action="store_true", help="print the report as JSON")
    roundtrip = commands.add_parser(
        "roundtrip", help="decode and re-assemble code objects, checking they come back identical",
        description="Arguments after 'roundtrip' are passed to opcode_tables.roundtrip.", add_help=False)
    roundtrip.add_argument("args", nargs=argparse.REMAINDER, help="passed to opcode_tables.roundtrip")
    return parser


def _roundtrip(argv: List[str]) -> int:
    try:
        module = importlib.import_module(ROUNDTRIP_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name != ROUNDTRIP_MODULE:
            raise  # the module exists but one of its imports is broken: show the real error
        print(f"python -m opcode_tables roundtrip: {ROUNDTRIP_MODULE} is not available in this "
              f"checkout ({exc}); the round-trip checker has not been installed yet.", file=sys.stderr)
        return 2
    result = module.main(argv)
    return 0 if result is None else int(result)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["roundtrip"]:
        # Its options belong to opcode_tables.roundtrip (argparse would claim --help and -x).
        return _roundtrip(argv[1:])
    args = _parser().parse_args(argv)
    from . import coverage
    return coverage.main(as_json=args.json, out=sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
