"""Run a corpus case plain and compiled and check that nothing observable differs; check explain() expectations.

Everything observable is compared: the return value (exact types and values, see ``compare.assert_same``),
what was printed, the exception raised (type and message), the arguments after the call (mutations),
which returned arrays share memory with the inputs, the warnings issued (category, message and
location, in order, and in order with the printed text: each one is written into the captured stdout
as ``[Category: message]``), NumPy's floating-point error state after the call (``np.geterr()``)
and the reference counts of the arguments after a call that returned.
The plain run gets a deep copy of the arguments.  Every run records warnings under
``simplefilter("always")`` and starts from, and is put back to, the error state of the test.
"""
from __future__ import annotations

import contextlib
import copy
import io
import os
import sys
import traceback
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np

from .compare import aliasing, assert_same
from .registry import Call, Case


@dataclass
class Outcome:
    value: Any
    error: Optional[BaseException]
    stdout: str
    arguments: Any           # (args, kwargs) after the call
    aliases: Any             # compare.aliasing(value, arguments)
    # (category, message, file name, line) of each warning, in order; None: not recorded
    warnings: Optional[List[Tuple[str, str, str, int]]] = None
    errstate: Optional[Dict[str, str]] = None   # np.geterr() right after the call
    # sys.getrefcount of each argument the run made its own copy of, right after a call that
    # returned (a cache or a generated frame that keeps an argument alive shows here); None when
    # the call raised (its traceback's frames hold the arguments).
    refcounts: Optional[List[int]] = None


def argument_refcounts(call: Call, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> List[int]:
    """Reference counts of the arguments ``copy.deepcopy`` copied (shared immutable ones, such as
    small ints and tuples of them, are referenced from everywhere and are left out)."""
    pairs = list(zip(call.args, args)) + [(call.kwargs[k], kwargs[k]) for k in sorted(kwargs)]
    return [sys.getrefcount(copy_) for original, copy_ in pairs if copy_ is not original]


@contextlib.contextmanager
def observing(stream: Any) -> Iterator[Tuple[List[Tuple[str, str, str, int]], Dict[str, str]]]:
    """Record every warning (into the list yielded, and as a line into ``stream`` so that its
    order relative to printed text is kept) and restore NumPy's error state afterwards; the
    dict yielded is to be filled with ``np.geterr()`` by the caller right after the call."""
    seen: List[Tuple[str, str, str, int]] = []
    errstate: Dict[str, str] = {}

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
             line: Any = None) -> None:
        seen.append((category.__name__, str(message), os.path.basename(filename), lineno))
        stream.write(f"[{category.__name__}: {message}]\n")

    with warnings.catch_warnings(), np.errstate():
        warnings.simplefilter("always")
        warnings.showwarning = show
        yield seen, errstate


def run(fn: Callable[..., Any], call: Call) -> Outcome:
    args, kwargs = copy.deepcopy((call.args, call.kwargs))
    out = io.StringIO()
    value, error = None, None
    with contextlib.redirect_stdout(out), observing(out) as (seen, errstate):
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:  # the plain function's exceptions are part of its behaviour
            error = exc
        errstate.update(np.geterr())
    refcounts = argument_refcounts(call, args, kwargs) if error is None else None
    return Outcome(value, error, out.getvalue(), (args, kwargs), aliasing(value, (args, kwargs)),
                   warnings=seen, errstate=errstate, refcounts=refcounts)


def assert_same_outcome(plain: Outcome, compiled: Outcome, *, close: Optional[str], where: str) -> None:
    if plain.error is not None:
        assert compiled.error is not None, f"{where}: the plain call raised {plain.error!r}, the compiled one returned"
        assert type(compiled.error) is type(plain.error) and str(compiled.error) == str(plain.error), (
            f"{where}: compiled raised {compiled.error!r}, plain raised {plain.error!r}")
    else:
        if compiled.error is not None:
            detail = "".join(traceback.format_exception(type(compiled.error), compiled.error,
                                                        compiled.error.__traceback__))
            raise AssertionError(f"{where}: the compiled call raised, the plain one did not:\n{detail}")
        assert_same(plain.value, compiled.value, close=close, path=f"{where}: result")
        assert compiled.aliases == plain.aliases, (
            f"{where}: returned arrays share memory with the inputs differently "
            f"(compiled {compiled.aliases}, plain {plain.aliases})")
    if plain.warnings is not None and compiled.warnings is not None:
        assert compiled.warnings == plain.warnings, (
            f"{where}: warnings {compiled.warnings}, plain issued {plain.warnings}")
    if plain.errstate is not None and compiled.errstate is not None:
        assert compiled.errstate == plain.errstate, (
            f"{where}: np.geterr() after the call is {compiled.errstate}, plain {plain.errstate}")
    if plain.refcounts is not None and compiled.refcounts is not None:
        assert compiled.refcounts == plain.refcounts, (
            f"{where}: reference counts of the arguments after the call are {compiled.refcounts}, "
            f"plain {plain.refcounts} (something the compiler made keeps an argument alive)")
    assert compiled.stdout == plain.stdout, f"{where}: printed {compiled.stdout!r}, plain printed {plain.stdout!r}"
    assert_same(plain.arguments, compiled.arguments, close=close, path=f"{where}: arguments after the call")


def check_differential(case: Case, compiled_fn: Callable[..., Any]) -> None:
    """Every call of ``case`` through one compiled function (so recompiles happen) equals the plain call."""
    for index, call in enumerate(case.calls()):
        plain = run(case.fn, call)
        compiled = run(compiled_fn, call)
        assert_same_outcome(plain, compiled, close=case.close, where=f"{case.name} call {index}")


def check_explain(case: Case, compiler: Any) -> List[str]:
    """explain() of each call has the declared graph/break/node counts; returns the graphs' texts per call."""
    texts: List[str] = []
    for index, call in enumerate(case.calls()):
        nodes = case.expected_nodes(index)
        if nodes is None:
            texts.append("")
            continue
        compiler.reset()
        args, kwargs = copy.deepcopy((call.args, call.kwargs))
        with contextlib.redirect_stdout(io.StringIO()):
            ex = compiler.explain(case.fn, *args, **kwargs)
        where = f"{case.name} call {index}"
        reasons = f" (break reasons: {list(ex.break_reasons)}; fallback: {_fallback(ex)})"
        assert ex.graph_count == case.graphs, f"{where}: graph_count {ex.graph_count} != {case.graphs}{reasons}"
        assert ex.graph_break_count == case.breaks, (
            f"{where}: graph_break_count {ex.graph_break_count} != {case.breaks}{reasons}")
        # ops_per_graph lists, per graph, the targets of its call nodes (as torch._dynamo.explain does).
        counts = [len(ops) for ops in ex.ops_per_graph]
        assert counts == [nodes], f"{where}: {counts} call nodes, expected [{nodes}]: {list(ex.ops_per_graph)}"
        texts.append("\n".join(str(g) for g in ex.graphs))
    return texts


def _fallback(ex: Any) -> Any:
    return [getattr(e, "fallback_reason", None) for e in getattr(ex, "events", [])]
