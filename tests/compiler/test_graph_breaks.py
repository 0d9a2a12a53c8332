"""Graph breaks (issue 4), through the public API only.

Each program of ``break_programs`` runs plain and compiled (eager and numpy backends) over
several calls (fresh values, new shapes and dtypes, branches both ways) and nothing a caller
can observe may differ.  On top of that: a break is a break (more than one graph, no
whole-frame fallback), fullgraph=True raises Unsupported naming the construct and file:line,
explain lists every graph and reason, continuations are frames of their own that are reused,
and every generated code object disassembles.
"""
from __future__ import annotations

import dis
import io
import os
import re
import types
from typing import Any, List

import numpy as np
import pytest

import compiler
import compiler.debug
from tests.compiler import break_programs as bp
from tests.compiler.break_programs import Call

BACKENDS = ["eager", "numpy"]
BREAKING = [p for p in bp.PROGRAMS if p.breaks]
LOOP_WORDS = re.compile(r"loop|FOR_ITER|GET_ITER|while|backward", re.IGNORECASE)
WHERE = re.compile(r"\(at [^()]+:\d+\)")


def _ids(programs: List[bp.Program]) -> List[str]:
    return [f"{p.kind}-{p.name}" for p in programs]


def _assert_compiled_not_fallback(prog: bp.Program, events: List[Any]) -> None:
    top = bp.top_event(events, prog.fn)
    if top.fallback_reason is None:
        return
    assert prog.loop and LOOP_WORDS.search(top.fallback_reason), (
        f"{prog.name}: the whole frame runs natively ({top.fallback_reason}); a graph break was expected")


def _loop_stated(prog: bp.Program, ex: Any) -> bool:
    """A break in a loop may leave the rest of the frame native, if a reason says so."""
    top = bp.top_event(ex.events, prog.fn)
    stated = [top.fallback_reason or ""] + list(ex.break_reasons)
    return prog.loop and any(LOOP_WORDS.search(reason) for reason in stated)


# --- every program: compiled observes exactly what plain observes ---------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("prog", bp.PROGRAMS, ids=_ids(bp.PROGRAMS))
def test_compiled_matches_plain(prog: bp.Program, backend: str):
    compiled = compiler.compile(prog.fn, backend=backend)
    bp.compare_runs(prog.fn, compiled, prog.calls(), f"{prog.name}[{backend}]")
    with bp.tolerating_known_gap(prog):
        _assert_compiled_not_fallback(prog, compiler.events())


def test_closure_state_across_a_break():
    plain, to_compile = bp.make_counter_closure(), bp.make_counter_closure()
    compiled = compiler.compile(to_compile)
    bp.compare_runs(plain, compiled, bp.one_array(), "closure")
    assert bp.top_event(compiler.events(), to_compile).fallback_reason is None
    # The closure's cell is shared with the function object: the compiled calls wrote it.
    assert compiled(np.ones(2))[1] == plain(np.ones(2))[1]


# --- a break is a break: graphs on both sides, reasons with file:line ------------------------------

@pytest.mark.parametrize("prog", bp.PROGRAMS, ids=_ids(bp.PROGRAMS))
def test_explain_shows_the_break(prog: bp.Program):
    ex = bp.explain_quietly(prog.fn, prog.calls()[0])
    plain = bp.run_once(prog.fn, prog.calls()[0])
    if plain.error is None and ex.graphs is not None:  # explain's answer carries the call's result
        bp.assert_same(plain.value, ex.result, path=f"{prog.name}: explain().result")
    with bp.tolerating_known_gap(prog):
        _assert_explain_shows_the_break(prog, ex)


def _assert_explain_shows_the_break(prog: bp.Program, ex: Any) -> None:
    state = bp.describe(ex)
    top = bp.top_event(ex.events, prog.fn)
    if _loop_stated(prog, ex):
        return
    assert top.fallback_reason is None, f"{prog.name}: whole-frame fallback: {state}"
    for reason in ex.break_reasons:
        assert WHERE.search(reason), f"{prog.name}: break reason without (at file:line): {reason!r}"
    if not prog.breaks:
        return
    assert top.graph_break_count >= 1, f"{prog.name}: no break recorded on the top frame: {state}"
    assert ex.graph_break_count >= 1, state
    if prog.numpy_both_sides:
        assert ex.graph_count >= 2, f"{prog.name}: NumPy work on both sides of the break: {state}"
    for line in bp.break_lines(prog.fn):
        assert any(line + ")" in reason for reason in ex.break_reasons), (
            f"{prog.name}: no break reason at {line}: {state}")


