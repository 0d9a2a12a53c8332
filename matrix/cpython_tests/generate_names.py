"""Regenerate `module_names.json`: every `test_*` module of CPython's `test` package, per version.

    python -m matrix.cpython_tests.generate_names [--check]

Each interpreter that `python -m matrix interpreters` finds (3.8 - 3.15) lists its own
test package; versions not found keep the names already recorded for them, so a machine
without some interpreter does not forget its names.  `--check` exits 1 when the file
would change (the names are committed data, read by `modules.py` to tell a misspelt
module from one that only this version lacks).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Dict, List

from matrix import interpreters
from matrix.cpython_tests.modules import NAMES_FILE, SUPPORTED_VERSIONS

# Run by each interpreter with -I (no site, no project on the path): the package's
# test_* modules and subpackages, without importing any of them.
_LISTING = ("import json, os, pkgutil, test; "
            "print(json.dumps(sorted(m.name for m in pkgutil.iter_modules(test.__path__) "
            "if m.name.startswith('test_'))))")


def names_of(executable: str) -> List[str]:
    done = subprocess.run([executable, "-I", "-c", _LISTING], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{executable} cannot list its test package: {done.stderr.strip()[-300:]}")
    return list(json.loads(done.stdout))


def generate() -> Dict[str, List[str]]:
    try:
        recorded: Dict[str, List[str]] = json.loads(NAMES_FILE.read_text(encoding="utf-8"))["versions"]
    except (OSError, ValueError, KeyError):
        recorded = {}
    found = interpreters.discover()
    for version in SUPPORTED_VERSIONS:
        if version in found:
            recorded[version] = names_of(found[version].path)
            print(f"{version}: {len(recorded[version])} test modules ({found[version].path})")
        elif version in recorded:
            print(f"{version}: not found here; keeping the {len(recorded[version])} names recorded")
        else:
            print(f"{version}: not found here and never recorded", file=sys.stderr)
    return {v: recorded[v] for v in SUPPORTED_VERSIONS if v in recorded}


def main(argv: List[str] = None) -> int:  # type: ignore[assignment]
    parser = argparse.ArgumentParser(prog="python -m matrix.cpython_tests.generate_names", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed file is out of date")
    args = parser.parse_args(argv)
    text = json.dumps({"comment": "test_* modules of CPython's Lib/test per version; "
                                  "regenerate with python -m matrix.cpython_tests.generate_names",
                       "versions": generate()}, indent=1, sort_keys=True) + "\n"
    current = NAMES_FILE.read_text(encoding="utf-8") if NAMES_FILE.exists() else ""
    if args.check:
        print("up to date" if text == current else f"{NAMES_FILE} is out of date")
        return 0 if text == current else 1
    NAMES_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {NAMES_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
