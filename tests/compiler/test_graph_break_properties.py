"""Property tests for graph breaks (issue 4): random NumPy programs with randomly placed breaks.

Hypothesis builds straight-line and branching programs as source text: elementwise NumPy
statements over same-shaped arrays, with calls the tracer must not trace (a function marked
``compiler.disable``), prints, ``.item()`` scalars, ``float()`` conversions and ``if`` on array
reductions placed at random.  Each program runs plain and compiled over several calls (new
values, a new shape, the other sign so branches flip) and everything observable must match;
the frame must break, never fall back whole (the programs have no loops).
"""
from __future__ import annotations

import builtins
import itertools
import re
from typing import List, Tuple

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import compiler  # noqa: E402
from tests.compiler import break_programs as bp  # noqa: E402
from tests.compiler.break_programs import Call  # noqa: E402


@compiler.disable
def _opaque(v):
    return v


class _Block:
    """A user context manager the structured programs enter; it records enter and exit in ``log``."""

    def __init__(self, log, tag):
        self.log, self.tag = log, tag

    def __enter__(self):
        self.log.append(("enter", self.tag))
        return self

    def __exit__(self, *exc):
        self.log.append(("exit", self.tag, exc[0] is not None))
        return False


def _helper(a, b):
    """An inlined callee that breaks: it becomes a frame of its own."""
    c = a * b
    c = _opaque(c)
    return c + 1.0


EXPRESSIONS = ["{a} + {b}", "{a} - {b}", "{a} * {b}", "np.tanh({a})", "np.sin({a}) * {b}",
               "np.maximum({a}, {b})", "{a} * 0.5", "np.abs({a}) + 1.0", "_opaque({a}) + {b}",
               "{b} + 0.1 * {a}.mean().item()", "{a} * float({b}.max())"]
BREAKING_EXPRESSIONS = {"_opaque", ".item()", "float("}
# Statement kinds written from templates: (lines, whether the statement certainly breaks).
TEMPLATES = {
    "opaque": (["{target} = _opaque({a} * 2.0) - {b}"], True),
    "print": (["print({k}, {a}.shape, {a}.sum())", "{target} = {a} + 1.0"], False),
    "item": (["s{k} = {a}.sum().item()", "{target} = {b} * 0.5 + s{k} * 0.01"], True),
    "append": (["log.append(({k}, {a}.shape))", "{target} = {a} * {b}"], False),
    "inplace": (["{a} += {b} * 0.5", "{target} = {a} - 0.25"], False),
    "setitem": (["{a}[0] = {k} + 0.5", "{target} = {a} * 1.0"], False),
    "helper": (["{target} = _helper({a}, {b}) - {a}"], True),
    # containers made in the frame, reachable twice, mutated after a break
    "aliased_list": (["box{k} = [{a}]", "alias{k} = box{k}", "{target} = _opaque({b}) + box{k}[0]",
                      "alias{k}.append({target})", "log.append(len(box{k}))"], True),
    "dict": (["d{k} = {{'a': {a}}}", "{target} = _opaque(d{k})['a'] * 2.0", "d{k}['b'] = {target}",
              "log.append(sorted(d{k}))"], True),
}
STATEMENTS = ["assign", "assign", "opaque", "print", "item", "append", "inplace", "setitem", "aliased_list", "dict"]
COUNTER = itertools.count()


def _expr(template: int, a: str, b: str) -> str:
    return EXPRESSIONS[template].format(a=a, b=b)


