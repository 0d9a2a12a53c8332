"""Differential tests of the tracer over the corpus (tests/corpus/), issue 3's "Done means".

For every corpus case and backend: each call through one compiled function returns, prints, raises and
mutates exactly like the plain function.  For every one-graph case on a version the tracer covers:
``explain()`` reports one graph, no break and the declared number of call nodes, and ``str(graph)`` equals
the stored text in tests/corpus/expected_graphs.txt — the same file on every interpreter.

Regenerate that file only on purpose (it merges; run on 3.12, then on the other interpreters):
    TRACEMATRIX_UPDATE_GRAPHS=1 python -m pytest -p no:xdist tests/test_corpus.py -k graph_text

Cases that fail because a feature is not built yet are listed in KNOWN_GAPS with the reason and the part that
fails; ``test_known_gap_still_fails`` keeps that list honest (a gap that starts passing must be removed).
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
from tests.corpus import all_cases
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


def _tracer_covers_this_python() -> bool:
    # The version's table gets its handlers bound by `import compiler`; a version without handlers
    # (3.13 for issue 3) runs every frame natively, so only the differential test applies there.
    return bool(opcode_tables.current_table().handlers)


# NumPy 2 promotes by NEP 50; NumPy 1.x (the only NumPy on CPython 3.8) by value: see registry.Case.
NEP50_PROMOTION = int(np.__version__.split(".")[0]) >= 2
NOT_TRACED = "the tracer binds no handlers for CPython %d.%d (issue 3 covers 3.8-3.12): frames run natively"
BACKENDS = [b for b in ("eager", "numpy") if b in available_backends()]
FULL_GRAPH = sorted(n for n, c in CASES.items() if c.full_graph)


def _skip_unless_traced() -> None:
    if not _tracer_covers_this_python():
        pytest.skip(NOT_TRACED % _running_version())


@pytest.fixture(autouse=True)
def _fresh_compiler():
    compiler.reset()
    yield
    compiler.reset()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_equals_plain(name, backend):
    if _gap(name, "differential"):
        pytest.skip(f"known gap: {KNOWN_GAPS[name].reason}")
    case = CASES[name]
    check_differential(case, compiler.compile(case.fn, backend=backend))
    if case.full_graph and _tracer_covers_this_python() and not _gap(name, "explain") and not case.raises:
        # The calls above went through one compiled function (recompiling for new shapes and dtypes):
        # every compilation must have produced its graph, none may have fallen back to native code.
        native = [(e.compile_id, e.fallback_reason) for e in compiler.events() if e.fallback_reason]
        assert not native, f"{name}: compilations that ran natively: {native}"


@pytest.mark.parametrize("name", FULL_GRAPH)
def test_explain_counts(name):
    _skip_unless_traced()
    if _gap(name, "explain"):
        pytest.skip(f"known gap: {KNOWN_GAPS[name].reason}")
    check_explain(CASES[name], compiler)


@pytest.mark.parametrize("name", FULL_GRAPH)
def test_fullgraph_true_accepts_one_graph_cases(name):
    """fullgraph=True raises only for what does not trace: a one-graph case compiles and runs on every call."""
    _skip_unless_traced()
    if _gap(name, "explain"):
        pytest.skip(f"known gap: {KNOWN_GAPS[name].reason}")
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
    """Where a case does not trace yet, fullgraph=True raises compiler.Unsupported naming the file and line."""
    _skip_unless_traced()
    if not _gap(name, "explain"):
        pytest.skip(f"the gap is declared for {sorted(KNOWN_GAPS[name].versions or ())} only")
    case = CASES[name]
    call = next(c for i, c in enumerate(case.calls()) if case.expected_nodes(i) is not None)
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
def test_graph_text(name, graph_store):
    _skip_unless_traced()
    if _gap(name, "graph_text") or _gap(name, "explain"):
        pytest.skip(f"known gap: {KNOWN_GAPS[name].reason}")
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
    stale = sorted(set(expected.load()) - valid)
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
        pytest.skip(f"the gap is declared for {sorted(gap.versions)} only")
    if gap.parts != {"differential"}:
        _skip_unless_traced()
    passing = [part for part in sorted(gap.parts) if not _fails(name, part)]
    assert not passing, f"{name} now passes {passing}: remove it from KNOWN_GAPS (or narrow its parts/versions)"
