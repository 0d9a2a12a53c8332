"""Differential tests of the tracer over the corpus (tests/corpus/), issue 3's "Done means".

For every corpus case and backend: each call through one compiled function returns, prints, raises and
mutates exactly like the plain function.  For every one-graph case on a version the tracer covers:
``explain()`` reports one graph, no break and the declared number of call nodes, and ``str(graph)`` equals
the stored text in tests/corpus/expected_graphs.txt — the same file on every interpreter.

Regenerate that file only on purpose (it merges; run on 3.12, then on the other interpreters):
    TRACEMATRIX_UPDATE_GRAPHS=1 python -m pytest -p no:xdist tests/test_corpus.py -k graph_text

Cases that fail because a feature is not built yet are listed in KNOWN_GAPS with the reason and the part that
fails.  The checks a gap names are strict xfails on the versions it is declared for (a gap that starts passing
fails the run: remove it), and ``test_known_gap_still_fails`` checks both ways: the gap reproduces where it is
declared, and the case passes those checks everywhere else.  Nothing here is skipped.
"""
from __future__ import annotations

import os
import re
from typing import Dict, FrozenSet, NamedTuple, Optional, Tuple

import numpy as np
import pytest

import compiler
import opcode_tables
from compiler.backends import available_backends
from tests.corpus import OPTIONAL_FAMILIES, all_cases
from tests.corpus import graph_expectations as expected
from tests.corpus.runner import assert_same_outcome, check_differential, check_explain, run

CASES = all_cases()
PARTS = ("differential", "explain", "graph_text")


class Gap(NamedTuple):
    reason: str
    parts: FrozenSet[str]                                  # of PARTS: the checks that fail
    versions: Optional[FrozenSet[Tuple[int, int]]] = None  # None: every version


_EXPLAIN = frozenset({"explain"})

# case name -> the checks that fail today, and why (the tracer's own break reason).
KNOWN_GAPS: Dict[str, Gap] = {
    "statements.with_block_suppresses_exception": Gap("a with block left by an exception (not traced yet)", _EXPLAIN,
                                                      versions=frozenset({(3, 8)})),
    # NumPy < 2.3 (the releases on CPython 3.8-3.10) returns a Python int from count_nonzero, newer an np.intp.
    "layouts_dtypes.boolean_reductions": Gap("numpy.count_nonzero returns a Python int, refused as a graph value",
                                             _EXPLAIN, versions=frozenset({(3, 8), (3, 9), (3, 10)})),
}


def _running_version() -> Tuple[int, int]:
    return opcode_tables.current_table().version


def _gap(name: str, part: str) -> Optional[Gap]:
    gap = KNOWN_GAPS.get(name)
    if gap is None or part not in gap.parts:
        return None
    if gap.versions is not None and _running_version() not in gap.versions:
        return None
    return gap


# NumPy 2 promotes by NEP 50; NumPy 1.x (the only NumPy on CPython 3.8) by value: see registry.Case.
NEP50_PROMOTION = int(np.__version__.split(".")[0]) >= 2
BACKENDS = [b for b in ("eager", "numpy") if b in available_backends()]
FULL_GRAPH = sorted(n for n, c in CASES.items() if c.full_graph)


def _expect_gap(request, name: str, *parts: str) -> None:
    """Mark the running test as a strict xfail when the case has a known gap in one of ``parts``
    on this version: it must still fail (an XPASS fails the run)."""
    for part in parts:
        gap = _gap(name, part)
        if gap is not None:
            request.applymarker(pytest.mark.xfail(reason=f"known gap: {gap.reason}", strict=True))
            return


@pytest.fixture(autouse=True)
def _fresh_compiler():
    compiler.reset()
    yield
    compiler.reset()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_equals_plain(name, backend, request):
    _expect_gap(request, name, "differential")
    case = CASES[name]
    check_differential(case, compiler.compile(case.fn, backend=backend))
    if case.full_graph and not _gap(name, "explain") and not case.raises:
        # The calls above went through one compiled function (recompiling for new shapes and dtypes):
        # every compilation must have produced its graph, none may have fallen back to native code.
        native = [(e.compile_id, e.fallback_reason) for e in compiler.events() if e.fallback_reason]
        assert not native, f"{name}: compilations that ran natively: {native}"


@pytest.mark.parametrize("name", FULL_GRAPH)
def test_explain_counts(name, request):
    _expect_gap(request, name, "explain")
    check_explain(CASES[name], compiler)


@pytest.mark.parametrize("name", FULL_GRAPH)
def test_fullgraph_true_accepts_one_graph_cases(name, request):
    """fullgraph=True raises only for what does not trace: a one-graph case compiles and runs on every call."""
    _expect_gap(request, name, "explain")
    case = CASES[name]
    compiled = compiler.compile(case.fn, fullgraph=True)
    for index, call in enumerate(case.calls()):
        if index in case.raises:
            continue  # what a raising call does under fullgraph=True is not this test's business
        assert_same_outcome(run(case.fn, call), run(compiled, call), close=case.close,
                            where=f"{name} call {index} (fullgraph=True)")