@pytest.mark.parametrize("prog", BREAKING, ids=_ids(BREAKING))
def test_explain_lists_every_graph(prog: bp.Program):
    ex = bp.explain_quietly(prog.fn, prog.calls()[0])
    if ex.graphs is not None:  # None: the call raised (see bp.explain_quietly)
        assert len(ex.graphs) == ex.graph_count, f"{prog.name}: {len(ex.graphs)} graphs listed: {bp.describe(ex)}"
    assert sum(e.graph_count for e in ex.events) == ex.graph_count
    assert sum(e.graph_break_count for e in ex.events) == ex.graph_break_count


@pytest.mark.parametrize("prog", BREAKING, ids=_ids(BREAKING))
def test_fullgraph_raises_at_the_first_break(prog: bp.Program):
    call = prog.calls()[0]
    compiled = compiler.compile(prog.fn, fullgraph=True)
    bp.reset_globals()
    with pytest.raises(compiler.Unsupported) as info:
        with bp.contextlib.redirect_stdout(io.StringIO()):
            compiled(*call.args, **call.kwargs)
    message = str(info.value)
    assert any(word.lower() in message.lower() for word in prog.construct) or \
        prog.loop and LOOP_WORDS.search(message), (
        f"{prog.name}: {message!r} names none of {prog.construct}")
    where = re.search(r"([^\s()]+):(\d+)\)?$", message)
    assert where, f"{prog.name}: no file:line in {message!r}"
    accepted = bp.break_lines(prog.fn)[prog.fullgraph_break:prog.fullgraph_break + 1]
    accepted += [line for callee in prog.callees for line in bp.break_lines(callee)]  # met first, inside
    if prog.name == "json_between":  # json.dumps is Python code: it may break inside the json package
        accepted.append(os.sep + "json" + os.sep)
    assert any(line in message for line in accepted), f"{prog.name}: {message!r} is not at {accepted}"


NOT_BREAKING = [p for p in bp.PROGRAMS if not p.breaks]


@pytest.mark.parametrize("prog", NOT_BREAKING, ids=_ids(NOT_BREAKING))
def test_fullgraph_accepts_what_needs_no_break(prog: bp.Program):
    bp.compare_runs(prog.fn, compiler.compile(prog.fn, fullgraph=True), prog.calls()[:2], prog.name)


# --- continuations: frames of their own, compiled lazily, reused ---------------------------------

CONTINUATION_PROGRAMS = ["disabled_between", "two_breaks", "branch_return", "scalar_item", "with_break_inside",
                         "try_except_after_break", "break_mid_expression", "kwargs_break_in_argument",
                         "side_effects_in_order"]


@pytest.mark.parametrize("name", CONTINUATION_PROGRAMS)
def test_continuations_are_their_own_frames(name: str):
    prog = bp.program_by_name(name)
    ex = bp.explain_quietly(prog.fn, prog.calls()[0])
    resumes = bp.continuation_events(ex.events)
    assert resumes, f"{name}: no __resume_at_ frame: {bp.describe(ex)}"
    expected = len(bp.break_lines(prog.fn)) if prog.kind != "branch" else 1
    assert len(resumes) >= expected, bp.describe(ex)
    for event in resumes:
        assert event.ir_count > 0, f"{event.frame_name}: ir_count {event.ir_count}"
        assert prog.fn.__name__ in event.frame_name, f"{event.frame_name} does not name {prog.fn.__name__}"
        assert re.search(r"__resume_at_\d+", event.frame_name), event.frame_name
    assert ex.graph_count == sum(e.graph_count for e in ex.events)


def _call_counting_events(compiled: Any, call: Call) -> int:
    before = len(compiler.events())
    bp.reset_globals()
    with bp.contextlib.redirect_stdout(io.StringIO()):
        compiled(*bp.copy.deepcopy(call.args), **bp.copy.deepcopy(call.kwargs))
    return len(compiler.events()) - before