@st.composite
def programs(draw, branching: bool, structured: bool = False) -> Tuple[str, bool, bool]:
    """Source of ``def gen(x, w, log)``, whether its top level certainly breaks, and whether it has a
    loop.  ``structured`` wraps runs of statements in ``with`` / ``try``-``finally`` / ``for`` blocks
    and adds breaking helper calls."""
    names = ["x", "w"]
    lines: List[str] = []
    breaks = False
    kinds = STATEMENTS + (["branch", "branch"] if branching else []) + (["helper"] if structured else [])
    indent, looped = "", False
    for k in range(draw(st.integers(1, 6))):
        if structured and not indent and draw(st.integers(0, 3)) == 0:
            opener = draw(st.sampled_from(["with _Block(log, {k}):", "try:", "for _i{k} in range(2):"]))
            lines.append(opener.format(k=k))
            indent = "    "
            looped |= opener.startswith("for")
            closer = f"finally:\n    log.append(('finally', {k}))" if opener == "try:" else ""
        start = len(lines)
        kind = draw(st.sampled_from(kinds))
        a, b = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        target = f"v{k}"
        if kind == "assign":
            text = _expr(draw(st.integers(0, len(EXPRESSIONS) - 1)), a, b)
            breaks |= any(marker in text for marker in BREAKING_EXPRESSIONS)
            lines.append(f"{target} = {text}")
        elif kind in TEMPLATES:
            templates, breaking = TEMPLATES[kind]
            lines += [t.format(k=k, a=a, b=b, target=target) for t in templates]
            breaks |= breaking
        else:
            reduction = draw(st.sampled_from(["sum", "mean", "max", "min"]))
            yes = _expr(draw(st.integers(0, len(EXPRESSIONS) - 1)), a, b)
            no = _expr(draw(st.integers(0, len(EXPRESSIONS) - 1)), b, a)
            lines += [f"if {a}.{reduction}() > 0:", f"    {target} = {yes}", "    log.append('yes')",
                      "else:", f"    {target} = {no}", "    log.append('no')"]
            breaks = True
        names.append(target)
        if indent:
            lines[start:] = [indent + line for line in lines[start:]]
            if draw(st.booleans()) or k == 5:
                lines += closer.split("\n") if closer else []
                indent = ""
    if indent and closer:
        lines += closer.split("\n")
    returned = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3))
    lines.append(f"return ({', '.join(returned)},)")
    source = "def gen(x, w, log):\n" + "".join(f"    {line}\n" for line in lines)
    return source, breaks, looped


def _build(source: str):
    scope = {"np": np, "_opaque": _opaque, "_Block": _Block, "_helper": _helper}
    filename = f"<generated break program {next(COUNTER)}>"
    exec(builtins.compile(source, filename, "exec"), scope)
    return scope["gen"]


def _calls(seed: int) -> List[Call]:
    rng = np.random.default_rng(seed)
    x3, w3 = rng.standard_normal(3), rng.standard_normal(3)
    return [Call((x3, w3, [])),
            Call((rng.standard_normal(3), rng.standard_normal(3), [])),
            Call((-x3, -w3, [])),
            Call((rng.standard_normal((2, 4)), rng.standard_normal((2, 4)), [])),
            Call((x3, w3, []))]


def _check(source: str, breaks: bool, looped: bool, backend: str, seed: int) -> None:
    compiler.reset()
    plain, to_compile = _build(source), _build(source)
    compiled = compiler.compile(to_compile, backend=backend)
    bp.compare_runs(plain, compiled, _calls(seed), f"[{backend}] generated program:\n{source}\n")
    frames = [e for e in compiler.events() if e.frame_name == "gen"]
    assert frames, f"the program never compiled:\n{source}"
    if looped and any("loop" in r for e in compiler.events() for r in e.break_reasons + [e.fallback_reason or ""]):
        return  # a break in a loop may leave the rest of the frame native, when a reason says so
    assert all(e.fallback_reason is None for e in frames), (
        f"whole-frame fallback ({[e.fallback_reason for e in frames]}) of:\n{source}")
    resumes = [e for e in compiler.events() if "__resume_at_" in e.frame_name]
    # F11 (declared): an in-place write to a continuation input that aliases another one runs natively.
    assert all(e.fallback_reason is None or _known_gap_stated([e], "view_stays_a_view") for e in resumes), (
        f"a continuation runs natively ({[(e.frame_name, e.fallback_reason) for e in resumes]}) in:\n{source}")
    if breaks:
        assert frames[0].graph_break_count >= 1, f"no graph break recorded for:\n{source}"
        assert resumes, f"no continuation for:\n{source}"


def _known_gap_stated(events, name: str) -> bool:
    """Whether the events state the reason of the declared gap ``name`` (on an interpreter it applies to)."""
    gap = bp.KNOWN_GAPS.get(name)
    return gap is not None and gap.applies() and any(
        re.search(gap.reason, reason) for e in events for reason in e.break_reasons + [e.fallback_reason or ""])


SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@SETTINGS
@given(program=programs(branching=False), backend=st.sampled_from(["eager", "numpy"]),
       seed=st.integers(0, 2 ** 16))
def test_straight_line_programs_with_breaks(program, backend, seed):
    _check(*program, backend=backend, seed=seed)


@SETTINGS
@given(program=programs(branching=True), backend=st.sampled_from(["eager", "numpy"]),
       seed=st.integers(0, 2 ** 16))
def test_branching_programs_with_breaks(program, backend, seed):
    _check(*program, backend=backend, seed=seed)


@SETTINGS
@given(program=programs(branching=True, structured=True), backend=st.sampled_from(["eager", "numpy"]),
       seed=st.integers(0, 2 ** 16))
def test_structured_programs_with_breaks(program, backend, seed):
    _check(*program, backend=backend, seed=seed)
