"""Breaks inside loops resumed compiled (issue 14, item 3).

A break inside a loop body continues in a continuation that resumes inside the loop; the
loop's FOR_ITER, reached with the iterator from an earlier stage, is a break with two exits
(the next item: the body again; exhaustion: the code after the loop).  Every stage is
compiled once and then hit in its cache, so a training loop with ``float(loss)`` per step
runs its NumPy work compiled every iteration, with no frame running natively.  The programs
themselves (plain == compiled) run in test_graph_breaks through break_programs.
"""
from __future__ import annotations

import re
from typing import Any, List

import numpy as np
import pytest

import compiler
from compiler.events import all_events
from opcode_tables import current_table
from tests.compiler import break_programs as bp

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def train(x, y, w, steps):
    losses = []
    for i in range(steps):
        pred = x @ w
        err = pred - y
        loss = (err * err).mean()
        losses.append(float(loss))
        w = w - 0.01 * (x.T @ err)
    return w, losses


def _data(n: int = 8, d: int = 3) -> List[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.random((n, d)), rng.random(n), np.zeros(d)]


def _native(events: List[Any]) -> List[str]:
    """Every frame that ran natively, with its reason, and every break that left the rest of a
    frame to plain Python."""
    found = [f"{e.frame_name}: {e.fallback_reason}" for e in events if e.fallback_reason]
    found += [r for e in events for r in e.break_reasons if re.search(r"rest of the frame runs natively", r)]
    return found


def test_training_loop_explain_shows_no_native_frame() -> None:
    x, y, w = _data()
    ex = compiler.explain(train, x, y, w, 5)
    assert _native(ex.events) == [], _native(ex.events)
    want_w, want_losses = train(x, y, w, 5)
    got_w, got_losses = ex.result
    assert np.array_equal(got_w, want_w) and got_losses == want_losses
    # The root frame (the first iteration up to float()), the rest of the body, the next body,
    # and the code after the loop: the NumPy work of every iteration is in a graph.
    assert ex.graph_count >= 3
    assert not any("loop" in r and "natively" in r for r in ex.break_reasons), ex.break_reasons


def test_training_loop_stages_hit_their_cache() -> None:
    compiled = compiler.compile(train)
    x, y, w = _data()
    before = len(all_events())
    got = compiled(x, y, w, 40)
    first = all_events()[before:]
    want = train(x, y, w, 40)
    assert np.array_equal(got[0], want[0]) and got[1] == want[1]
    assert _native(first) == []
    # Each stage compiled once, whatever the number of iterations: no recompiles.
    assert [e.recompile_reason for e in first] == [None] * len(first), [e.recompile_reason for e in first]
    assert len(first) <= 6, [e.frame_name for e in first]
    # A second call with other values (same shapes and step count, which the root frame's
    # range() reads): every stage inside the loop hits its cache.  (The stage after the loop,
    # compiled last, returns ``losses``: an eagerly wrapped list, guarded by its items' values,
    # so it compiles again for new values.)
    before = len(all_events())
    x2, y2, w2 = (v * 0.5 for v in _data())
    got = compiled(x2, y2, w2, 40)
    want = train(x2, y2, w2, 40)
    assert np.array_equal(got[0], want[0]) and got[1] == want[1]
    again = {e.frame_name for e in all_events()[before:]}
    assert again <= {first[-1].frame_name}, (again, [e.frame_name for e in first])


def test_loop_step_counts_iterations_as_plain() -> None:
    seen: List[int] = []

    class Counting:
        def __iter__(self):
            for k in range(5):
                seen.append(k)
                yield k

    @compiler.disable
    def opaque(v):
        return v

    def fn(x):
        y = x * 1.0
        for k in Counting():
            y = opaque(y) + k
        return y

    plain = fn(np.ones(3))
    steps = list(seen)
    seen.clear()
    assert np.array_equal(compiler.compile(fn)(np.ones(3)), plain)
    assert seen == steps


def test_loop_over_a_generator_matches_plain() -> None:
    """A generator the loop walks, live across a break in the body: the tracer steps it at
    trace time and cannot hand it over, so the frame may run natively (known gap F14), and
    only with that reason."""
    def fn(x):
        y = x * 1.0
        for k in bp.ramp(3):
            y = bp.opaque(y) + k
        return y

    compiler.reset()
    bp.compare_runs(fn, compiler.compile(fn), bp.one_array(), "loop_over_a_generator")
    native = _native(compiler.events())
    assert all("generator" in n for n in native), native


