"""The allowlist's coverage of NumPy is measured from NumPy's own namespaces, and every
public callable it leaves out is either listed with the reason (compiler.ops.catalog) or
reported as missing: no silent gaps."""
from __future__ import annotations

import numpy as np
import pytest

import compiler.ops as ops
from compiler.ops import coverage
from compiler.ops.catalog import EXCLUDED, INLINED, public_names


def test_denominators_are_numpys_public_callables():
    found = coverage.numpy_coverage()
    assert found["numpy"].total == len(public_names(np))
    assert found["numpy.linalg"].total == len(public_names(np.linalg))
    assert found["numpy.fft"].total == len(public_names(np.fft))
    assert set(found["numpy.fft"].covered) == set(public_names(np.fft)) - {"test"}
    assert found["numpy.random.Generator"].total == len(
        [n for n in dir(np.random.Generator) if not n.startswith("_")
         and callable(getattr(np.random.Generator, n))])


def test_covered_means_allow_listed_and_missing_means_not():
    for name, ns in (("numpy", np), ("numpy.linalg", np.linalg), ("numpy.fft", np.fft)):
        result = coverage.numpy_coverage()[name]
        assert all(ops.lookup_function(getattr(ns, n)) is not None or (ns is np and n in INLINED)
                   for n in result.covered)
        assert all(ops.lookup_function(getattr(ns, n)) is None for n in result.missing)


@pytest.mark.parametrize("namespace", ["numpy", "numpy.linalg", "numpy.fft"])
def test_every_uncovered_callable_has_a_reason(namespace):
    result = coverage.numpy_coverage()[namespace]
    unexplained = [n for n in result.missing if coverage.exclusion_reason(namespace, n) is None]
    assert not unexplained, f"{namespace}: no entry and no reason in compiler.ops.catalog: {unexplained}"


def test_excluded_functions_are_not_allow_listed():
    for dotted in EXCLUDED:
        module, _, name = dotted.rpartition(".")
        fn = getattr(getattr(np, module) if module else np, name, None)
        # an alias of an allow-listed function (NumPy 1.24's np.row_stack is np.vstack)
        # is covered by that function's entry
        if fn is not None and getattr(fn, "__name__", name) == name:
            assert ops.lookup_function(fn) is None, dotted


def test_coverage_reached():
    # The numbers this branch reached, on either NumPy line (1.24 on 3.8, 2.x elsewhere).
    found = coverage.numpy_coverage()
    assert found["numpy.fft"].percent > 90
    assert found["numpy.linalg"].percent >= 80
    assert found["ufunc methods"].percent == 100
    assert found["numpy"].percent >= 80
    assert found["numpy.random.Generator"].percent >= 80


def test_cli_prints_one_line_per_namespace_and_the_reasons():
    lines = []
    assert coverage.main(["--missing"], write=lines.append) == 0
    text = "".join(lines)
    assert text.startswith(f"NumPy {np.__version__}: allowlist coverage")
    for namespace in ("numpy:", "numpy.linalg:", "numpy.fft:", "numpy.random.Generator:",
                      "ufunc methods:"):
        assert f"  {namespace} " in text
    assert "unique: the result's shape depends on the values" in text