EXPLAIN_GAPS = sorted(n for n, g in KNOWN_GAPS.items() if "explain" in g.parts)


@pytest.mark.parametrize("name", EXPLAIN_GAPS)
def test_fullgraph_true_names_what_does_not_trace(name):
    """Where a case does not trace yet, fullgraph=True raises compiler.Unsupported naming the file and line;
    on the versions the gap is not declared for, the same call traces with fullgraph=True."""
    case = CASES[name]
    call = next(c for i, c in enumerate(case.calls()) if case.expected_nodes(i) is not None)
    if not _gap(name, "explain"):
        result = run(compiler.compile(case.fn, fullgraph=True), call)
        assert result.error is None or not isinstance(result.error, compiler.Unsupported), (
            f"{name} is declared a gap for {sorted(KNOWN_GAPS[name].versions or ())} only, "
            f"but fullgraph=True raised here: {result.error}")
        return
    with pytest.raises(compiler.Unsupported) as info:
        run_result = run(compiler.compile(case.fn, fullgraph=True), call)
        if run_result.error is not None:
            raise run_result.error
    filename = case.fn.__code__.co_filename.replace("\\", "/").rsplit("/", 1)[-1]
    assert re.search(re.escape(filename) + r":\d+", str(info.value)), f"no file:line in {info.value}"


@pytest.fixture(scope="module")
def graph_store():
    if expected.updating() and os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.fail(f"{expected.UPDATE_ENV}=1 under pytest-xdist would let workers overwrite each other's "
                    "graphs: run the update with -p no:xdist (or -n 0)")
    stored = expected.load()
    produced: Dict[str, str] = {}
    yield stored, produced
    if expected.updating() and produced:
        # Merge: graphs this interpreter did not produce (a case that only traces elsewhere) are kept.
        expected.write({**stored, **produced})


@pytest.mark.parametrize("name", FULL_GRAPH)
def test_graph_text(name, graph_store, request):
    _expect_gap(request, name, "graph_text", "explain")
    stored, produced = graph_store
    texts = check_explain(CASES[name], compiler)
    for index, text in enumerate(texts):
        if not text or (index in CASES[name].promotion_sensitive and not NEP50_PROMOTION):
            continue  # a call that raises; or a NumPy 1.x promotion (see tests/corpus/registry.py)
        k = expected.key(name, index)
        text = text.rstrip("\n")  # the file stores blocks without their final newline
        produced[k] = text
        if expected.updating():
            continue
        assert k in stored, (f"no stored graph for {k}; regenerate on purpose with "
                             f"{expected.UPDATE_ENV}=1 (see this module's docstring)")
        assert text == stored[k], f"{k}: str(graph) differs from the stored expectation:\n{text}\n--- stored ---\n{stored[k]}"


def test_stored_graphs_name_existing_calls():
    valid = {expected.key(n, i) for n in FULL_GRAPH for i in range(len(CASES[n].calls()))
             if CASES[n].expected_nodes(i) is not None}
    # Graphs of a family this interpreter cannot import (syntax it lacks) are not stale.
    absent = tuple(f"{family}." for family, opcode in OPTIONAL_FAMILIES.items()
                   if opcode not in opcode_tables.current_table().opcodes)
    stale = sorted(key for key in set(expected.load()) - valid if not key.startswith(absent))
    assert not stale, f"{expected.PATH.name} holds graphs of calls the corpus no longer has: {stale}"


def _fails(name: str, part: str) -> bool:
    case = CASES[name]
    try:
        if part == "differential":
            for backend in BACKENDS:
                compiler.reset()
                check_differential(case, compiler.compile(case.fn, backend=backend))
        elif part == "explain":
            check_explain(case, compiler)
        else:
            stored = expected.load()
            for index, text in enumerate(check_explain(case, compiler)):
                if text and index not in case.promotion_sensitive:
                    assert text.rstrip("\n") == stored.get(expected.key(name, index))
    except AssertionError:
        return True
    return False


@pytest.mark.parametrize("name", sorted(KNOWN_GAPS))
def test_known_gap_still_fails(name):
    assert name in CASES, f"KNOWN_GAPS names {name}, which is not a corpus case"
    gap = KNOWN_GAPS[name]
    assert gap.parts and gap.parts <= set(PARTS), f"{name}: parts {sorted(gap.parts)} not within {PARTS}"
    if gap.versions is not None and _running_version() not in gap.versions:
        failing = [part for part in sorted(gap.parts) if _fails(name, part)]
        assert not failing, (f"{name} fails {failing} on {_running_version()}, where no gap is declared "
                             f"(declared for {sorted(gap.versions)})")
        return
    passing = [part for part in sorted(gap.parts) if not _fails(name, part)]
    assert not passing, f"{name} now passes {passing}: remove it from KNOWN_GAPS (or narrow its parts/versions)"