def _recompiles_on_a_second_call(prog: bp.Program) -> List[str]:
    """Frames (with their recompile reasons) compiled again by a second call with the same shapes."""
    compiled = compiler.compile(prog.fn)
    calls = prog.calls()  # the first two: same shapes and signs, fresh values
    first = _call_counting_events(compiled, calls[0])
    assert first >= 2, f"{prog.name}: a break should compile the frame and a continuation, got {first} events"
    again = _call_counting_events(compiled, calls[1])
    return [f"{e.frame_name}: {e.recompile_reason}" for e in compiler.events()[len(compiler.events()) - again:]]


REUSED = ["disabled_between", "two_breaks", "branch_then_join", "with_break_inside", "inlined_one_deep",
          "side_effects_in_order", "append_of_native_result", "cell_written_after_break", "object_made_before_break",
          "method_of_user_object_breaks"]


@pytest.mark.parametrize("name", REUSED)
def test_continuations_are_reused_when_guards_pass(name: str):
    again = _recompiles_on_a_second_call(bp.program_by_name(name))
    assert not again, f"{name}: the second call with the same shapes compiled again: {again}"


@pytest.mark.parametrize("name", ["scalar_float", "scalar_item", "side_effects_with_scalar"])
def test_data_dependent_scalars_beyond_the_cache_limit(name: str):
    """A new scalar on every call (more calls than cache entries allowed) stays correct."""
    prog = bp.program_by_name(name)
    template = prog.calls()[0]
    calls = [Call((template.args[0] + 0.125 * k,) + bp.copy.deepcopy(template.args[1:]))
             for k in range(compiler.config.cache_limit + 4)]
    bp.compare_runs(prog.fn, compiler.compile(prog.fn), calls, name)
    assert bp.top_event(compiler.events(), prog.fn).fallback_reason is None


def test_each_branch_side_compiles_once():
    compiled = compiler.compile(bp.branch_return)
    positive, negative = Call((bp.arr((3,), 1.0, 0),)), Call((bp.arr((3,), -1.0, 1),))
    assert _call_counting_events(compiled, positive) >= 2
    assert _call_counting_events(compiled, negative) >= 1  # the other side's continuation
    for call in (positive, negative, positive):
        assert _call_counting_events(compiled, call) == 0


def test_new_shape_recompiles_with_a_reason():
    compiled = compiler.compile(bp.disabled_between)
    _call_counting_events(compiled, Call((bp.arr((3,), 1.0, 0),)))
    added = _call_counting_events(compiled, Call((bp.arr((2, 4), 1.0, 0),)))
    assert added >= 1
    newest = [e for e in compiler.events() if e.frame_name == "disabled_between"]
    assert len(newest) == 2 and newest[-1].recompile_reason, [e.recompile_reason for e in newest]
    assert "shape" in newest[-1].recompile_reason or "ndim" in newest[-1].recompile_reason


# --- inlined callees that break become frames of their own -------------------------------------------

@pytest.mark.parametrize("name, callees", [
    ("inlined_one_deep", ["helper_breaks"]),
    ("inlined_three_deep", ["helper_outer", "helper_middle", "helper_breaks"]),
    ("inlined_branching_callee", ["helper_branch"]),
])
def test_breaking_callee_is_compiled_as_its_own_frame(name: str, callees: List[str]):
    prog = bp.program_by_name(name)
    ex = bp.explain_quietly(prog.fn, prog.calls()[0])
    frames = [e.frame_name for e in ex.events]
    for callee in callees:
        own = [e for e in ex.events if e.frame_name == callee]
        assert own, f"{name}: no compiled frame for {callee}: {frames}"
        assert own[0].fallback_reason is None, f"{callee} runs natively: {own[0].fallback_reason}"
    assert bp.top_event(ex.events, prog.fn).fallback_reason is None, bp.describe(ex)


# --- the debug hook: every generated code object disassembles ----------------------------------------

@pytest.mark.parametrize("prog", BREAKING, ids=_ids(BREAKING))
def test_debug_code_objects_disassemble(prog: bp.Program):
    compiled = compiler.compile(prog.fn)
    for call in prog.calls()[:3]:
        bp.run_once(compiled, call)
    listed = compiler.debug.code_objects(compiled)
    with bp.tolerating_known_gap(prog):
        _assert_code_objects_disassemble(prog, compiled, listed)


