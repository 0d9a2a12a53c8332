"""Running the code a graph break leaves behind: break stubs and continuations.

At a graph break the cache entry (compiler.entry_codegen) runs the graph
traced so far, replays side effects, and calls a *stub*: the original code
with a prologue that puts the stack, the live locals and (up to 3.10) the
active blocks back, jumping to the breaking instruction, which CPython then
runs natively inside the function's own try/with structure.  Right after
it, the stub packs the stack and live locals into a ``Resume`` and returns;
the entry hands them to the *continuation* of that path: a function
``__resume_at_<offset>`` built from the original code, compiled lazily
(first call) through the same cache machinery as any compiled frame, with
its own guards and cache.  Both code objects are built by
``opcode_tables.resume`` for the running interpreter (compiler.graph_break
decides what to build).

This module sits below the compile driver: a continuation gets its cache and
the function that compiles it handed in (compiler.convert_frame makes them).

Continuations and stubs are shared by every frame compiled from one root
function (a ``Registry``, kept on the root's FrameCache): a break inside a
continuation maps back to the original code, so paths that meet again share
one continuation.
"""
from __future__ import annotations

import sys
import types
from typing import Any, Callable, Dict, Hashable, List, Optional, Sequence, Tuple

from opcode_tables.identity_map import IdentityWeakMap
from opcode_tables.liveness import written_from
from opcode_tables.moving_loads import with_moving_loads
from opcode_tables.resume import all_positional_variant, all_positional_variant_of, boxed_variant_of

from . import config, program_builtins
from .entry_codegen import MISS
from .generated_code import compile_generated, unique_filename


class Resume:
    """What a stub returns when it reaches an exit: which path, and the values to pass on."""

    __slots__ = ("branch", "values")

    def __init__(self, branch: int, values: tuple) -> None:
        self.branch = branch
        self.values = values


def pack(branch: int, *values: Any) -> Resume:
    """The packer the stubs' exit code calls (a plain function: no bound-method NULL games)."""
    return Resume(branch, values)


class Handoff:
    """What a cache entry that ends in a graph break returns: the stub to run, the
    continuations of its exits, the frame's closure and the stub's arguments (a list the
    callee empties).  The entry's frame is gone before the stub runs, and each stage's frame
    before the next one starts, so no value outlives its last use in the user's frame by
    more than the instruction that used it (weak references die, finalizers run, as in the
    plain function).  ``run_handoffs`` runs them (``pinned_runner``'s runners, where the
    wrapper keeps parameters for the stages); every caller of an entry passes its result
    through one.  A continuation that runs natively is a stage of its own (no conts)."""

    __slots__ = ("stub", "conts", "closure", "box")

    def __init__(self, stub: Any, conts: Optional[tuple], closure: Optional[tuple], box: list) -> None:
        self.stub = stub
        self.conts = conts
        self.closure = closure
        self.box = box


# Generated callers by number of arguments.  Named like the compiler's generated code, so
# tracebacks leave them out (compiler.wrappers).
_CALLERS: Dict[int, Callable[..., Any]] = {}


def _caller(n: int) -> Optional[Callable[..., Any]]:
    caller = _CALLERS.get(n)
    if caller is None:   # f(*b), each argument taken out of b
        if not program_builtins.intact():
            return None
        source = f"def call(f, b):\n    return f({', '.join('b.pop(0)' for _ in range(n))})\n"
        scope: Dict[str, Any] = {"__builtins__": program_builtins.ORIGINAL}
        exec(compile_generated(source, unique_filename("handoff call")), scope)
        caller = _CALLERS[n] = scope["call"]
    return caller


def call_emptying(fn: Callable[..., Any], box: list) -> Any:
    """``fn(*box)`` with the box emptied as the arguments are taken, each passed as a plain
    positional argument: a call CPython 3.11+ makes by moving the arguments into the
    callee's frame, so that the callee alone holds them (its ``x = None`` frees x).
    While the program has replaced a builtin no caller is made: a list holds the values
    during the call then."""
    caller = _caller(box.__len__())
    if caller is None:
        values = box[:]
        del box[:]
        return fn(*values)
    return caller(fn, box)