# Loop programs of break_programs whose frames may still run natively, and why.
STATED_NATIVE = {
    "loop_raises_out_of_the_frame": r"raises RuntimeError",
}
if "PUSH_NULL" not in current_table():
    # 3.8-3.10: the with statement's exit leaves a NULL a continuation cannot be given
    # (3.8's WITH_CLEANUP_START, the known gap F19): that stage runs natively.
    STATED_NATIVE["loop_for_inside_try_and_c_manager"] = r"a NULL can only be rebuilt"
if not current_table().opcodes["GET_ITER"].resumable_after:
    # 3.15: GET_ITER run natively may leave a raw iteration index on the stack, which no
    # continuation can receive; a loop over an iterable the tracer cannot iterate is native.
    STATED_NATIVE["loop_counts_its_steps"] = r"cannot be resumed right after GET_ITER"
LOOP_PROGRAMS = [p for p in bp.PROGRAMS if p.kind == "loop"]
# A scalar that a stage's trace reads (a loop counter in arithmetic or a condition, float(...)
# compared or put in a tuple) is a constant of the trace, guarded by value: across iterations
# and calls with new shapes the stage compiles once per value until the cache limit, then
# that stage (never the root frame) runs natively.  Unspecialised scalars (graph inputs)
# remove this; until then it is the one stated reason.
SPECIALISED_SCALARS = r"^\w+\.__resume_at_\d+: cache limit reached"


@pytest.mark.parametrize("prog", LOOP_PROGRAMS, ids=[p.name for p in LOOP_PROGRAMS])
def test_loop_programs_run_compiled(prog: bp.Program) -> None:
    """No frame of a loop program runs natively unless it has a stated reason (a comprehension
    that cannot be inlined is a callee of its own, not this frame)."""
    compiler.reset()
    compiled = compiler.compile(prog.fn)
    bp.compare_runs(prog.fn, compiled, prog.calls(), prog.name)
    native = [n for n in _native(compiler.events()) if "<listcomp>" not in n
              and not re.search(SPECIALISED_SCALARS, n)]
    allowed = STATED_NATIVE.get(prog.name)
    if allowed is not None:
        assert all(re.search(allowed, n) for n in native), native
    else:
        assert native == [], native


# --- property: random loops with breaks inside ----------------------------------------------------

@compiler.disable
def _opaque(v):
    return v


BODY = [
    "y = y * 1.25 + {k}",
    "y = _opaque(y) - 0.5",
    "log.append(float(y.sum()))",
    "log.append(('k', {k}))",
    "y = np.tanh(y) + _opaque(y)",
    "if {k} % 2 == 0:\n    y = y + float(y.mean())",
    "if float(y.sum()) > 0:\n    log.append('pos')\nelse:\n    log.append('neg')",
    "if {k} == 2:\n    continue",
    "if {k} == 3:\n    break",
    "try:\n    y = _opaque(y) / 2.0\n    if {k} == 1:\n        raise ValueError({k})\nexcept ValueError as e:\n"
    "    log.append(('caught', e.args))",
]
HEADERS = ["for {k} in range({n}):", "for {k} in [0, 1, 2, 3, 4][:{n}]:", "for {k}, _v in enumerate(range({n})):"]


def _indent(text: str, by: str) -> str:
    return "\n".join(by + line for line in text.splitlines())


@st.composite
def loop_programs(draw: Any) -> str:
    header = draw(st.sampled_from(HEADERS))
    n = draw(st.integers(0, 5))
    body = draw(st.lists(st.sampled_from(BODY), min_size=1, max_size=4))
    nested = draw(st.booleans())
    use_else = draw(st.booleans())
    lines = ["def program(x, log):", "    y = x * 1.0", "    k = -1", "    " + header.format(k="k", n=n)]
    inner = "\n".join(stmt.format(k="k") for stmt in body)
    if nested:
        inner = "for j in range(2):\n" + _indent("y = y + j\n" + inner.replace("continue", "pass"), "    ")
    lines.append(_indent(inner, "        "))
    if use_else:
        lines += ["    else:", "        log.append('else')"]
    lines.append("    return y, k")
    return "\n".join(lines) + "\n"


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(source=loop_programs())
def test_random_loops_with_breaks_match_plain(source: str) -> None:
    scope = {"np": np, "_opaque": _opaque}
    exec(compile(source, f"<loop program {abs(hash(source))}>", "exec"), scope)
    fn = scope["program"]
    calls = [bp.Call((bp.arr((3,), sign, seed), [])) for sign, seed in ((1.0, 0), (-1.0, 1), (1.0, 2))]
    compiler.reset()
    bp.compare_runs(fn, compiler.compile(fn), calls, source)