def _assert_code_objects_disassemble(prog: bp.Program, compiled: Any, listed: List[Any]) -> None:
    assert listed, f"{prog.name}: no code objects listed after compiled calls"
    for label, code in listed:
        assert isinstance(label, str) and isinstance(code, types.CodeType), (label, code)
        assert list(dis.Bytecode(code)), f"{label}: no instructions"
        out = io.StringIO()
        dis.dis(code, file=out)
        assert out.getvalue().strip()
    if not prog.loop:
        names = [code.co_name for _, code in listed] + [label for label, _ in listed]
        reasons = [e.fallback_reason for e in compiler.events()] + [r for e in compiler.events()
                                                                    for r in e.break_reasons]
        assert any("__resume_at_" in n for n in names), f"{prog.name}: no continuation listed: {names} {reasons}"
    dumped = compiler.debug.dump(compiled)
    assert isinstance(dumped, str)
    for label, _ in listed:
        assert label in dumped, f"{label} missing from dump()"


def _failures(prog: bp.Program) -> List[str]:
    """The messages of every check above that fails for ``prog`` (correctness failures included)."""
    failures = []

    def compiled_check() -> None:
        compiler.reset()
        bp.compare_runs(prog.fn, compiler.compile(prog.fn), prog.calls(), prog.name)
        _assert_compiled_not_fallback(prog, compiler.events())

    def explain_check() -> None:
        compiler.reset()
        _assert_explain_shows_the_break(prog, bp.explain_quietly(prog.fn, prog.calls()[0]))

    def debug_check() -> None:
        compiler.reset()
        compiled = compiler.compile(prog.fn)
        for call in prog.calls()[:3]:
            bp.run_once(compiled, call)
        _assert_code_objects_disassemble(prog, compiled, compiler.debug.code_objects(compiled))

    for check in (compiled_check, explain_check, debug_check):
        try:
            check()
        except AssertionError as exc:
            failures.append(str(exc))
    return failures


@pytest.mark.parametrize("name", sorted(bp.KNOWN_GAPS))
def test_known_gap_still_reproduces(name: str):
    """A declared gap must still fail its check with the stated message here; once it is fixed,
    this fails: remove the entry from KNOWN_GAPS.  Where the gap is not declared, the program
    passes every check."""
    gap = bp.KNOWN_GAPS[name]
    failures = _failures(bp.program_by_name(name))
    if not gap.applies():
        assert not failures, f"{name} fails here, where its gap is not declared ({gap.versions} only): {failures}"
        return
    assert any(re.search(gap.reason, text) for text in failures), (
        f"{name}: {gap.finding} no longer reproduces (failures: {failures}): remove it from KNOWN_GAPS")


# --- the checker itself notices every kind of difference ---------------------------------------------

def _impostors() -> List[Any]:
    """Stand-ins for a wrong compiled side_effects_in_order, each differing in one observable way."""
    real = bp.side_effects_in_order

    def wrong_value(x, log, table):
        return real(x, log, table) + 1e-12

    def extra_print(x, log, table):
        out = real(x, log, table)
        print("extra")
        return out

    def no_global_store(x, log, table):
        out = real(x, log, table)
        bp.REGISTRY.clear()
        return out

    def reordered(x, log, table):
        out = real(x, log, table)
        bp.TRACE.reverse()
        return out

    def mutation_lost(x, log, table):
        return real(x.copy(), log, table)

    def other_message(x, log, table):
        real(x, log, table)
        raise ValueError("compiled")

    return [wrong_value, extra_print, no_global_store, reordered, mutation_lost, other_message]


@pytest.mark.parametrize("impostor", _impostors(), ids=lambda f: f.__name__)
def test_checker_notices_differences(impostor: Any):
    calls = bp.program_by_name("side_effects_in_order").calls()[:1]
    with pytest.raises(AssertionError):
        bp.compare_runs(bp.side_effects_in_order, impostor, calls, "impostor")


# --- guards of continuations: globals rebound between calls ------------------------------------------

def test_global_rebound_between_calls_reaches_the_continuation(monkeypatch):
    compiled = compiler.compile(bp.reads_global_after_break)
    calls = bp.one_array()[:2]
    for scale in (2.0, 5.0, -1.0):
        monkeypatch.setattr(bp, "SCALE", scale)
        bp.compare_runs(bp.reads_global_after_break, compiled, calls, f"SCALE={scale}")


