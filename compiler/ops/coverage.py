"""How much of NumPy the allowlist captures, measured on the running NumPy.

    numpy_coverage() -> {namespace: NamespaceCoverage}
    python -m compiler.ops.coverage [--missing]

The denominators come from NumPy itself: the public callables of ``numpy``,
``numpy.linalg`` and ``numpy.fft`` (names without a leading underscore whose value is
callable and is neither a class nor a module), the public methods of
``numpy.random.Generator`` (draws: compiler.ops.draws), and the methods (``reduce``, ``accumulate``, ``outer``,
``reduceat``, ``at``) of every ufunc in ``numpy`` that has them (binary ufuncs with one
output; ``at`` for every ufunc with one output).  A callable counts as covered when the tracer can put a
call of it into a graph (or answer it at trace time: compiler.ops.queries), that is when
the allowlist has an entry for it, or when the tracer inlines its source (catalog.INLINED).  An entry may still refuse particular arguments (a
data-dependent shape), which runs that call natively.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import types
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

from compiler.ops.catalog import EXCLUDED, INLINED, public_names
from compiler.ops.draws import DRAW_EXCLUDED, draw_op
from compiler.ops.queries import DEPRECATED_HERE
from compiler.ops.registry import lookup_function
from compiler.ops.ufunc_methods import METHOD_NAMES


@dataclasses.dataclass(frozen=True)
class NamespaceCoverage:
    namespace: str
    covered: List[str]
    missing: List[str]

    @property
    def total(self) -> int:
        return len(self.covered) + len(self.missing)

    @property
    def percent(self) -> float:
        return 100.0 * len(self.covered) / self.total if self.total else 100.0

    def line(self) -> str:
        return f"{self.namespace}: {len(self.covered)} of {self.total} ({self.percent:.1f}%)"


def _namespace(name: str, module: types.ModuleType) -> NamespaceCoverage:
    covered, missing = [], []
    for attr in public_names(module):
        # an inlined function (catalog.INLINED) puts its work into the graph through its source
        captured = lookup_function(getattr(module, attr)) is not None or \
            (module is np and attr in INLINED)
        (covered if captured else missing).append(attr)
    return NamespaceCoverage(name, covered, missing)


def _generator_methods() -> NamespaceCoverage:
    names = [n for n in dir(np.random.Generator)
             if not n.startswith("_") and callable(getattr(np.random.Generator, n))]
    # Draws are graph ops with the generator as an input (compiler.ops.draws).
    covered = [n for n in names if draw_op(n) is not None]
    return NamespaceCoverage("numpy.random.Generator", covered,
                             [n for n in names if draw_op(n) is None])


def _ufunc_methods() -> NamespaceCoverage:
    covered, missing = [], []
    for name in public_names(np):
        ufunc = getattr(np, name)
        if not isinstance(ufunc, np.ufunc) or ufunc.__name__ != name:
            continue
        # the methods NumPy gives each ufunc: all of them for binary ufuncs with one
        # output, ``at`` for the other single-output ufuncs, none for generalized ufuncs
        single = ufunc.nout == 1 and ufunc.signature is None
        for method in METHOD_NAMES:
            if not single or (method != "at" and ufunc.nin != 2):
                continue
            pair = f"{name}.{method}"
            (covered if lookup_function(ufunc) is not None else missing).append(pair)
    return NamespaceCoverage("ufunc methods", covered, missing)


def numpy_coverage() -> Dict[str, NamespaceCoverage]:
    """Coverage of the allowlist per namespace of the running NumPy."""
    found = [_namespace("numpy", np), _namespace("numpy.linalg", np.linalg),
             _namespace("numpy.fft", np.fft), _generator_methods(), _ufunc_methods()]
    return {c.namespace: c for c in found}


def exclusion_reason(namespace: str, name: str) -> Optional[str]:
    """Why a public callable is deliberately not captured, or None if it is merely missing."""
    prefix = namespace[len("numpy."):] + "." if namespace.startswith("numpy.") else ""
    if namespace == "numpy.random.Generator":
        return DRAW_EXCLUDED.get(name)
    return EXCLUDED.get(prefix + name) or (DEPRECATED_HERE.get(name) if not prefix else None)


def report(missing: bool = False) -> List[str]:
    """Lines of the coverage report (with ``missing``: every uncovered name and why)."""
    lines = [f"NumPy {np.__version__}: allowlist coverage of public callables"]
    for coverage in numpy_coverage().values():
        lines.append("  " + coverage.line())
        if missing:
            for name in coverage.missing:
                reason = exclusion_reason(coverage.namespace, name) or "not yet in the allowlist"
                lines.append(f"      {name}: {reason}")
    return lines


def main(argv: Optional[Sequence[str]] = None,
         write: Callable[[str], object] = sys.stdout.write) -> int:
    parser = argparse.ArgumentParser(prog="python -m compiler.ops.coverage",
                                     description="Allowlist coverage of NumPy's public callables")
    parser.add_argument("--missing", action="store_true",
                        help="list every uncovered callable with the reason")
    options = parser.parse_args(argv)
    for line in report(options.missing):
        write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