# Generated runners and callers for frames with pinned parameters (see pinned_runner).
_PINNED_RUNNERS: Dict[Tuple[Tuple[str, ...], Tuple[str, ...]], Callable[..., Any]] = {}


class _Gone:
    """A runner's pinned parameter it no longer holds: moved into a stage, or replaced."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<gone>"


GONE = _Gone()


def pinned_runner(pins: Tuple[str, ...], moved: Tuple[str, ...] = ()) -> Callable[..., Any]:
    """The stage runner (``run_handoffs`` where there are no pins) for a frame whose parameters
    ``pins`` (compiler.borrows.pinned_parameters) its wrapper hands over after the Handoff,
    one positional argument each: every stage whose
    parameters include a pinned name gets that argument pushed from the runner's own
    parameter, never from a list, as CPython from 3.14 pushes a local.  A parameter the plain
    frame borrowed from its caller (the caller keeps the value in a local) is then borrowed by
    the stage's frame too, and one the plain frame owned is owned once, as plain: either way
    the stage's frame adds no reference (ndarray.resize counts them).

    Pins the code never rebinds are kept to the end and lent to every stage.  Those in
    ``moved`` (the code may rebind them) came in moved (the wrapper's moving load): they
    are lent to stages that cannot rebind them and moved into the first stage that may
    (``pin_plan``), so that its rebinding frees what the plain frame's would; from then on,
    or once the graph replaced the value (the stage's box holds another object), the stages
    take the value from their box."""
    key = (pins, moved)
    runner = _PINNED_RUNNERS.get(key)
    if runner is None:
        source, move_line = _pinned_runner_source(pins, moved)
        scope: Dict[str, Any] = {"Handoff": Handoff, "Resume": Resume, "pins": pins, "moved": moved,
                                 "GONE": GONE, "__builtins__": program_builtins.ORIGINAL}
        exec(compile_generated(source, unique_filename("handoff run")), scope)
        runner = scope["run_stages"]
        if move_line is not None:
            runner.__code__ = with_moving_loads(runner.__code__, _moved_names(pins, moved), move_line)
        _PINNED_RUNNERS[key] = runner
    return runner


def _moved_names(pins: Tuple[str, ...], moved: Tuple[str, ...]) -> Tuple[str, ...]:
    return tuple(f"p{i}" for i, name in enumerate(pins) if name in moved)


def _pinned_runner_source(pins: Tuple[str, ...], moved: Tuple[str, ...]) -> Tuple[str, Optional[int]]:
    """The runner's source, and the line whose loads of moved pins become moves (None: none).
    With no pins it is ``run_handoffs``: each stage runs natively on its box
    (``run_natively``: the code's boxed variant where calls do not move arguments)."""
    ps = "".join(f", p{i}" for i in range(len(pins)))
    lines = [f"def run_stages(result{ps}):",
             "    while result.__class__ is Handoff:",
             "        stub, conts, closure, box = result.stub, result.conts, result.closure, result.box",
             "        result.box = []",
             "        result = None"]
    move_line = None
    if not pins:
        lines.append("        result = stub.run_natively(closure, box)")
    else:
        # No plan or caller (None): the program has replaced a builtin, and none could be made
        # (compiler.program_builtins): the stage runs the plain way, on its box.
        lines += ["        plan = stub.pin_plan(pins, moved)",
                  "        if plan is None:",
                  "            result = stub.run_natively(closure, box)",
                  "        else:",
                  "            at, writes = plan.at, plan.writes"]
        for i, name in enumerate(pins):
            # A pin the stage's box does not hold as it is: the graph replaced it (let it go), or
            # the stage does not take it (a moved pin is dead there: let go, as its box would).
            if name in moved:
                lines += [f"            if p{i} is not GONE and (at[{i}] < 0 or box[at[{i}]] is not p{i}):",
                          f"                p{i} = GONE"]
            else:
                lines += [f"            if at[{i}] >= 0 and p{i} is not GONE and box[at[{i}]] is not p{i}:",
                          f"                p{i} = GONE"]
        present = " | ".join(f"({1 << i} if at[{i}] >= 0 and p{i} is not GONE else 0)" for i in range(len(pins)))
        lines += [f"            call = plan.call({present}, writes)",
                  "            if call is None:",
                  "                result = stub.run_natively(closure, box)"]
        stage_call = f"call(stub.function_for(closure), box{ps})"
        if moved:
            lines.append("            elif writes:")
            lines.append(f"                result = {stage_call}")
            move_line = len(lines)
            lines.append(f"                {' = '.join(_moved_names(pins, moved))} = GONE")
        lines.append("            else:")
        lines.append(f"                result = {stage_call}")
        lines.append("            call = plan = None")
    lines += ["        if conts is None or result.__class__ is not Resume:",
              "            return result",
              "        box, branch = list(result.values), result.branch",
              "        result = None",
              "        result = conts[branch].run(closure, box)",
              "    return result"]
    return "\n".join(lines) + "\n", move_line


def _pinned_call_source(params: Sequence[str], pins: Tuple[str, ...], present: int,
                        n_keyword_only: int = 0) -> Tuple[str, int]:
    """``call(f, b, p0, ...)``: ``f`` called on the values of box ``b`` (one per parameter, the
    last ``n_keyword_only`` of them passed by keyword), each present pin's value (bit i of
    ``present``: the runner checked that ``b`` holds it as it is) passed from ``p<i>``
    instead, its item dropped from the box first; and the line of the call."""
    ps = ", ".join(f"p{i}" for i in range(len(pins)))
    at = [(index, pins.index(name)) for index, name in enumerate(params)
          if name in pins and present >> pins.index(name) & 1]
    lines = [f"def call(f, b, {ps}):"]
    if not at and not n_keyword_only:
        lines.append("    return call_emptying(f, b)")
        return "\n".join(lines) + "\n", len(lines)
    lines.extend(f"    del b[{index}]" for index, _ in reversed(at))
    taken = dict(at)
    args = [f"p{taken[index]}" if index in taken else "b.pop(0)" for index in range(len(params))]
    first_keyword = len(params) - n_keyword_only
    args[first_keyword:] = [f"{name}={arg}" for name, arg in zip(params[first_keyword:], args[first_keyword:])]
    lines.append(f"    return f({', '.join(args)})")
    return "\n".join(lines) + "\n", len(lines)


class _PinPlan:
    """How one stage's code takes a frame's pins: per pin, its index among the stage's
    parameters (-1: not one of them), and whether the stage may rebind a moved pin it takes
    (reachable stores from its first instruction: opcode_tables.liveness.written_from); and
    the generated callers the runner runs it with (``call``)."""

    def __init__(self, code: types.CodeType, pins: Tuple[str, ...], moved: Tuple[str, ...]) -> None:
        self.code, self.pins, self.moved = code, pins, moved
        params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        self.at = tuple(params.index(name) if name in params else -1 for name in pins)
        taken = [name for name in moved if name in params]
        self.writes = bool(taken) and bool(written_from(code, 0) & set(taken))
        self._calls: Dict[Tuple[int, bool], Callable[..., Any]] = {}

    def call(self, present: int, writes: bool) -> Optional[Callable[..., Any]]:
        """``call(f, box, p0, ...)``: ``f`` (a function of the code: positional and keyword-only
        parameters, no ``*args`` or ``**kwargs``) run natively on the values in ``box``, the
        present pins' values (bits of ``present``) passed from the runner's own parameters,
        moved into ``f`` where ``writes`` (see pinned_runner).  A generated Python function,
        called by the runner directly: a call through C (functools.partial, a bound method)
        would make each argument an owned reference again."""
        call = self._calls.get((present, writes))
        if call is None:
            if not program_builtins.intact():
                return None   # (see pinned_runner: the stage runs the plain way)
            code, pins = self.code, self.pins
            params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
            source, line = _pinned_call_source(params, pins, present, code.co_kwonlyargcount)
            scope: Dict[str, Any] = {"call_emptying": call_emptying, "__builtins__": program_builtins.ORIGINAL}
            exec(compile_generated(source, unique_filename("pinned call")), scope)
            call = scope["call"]
            names = [f"p{i}" for i, name in enumerate(pins)
                     if name in self.moved and present >> i & 1 and name in params]
            if writes and names:
                call.__code__ = with_moving_loads(call.__code__, names, line)
            self._calls[(present, writes)] = call
        return call


# By identity (code objects compare equal by value); weak: continuations are generated code
# objects that must stay collectable.
_PIN_PLANS: "IdentityWeakMap[types.CodeType, Dict[Tuple[Tuple[str, ...], Tuple[str, ...]], _PinPlan]]" = \
    IdentityWeakMap()


def pin_plan_for(code: types.CodeType, pins: Tuple[str, ...], moved: Tuple[str, ...]) -> Optional[_PinPlan]:
    """The plan the runner runs a stage of ``code`` by (made once per code, pins and moves);
    None where it is not made yet and cannot be now (the program replaced a builtin)."""
    plans = _PIN_PLANS.get(code)
    plan = None if plans is None else plans.get((pins, moved))
    if plan is None:
        if not program_builtins.intact():
            return None
        if plans is None:
            plans = _PIN_PLANS[code] = {}
        plan = plans[(pins, moved)] = _PinPlan(code, pins, moved)
    return plan


class NativeRun:
    """A frame run natively, as a stage (a Handoff with no continuations): the compile
    driver's fallbacks and a frame marked native return one instead of calling the function
    themselves, so that the call starts once the wrapper and the driver have let go of the
    arguments (a parameter the frame rebinds or deletes dies there, as in the plain frame).
    ``run(fn, box)`` calls ``fn`` on the values in ``box``, emptying it."""

    __slots__ = ("fn", "_run")

    def __init__(self, fn: types.FunctionType, run: Callable[[types.FunctionType, list], Any]) -> None:
        self.fn = fn
        self._run = run

    def function_for(self, closure: Optional[tuple]) -> types.FunctionType:
        """The function the pinned runner calls with the values one by one: ``fn`` itself, or
        for a function with ``*args`` or ``**kwargs``, one of its code taking them as they
        are, positionally (opcode_tables.resume.all_positional_variant)."""
        fn = self.fn
        code = all_positional_variant(fn.__code__)
        if code is fn.__code__:
            return fn
        variant = types.FunctionType(code, fn.__globals__, fn.__name__, None, fn.__closure__)
        variant.__qualname__ = fn.__qualname__
        return variant

    def run_natively(self, closure: Optional[tuple], box: list) -> Any:
        return self._run(self.fn, box)

    def pin_plan(self, pins: Tuple[str, ...], moved: Tuple[str, ...]) -> Optional["_PinPlan"]:
        code = all_positional_variant_of(self.fn.__code__)
        if code is None:
            if not program_builtins.intact():
                return None
            code = all_positional_variant(self.fn.__code__)
        return pin_plan_for(code, pins, moved)


def try_entries(entries: List[Callable[..., Any]], closure: Optional[tuple], box: list) -> Any:
    """The result of the first entry (newest first) accepting the values in ``box``, or MISS.
    Each entry takes the values out of ``box`` itself and empties it once its guards accept
    them (compiler.entry_codegen.build_entry_source): no argument tuple or caller's stack
    holds them meanwhile.  With no entries nothing is called, not even ``len``: the driver
    has not yet checked that the program left the builtins alone (compiler.convert_frame)."""
    for entry in entries:
        result = entry(closure, _box=box)
        if result is not MISS:
            return result
    return MISS


class _FunctionMaker:
    """Function objects for one generated code object, one per closure (sibling closures of
    the original function pass their own cells)."""

    def __init__(self, code: types.CodeType, f_globals: dict, qualname: str) -> None:
        self.code = code
        self.f_globals = f_globals
        self.qualname = qualname
        self._plain: Optional[types.FunctionType] = None
        # Where a call keeps its arguments on the caller's stack until it returns, the code run
        # natively takes them in a box it empties (opcode_tables.resume.boxed_code; made by
        # compiler.graph_break where the table says so).
        self._boxed_code = boxed_variant_of(code)
        self._boxed_plain: Optional[types.FunctionType] = None

    def function_for(self, closure: Optional[tuple]) -> types.FunctionType:
        # Only the closure-free function is kept: keeping the last closure would keep its
        # cells' contents alive after the frame returned (a finalizer would run late).
        if closure is None and self._plain is not None:
            return self._plain
        fn = self._make(self.code, closure)
        if closure is None:
            self._plain = fn
        return fn

    def pin_plan(self, pins: Tuple[str, ...], moved: Tuple[str, ...]) -> Optional["_PinPlan"]:
        if self._boxed_code is not None:  # (only where calls do not move arguments: no pins)
            raise ValueError("a code taking its values in a box has no pinned parameters")
        return pin_plan_for(self.code, pins, moved)

    def run_natively(self, closure: Optional[tuple], box: list) -> Any:
        """The code run natively on the values in ``box`` (emptied as they are taken), so that
        its frame alone holds them."""
        if self._boxed_code is None:
            return call_emptying(self.function_for(closure), box)
        fn = self._boxed_plain if closure is None else None
        if fn is None:
            fn = self._make(self._boxed_code, closure)
            if closure is None:
                self._boxed_plain = fn
        return fn(box)

    def _make(self, code: types.CodeType, closure: Optional[tuple]) -> types.FunctionType:
        fn = types.FunctionType(code, self.f_globals, code.co_name, None, closure)
        fn.__qualname__ = self.qualname
        return fn


class Stub(_FunctionMaker):
    """Runs the breaking instruction natively (see the module docstring)."""

    def __call__(self, closure: Optional[tuple], *values: Any) -> Any:
        return self.function_for(closure)(*values)


class Continuation(_FunctionMaker):
    """A ``__resume_at_<offset>`` function, compiled on its first call: ``cache`` holds its
    entries (a FrameCache sharing the root's registry), ``compile(fn, cache, values)``
    traces it on a miss and returns the call's result."""

    def __init__(self, code: types.CodeType, f_globals: dict, qualname: str, cache: Any,
                 compile: Callable[[types.FunctionType, Any, tuple], Any]) -> None:
        super().__init__(code, f_globals, qualname)
        self.cache = cache
        self._compile = compile

    def __call__(self, closure: Optional[tuple], *values: Any) -> Any:
        return run_handoffs(self.run(closure, list(values)))

    def run(self, closure: Optional[tuple], box: list) -> Any:
        """One stage: the continuation for the values in ``box`` (emptied by whoever takes
        them); the result may be a Handoff for run_handoffs."""
        if sys.gettrace() is not None and not config.trace_generated_code:
            # A trace function sees the plain lines (compiler.wrappers).
            return self.run_natively(closure, box)
        result = try_entries(self.cache.entries, closure, box)
        if result is not MISS:
            return result
        if self.cache.native:
            # A stage of its own, so that the runner passes pinned parameters to it as well.
            return Handoff(self, None, closure, box)
        return self._compile(self.function_for(closure), self.cache, box)


class Registry:
    """Stubs and continuations made for the frames of one compiled root function."""

    def __init__(self) -> None:
        self._items: Dict[Hashable, Any] = {}
        self.labelled: List[Tuple[str, types.CodeType]] = []   # for compiler.debug, in creation order

    def get(self, key: Hashable) -> Any:
        return self._items.get(key)

    def put(self, key: Hashable, item: Any, label: str) -> Any:
        """A stub or continuation (listed for compiler.debug under ``label``)."""
        self._items[key] = item
        self.labelled.append((label, item.code))
        return item

    def remember(self, key: Hashable, item: Any) -> Any:
        """Anything else made once per root function (a callee's compiled wrapper)."""
        self._items[key] = item
        return item

    def continuations(self) -> List[Continuation]:
        return [item for item in self._items.values() if isinstance(item, Continuation)]

    def clear(self) -> None:
        self._items.clear()
        self.labelled.clear()


# Runs stubs and continuations one after another until the frame's result is known: the
# runner of a frame without pinned parameters (made once the stage classes exist).
run_handoffs: Callable[[Any], Any] = pinned_runner(())