def test_compiled_function_used_as_a_method():
    class Holder:
        def __init__(self) -> None:
            self.k = 2.0

        def step(self, x):
            self.k += 1.0
            y = bp.opaque(x * self.k)
            self.k *= 2.0
            return y + self.k

    Holder.compiled_step = compiler.compile(Holder.step)
    plain, compiled = Holder(), Holder()
    for call in bp.one_array():
        x = call.args[0]
        bp.assert_same_outcome(bp.run_once(plain.step, call), bp.run_once(compiled.compiled_step, call),
                               f"method on {x.shape}")
    assert plain.k == compiled.k
    assert bp.top_event(compiler.events(), Holder.step).graph_break_count >= 1


# --- big frames: EXTENDED_ARG in continuations (many locals and constants, long jumps, deep blocks) -------

def _source_many_locals() -> str:
    lines = ["def big(x):"] + [f"    a{i} = x * {i}.5" for i in range(300)] + ["    y = opaque(x)", "    s = y"]
    return "\n".join(lines + [f"    s = s + a{i}" for i in range(0, 300, 7)] + ["    return s, a299"])


def _source_long_jumps() -> str:
    lines = ["def big(x):", "    acc = opaque(x * 2.0)"]
    for i in range(120):
        lines += [f"    if len(x) > {i % 5}:", f"        acc = acc + {i}.0", "    else:", f"        acc = acc - {i}.0"]
    return "\n".join(lines + ["    return acc"])


def _source_many_breaks() -> str:
    return "\n".join(["def big(x):", "    y = x * 1.0"] + [f"    y = opaque(y) + {i}.0" for i in range(10)]
                     + ["    return y"])


def _source_deep_blocks() -> str:
    lines, indent = ["def big(x):", "    y = x * 2.0"], "    "
    for depth in range(8):  # with, try, with, try, ...: a deep block stack / exception table at the break
        lines.append(f"{indent}with Recorder('{depth}'):" if depth % 2 == 0 else f"{indent}try:")
        indent += "    "
    lines += [f"{indent}y = opaque(y) + 1.0", f"{indent}TRACE.append('deep')"]
    for depth in reversed(range(8)):
        indent = indent[:-4]
        if depth % 2:
            lines += [f"{indent}finally:", f"{indent}    TRACE.append(('finally', {depth}))"]
    return "\n".join(lines + ["    return y * 3.0"])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("source", [_source_many_locals, _source_long_jumps, _source_many_breaks, _source_deep_blocks],
                         ids=lambda f: f.__name__[len("_source_"):])
def test_big_frames_break_and_resume(source: Any, backend: str):
    scopes = [{"np": np, "opaque": bp.opaque, "Recorder": bp.Recorder, "TRACE": bp.TRACE} for _ in range(2)]
    for scope in scopes:
        exec(compile(source(), f"<big frame {source.__name__}>", "exec"), scope)
    plain, to_compile = scopes[0]["big"], scopes[1]["big"]
    bp.compare_runs(plain, compiler.compile(to_compile, backend=backend), bp.one_array()[:3], source.__name__)
    events = compiler.events()
    assert all(e.fallback_reason is None for e in events), [e.fallback_reason for e in events]
    assert bp.continuation_events(events)


# --- re-entry: the native instruction at a break calls the compiled function again -------------------------

@compiler.disable
def _call_back(fn: Any, x: np.ndarray, depth: int, log: List[Any]) -> Any:
    log.append(("native", depth))
    return fn(x, depth - 1, log) if depth else x


_REENTRANT = {}


def _reentrant(x, depth, log):
    y = x * 2.0
    log.append(("before", depth))
    z = _call_back(_REENTRANT["fn"], y, depth, log)
    log.append(("after", depth))
    return z + 1.0


def test_reentry_through_a_break(monkeypatch):
    calls = [Call((bp.arr((3,), 1.0, d), d, [])) for d in (0, 3, 1, 3)]
    monkeypatch.setitem(_REENTRANT, "fn", _reentrant)
    plain = [bp.run_once(_reentrant, call) for call in calls]
    monkeypatch.setitem(_REENTRANT, "fn", compiler.compile(_reentrant))
    for index, (call, expected) in enumerate(zip(calls, plain)):
        bp.assert_same_outcome(expected, bp.run_once(_REENTRANT["fn"], call), f"re-entry call {index}")
    assert bp.top_event(compiler.events(), _reentrant).graph_break_count >= 1
