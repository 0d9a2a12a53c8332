"""Needless breaks and fallbacks (issue 14, item 4): what no longer breaks, and what still must.

* A write into an array is refused only while a view of it made in the trace can still be
  reached by the program: the temporaries of ``u[1:-1] = 0.5 * (u[:-2] + u[2:])`` are gone
  by the write, ``v = u[1:]`` kept in a local, a list, a closure or an iterator is not.
* Indexing with integer or boolean arrays (or lists) copies: ``g[np.arange(n), labels] -= 1``
  writes into a fresh temporary, then back.
Every function runs compiled and plain on fresh copies of the same arguments; everything a
caller can observe must be equal.
"""
from __future__ import annotations

from typing import Any, Callable, List

import numpy as np
import pytest

import compiler
from opcode_tables import current_table
from tests.compiler import break_programs as bp
from tests.compiler.break_programs import Call


def _stencil(u0, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + 0.1 * (u[:-2] - 2 * u[1:-1] + u[2:])
    return u


def _softmax_grad(p, labels):
    n = p.shape[0]
    g = p.copy()
    g[np.arange(n), labels] -= 1
    return g / n


def _gather_then_write(p, labels):
    q = p * 1.0
    picked = q[np.arange(p.shape[0]), labels]
    q[0, 0] = 7.0
    q[[1, 0], [2, 2]] += picked[:2]
    return picked, q


def _view_of_view_dead(x):
    u = x * 1.0
    w = (u[1:])[1:] * 2.0
    u[0] = 3.0
    return u, w


def _calls(fn: Callable[..., Any]) -> List[Call]:
    rng = np.random.default_rng(3)
    if fn is _stencil:
        return [Call((np.linspace(0.0, 1.0, n), 3)) for n in (6, 6, 9)]
    if fn in (_softmax_grad, _gather_then_write):
        return [Call((rng.random((n, 3)), rng.integers(0, 3, n))) for n in (4, 4, 6)]
    return [Call((rng.random(n),)) for n in (4, 4, 7)]


NO_BREAK = [_stencil, _softmax_grad, _gather_then_write, _view_of_view_dead]


@pytest.mark.parametrize("fn", NO_BREAK, ids=lambda f: f.__name__)
def test_writes_without_live_views_trace_in_one_graph(fn: Callable[..., Any]) -> None:
    compiler.reset()
    bp.compare_runs(fn, compiler.compile(fn, fullgraph=True), _calls(fn), fn.__name__)


def _view_in_local(x):
    u = x * 1.0
    v = u[1:]
    u[1] = 5.0
    return v, u


def _view_in_list(x):
    u = x * 1.0
    keep = [u[::2]]
    u[0] = 5.0
    return keep, u


def _view_in_closure(x):
    u = x * 1.0
    v = u[1:]

    def first():
        return v[0]

    u[1] = 9.0
    return first(), u


def _view_behind_a_view(x):
    u = x * 1.0
    v = u[1:]
    w = v[1:]
    del v
    u[2] = 4.0
    return w, u


def _iterator_over_a_view(x):
    u = x * 1.0
    rows = iter(u[1:])
    u[1] = 6.0
    return next(rows), u


STILL_REFUSED = [_view_in_local, _view_in_list, _view_in_closure, _view_behind_a_view, _iterator_over_a_view]


@pytest.mark.parametrize("fn", STILL_REFUSED, ids=lambda f: f.__name__)
def test_writes_with_a_live_view_still_break_and_match_plain(fn: Callable[..., Any]) -> None:
    compiler.reset()
    bp.compare_runs(fn, compiler.compile(fn), _calls(fn), fn.__name__)
    compiler.reset()
    with pytest.raises(compiler.Unsupported, match="shares memory|view"):
        compiler.compile(fn, fullgraph=True)(*_calls(fn)[0].args)


# --- arrays the tracer does not model, passed in ------------------------------------------------

def _labels_passed_through(x, names):
    y = np.sin(x) * 2.0
    return y, names


def _labels_read(x, names, objs):
    y = x * 2.0
    first = names[0]
    k = len(objs)
    return y + k, first, names, objs


def _label_calls() -> List[Call]:
    return [Call((np.linspace(0.0, 1.0, n), np.array(words), np.array([1, "a", None, words], dtype=object)))
            for n, words in ((3, ["ab", "c"]), (3, ["xyz", "w", "v"]), (5, ["q"]))]


def test_string_arrays_passed_through_need_no_break() -> None:
    compiler.reset()
    calls = [Call(c.args[:2]) for c in _label_calls()]
    fn = _labels_passed_through
    bp.compare_runs(fn, compiler.compile(fn, fullgraph=True), calls, fn.__name__)


def test_string_and_object_arrays_read_break_at_their_use_only() -> None:
    compiler.reset()
    fn = _labels_read
    bp.compare_runs(fn, compiler.compile(fn), _label_calls(), fn.__name__)
    ex = bp.explain_quietly(fn, _label_calls()[0])
    assert [e.fallback_reason for e in ex.events if e.fallback_reason] == []
    assert ex.graph_count >= 1 and all("dtype" in r for r in ex.break_reasons), ex.break_reasons


# --- with np.errstate(...) traced ---------------------------------------------------------------

def _log_ratio(x):
    y = x * 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.log(x) / y
    return np.nan_to_num(z) + y


def _strict_inside(x):
    with np.errstate(divide="raise"):
        r = 1.0 / x
    return r * 2.0


def _warn_outside_ignore_inside(x):
    y = 1.0 / x
    with np.errstate(all="ignore"):
        z = np.log(x)
        with np.errstate(invalid="warn"):
            w = np.sqrt(x - 1.0)
    return y, z, w


def _errstate_calls() -> List[Call]:
    return [Call((np.array(v),)) for v in ([1.0, 2.0, 3.0], [0.0, 1.0, 2.0], [4.0, 0.5], [-1.0, 0.0, 2.0])]


ERRSTATE = [_log_ratio, _strict_inside, _warn_outside_ignore_inside]


@pytest.mark.parametrize("fn", ERRSTATE, ids=lambda f: f.__name__)
def test_errstate_blocks_trace_in_one_graph(fn: Callable[..., Any]) -> None:
    """Warnings, exceptions and values equal plain under every caller error state (a graph
    that meets an error its block does not ignore runs the frame natively)."""
    for caller in ({}, {"all": "ignore"}, {"all": "raise"}, {"divide": "warn", "invalid": "ignore"}):
        compiler.reset()
        with np.errstate(**caller):
            bp.compare_runs(fn, compiler.compile(fn, fullgraph=True), _errstate_calls(), f"{fn.__name__} {caller}")


def test_a_break_inside_an_errstate_block_enters_it_natively() -> None:
    compiler.reset()
    fn = bp.errstate_around_break
    bp.compare_runs(fn, compiler.compile(fn), _errstate_calls(), fn.__name__)


# The with statements of every interpreter (3.14+ loads __exit__ and __enter__ with LOAD_SPECIAL
# before the enter call; 3.11-3.13 BEFORE_WITH; up to 3.10 SETUP_WITH): the same answers.

def _all_raise(x):
    with np.errstate(all="raise"):
        r = np.log(x) / x
    return r + 1.0


def _nested_raise_then_ignore(x):
    with np.errstate(all="raise"):
        y = x * 3.0
        with np.errstate(divide="ignore"):
            z = 1.0 / x
        w = np.sqrt(y)
    return z + w


def _floating_point_error_caught(x):
    try:
        with np.errstate(all="raise"):
            y = x / (x - 1.0)
    except FloatingPointError:
        return x * 0.0
    return y


def _python_exception_caught(x):
    try:
        with np.errstate(divide="ignore"):
            y = 1.0 / x
            raise KeyError("inside")
    except KeyError as e:
        return y, str(e)


def _warnings_under_errstate(x):
    with np.errstate(divide="warn", invalid="ignore"):
        a = 1.0 / x
        b = np.sqrt(x - 1.0)
    return a, b


ERRSTATE_WITH = [_all_raise, _nested_raise_then_ignore, _floating_point_error_caught,
                 _python_exception_caught, _warnings_under_errstate]


def _traced_whole(fn: Callable[..., Any]) -> bool:
    # 3.8's with cleanup (WITH_CLEANUP_START) is not traced for an exception leaving the block:
    # the frame breaks at the with statement there (and equals plain all the same).
    return fn is not _python_exception_caught or "WITH_CLEANUP_START" not in current_table()


@pytest.mark.parametrize("fn", ERRSTATE_WITH, ids=lambda f: f.__name__)
def test_errstate_with_statements_trace_without_breaks(fn: Callable[..., Any]) -> None:
    """Values, exceptions and warnings equal plain (under several caller error states) with the
    whole frame in one graph: fullgraph=True would raise at a break or a fallback."""
    whole = _traced_whole(fn)
    for caller in ({}, {"all": "ignore"}, {"all": "warn"}, {"all": "raise"}):
        compiler.reset()
        with np.errstate(**caller):
            bp.compare_runs(fn, compiler.compile(fn, fullgraph=whole), _errstate_calls(), f"{fn.__name__} {caller}")
    if not whole:
        return
    ex = bp.explain_quietly(fn, _errstate_calls()[0])
    assert [e.fallback_reason for e in ex.events if e.fallback_reason] == []
    assert (ex.graph_count, ex.graph_break_count) == (1, 0), ex.break_reasons
