"""Generating the one Python function that runs a cache entry.

For each cache entry the compiler writes (and compiles once, with exec) a
function ``__entry(_cl, L_a, L_b, ...)`` taking the frame's closure and its
bound arguments, that

1. checks every guard in one expression (any exception counts as a miss),
2. calls the compiled graph on the input arrays,
3. rebuilds the return value from graph outputs, constants and inputs.

At a graph break (compiler.graph_break) the function ends differently: the
values the rest of the frame needs are rebuilt (before side effects, like a
return value), side effects are replayed, and a stub runs the breaking
instruction natively and hands over to the continuation.

Ops that fail inside a graph
----------------------------
An op can raise on some data (an index out of range, an integer to a negative
power, a linear-algebra error) or signal a floating-point error, which
``np.errstate`` (set by the caller, or by a ``with np.errstate`` of the
function, which breaks the graph) turns into a warning, an exception, a call
or a print.  One strategy holds for every graph, on every backend: **the
graph runs speculatively, and when it fails, the frame (the function, or the
continuation the graph belongs to) runs natively from its start**, which is
the graph's start: guards have no effects, and every side effect the trace
recorded (stores, appends, prints at breaks) is replayed only after the graph.
The alternative, ending the graph at every op that may fail, would end it at
nearly every float op under NumPy's default error state (divide, over and
invalid warn), leaving no graphs worth the name.

What makes the native re-run exact:

* the graph is side-effect free until it returns.  It runs under an error
  state where every floating-point error the caller does not ignore *raises*
  (``strict_errstate``): a warning (or a call / print / log) is never issued
  by the graph, the graph stops instead and the native run issues it, in
  order with the Python code around it, exactly as often as plain execution.
  Errors the caller ignores stay ignored, so the values are the plain ones
  (an error state changes what is reported, never a result) and nothing
  depends on the error state silently.  Ops whose Python warnings depend on
  the data are never captured (compiler.ops.effects), and ops whose warnings
  depend on types or shapes are refused at trace time
  (compiler.trace_time);
* in-place writes the graph makes into input arrays are undone: each input
  the graph writes is copied before the graph runs and copied back when it
  fails, so the native run sees the caller's values, and writes once;
* draws from a ``numpy.random.Generator`` the graph made are undone the same way: the
  state of each generator it draws from is read before the graph runs and put back when
  it fails (compiler.ops.draws), so the native run draws the same numbers, once;
* the native call is made after the ``try`` statement, not in its ``except``
  clause, so the program's own exceptions do not get the graph's failure as
  their ``__context__`` and ``sys.exc_info()`` inside it is the caller's;
* a node whose result is unused still runs when it may fail (its error is
  part of the program's behaviour), so a graph with no outputs still runs.

Graphs that cannot fail (compiler.ops.effects: views, copies, integer
arithmetic) pay for none of this.  The others pay, per call, for reading the
error state and, unless it is already "ignore" or "raise" everywhere, for
entering a strict one (measured on 3.11: about 1.5 us under an all-ignore
state, 3.4 us under NumPy's default, NumPy 2.4), plus a copy of each input
the graph writes in place.  The cost of a failure is one extra native run
of the frame; under an error state that ignores everything, only data
errors (an index out of range) make graphs fail.
"""
from __future__ import annotations

import contextlib
import types
import weakref
from typing import Any, Callable, ContextManager, Dict, List, Optional, Sequence, Tuple

import numpy as np

from opcode_tables.resume import boxed_variant_of

from . import error_state
from .exc import BackendUnavailable
from .generated_code import compile_generated, unique_filename
from .graph import Node
from .guards import Guard, Namespace, held_weakly
from .ops import draws
from .sources import ClosureSource, Source, local_param_name, param_names

MISS = object()


def _set_cell(cell: Any, value: Any) -> None:
    cell.cell_contents = value


def _filled(obj: Any, _fill_result: Any) -> Any:
    """``obj``, after the second argument (which filled it) was evaluated."""
    return obj


class OutputCodegen:
    """Collects what the return expression needs: graph outputs and constants."""

    def __init__(self, tx: Any, ns: Namespace) -> None:
        # tx: the compiler.tracer translator whose trace this entry runs (this module sits
        # below the tracer and the trackers, so it names neither).
        self.tx = tx
        self.ns = ns
        self.outputs: List[Node] = []
        self._cells: Dict[int, str] = {}   # id(tracker) -> the name its object got
        self._keep: List[Any] = []           # keeps those trackers alive, so ids stay unique
        self._parameters: Optional[Dict[int, Tuple[Any, Any]]] = None   # see const

    def const(self, obj: Any) -> str:
        if held_weakly(obj):
            # An object the program can let go of (a class or function made at run time, an
            # instance): named through the parameter that passed it in, if one did, so that
            # the entry keeps no reference of its own (a guard holds it weakly).  Plain code
            # lets it die when the caller does (CPython's test_ordered_dict: a class used as
            # a key of its own attribute dict).
            if self._parameters is None:  # (once per entry: the trace is over)
                self._parameters = self.tx.output.parameters_by_object()
            held = self._parameters.get(id(obj))
            if held is not None and held[0] is obj:
                return self.source_expr(held[1])
        return self.ns.const(obj)

    def shared(self, var: Any, build: Callable[[], str]) -> str:
        """A mutable object made by the traced code, rebuilt once and shared: the second
        place that needs it (a local and a bound method on the stack, two list items)
        gets the same object, as in the plain function."""
        name = self._cells.get(id(var))
        if name is not None:
            return name
        name = self._cells[id(var)] = f"_v{len(self._cells)}"
        self._keep.append(var)
        return f"({name} := {build()})"

    def shared_filled(self, var: Any, create: Callable[[], str], fill: Callable[[str], str]) -> str:
        """Like ``shared``, for an object that may hold itself (an instance whose attribute is
        the instance, a list appended to itself): made empty and named first, then filled, so
        that a reference to it inside its own contents is its name, already bound."""
        name = self._cells.get(id(var))
        if name is not None:
            return name
        name = self._cells[id(var)] = f"_v{len(self._cells)}"
        self._keep.append(var)
        made = create()
        return f"{self.const(_filled)}(({name} := {made}), {fill(name)})"

    def cell_object(self, cell: Any, pending: Optional[List[Tuple[str, Any]]] = None) -> str:
        """An expression for the real cell object behind a CellVariable: the frame's closure
        cell for a free variable; for a cell of the traced code, one new cell made (with its
        contents) where the generated code first needs it, and shared from then on.  The
        first use is the first one evaluated: expressions are generated in execution order.
        With ``pending``, a new cell is made empty and (name, cell) appended: the caller fills
        it later (a function whose own cell holds the function fills it once it is named)."""
        if isinstance(cell.source, ClosureSource):
            return f"_cl[{cell.source.index}]"
        if cell.source is not None:
            # A cell of a function from outside, read through ``<fn>.__closure__[i].cell_contents``.
            return self.source_expr(cell.source.base)
        name = self._cells.get(id(cell))
        if name is not None:
            return name
        name = self._cells[id(cell)] = f"_cell{len(self._cells)}"
        self._keep.append(cell)
        made = f"({name} := {self.const(types.CellType)}())"
        if cell.contents is None:
            return made
        if pending is not None:
            pending.append((name, cell))
            return made
        # Made empty and named before its contents are rebuilt: the contents may need the cell
        # (a local function that calls itself holds its own cell in its closure).
        return f"{self.const(_filled)}({made}, {self.const(_set_cell)}({name}, {cell.contents.reconstruct(self)}))"

    def fill_cell(self, name: str, cell: Any) -> str:
        """The expression that puts a pending cell's contents into it (see cell_object)."""
        return f"{self.const(_set_cell)}({name}, {cell.contents.reconstruct(self)})"

    def source_expr(self, source: Source) -> str:
        return source.expr(self.ns.const)

    def graph_output(self, node: Node) -> str:
        for i, existing in enumerate(self.outputs):
            if existing is node:
                return f"_o{i}"
        self.outputs.append(node)
        return f"_o{len(self.outputs) - 1}"


def entry_params(param_names: Sequence[str]) -> List[str]:
    return ["_cl"] + [local_param_name(n) for n in param_names]


def build_entry_source(param_names: Sequence[str], guards: Sequence[Guard], body: List[str],
                       name: str = "__entry") -> str:
    # Two ways in: the values as positional arguments (the compiled function's fast path), or
    # in ``_box``, a list the caller (compiler.resume.try_entries) passes alone: the values are
    # taken out of it here and it is emptied once the guards accept them, so that this frame
    # alone holds them (a call's positional arguments stay on the caller's stack until it
    # returns on CPython up to 3.10); a rejected call leaves it whole for the next entry.
    values = [local_param_name(n) for n in param_names]
    params = ", ".join(["_cl"] + [f"{v}=None" for v in values] + ["_box=None"])
    lines = [f"def {name}({params}):"]
    if values:
        lines += ["    if _box is not None:", f"        {''.join(v + ', ' for v in values)}= _box"]
    if guards:
        checks = " and\n            ".join(f"({g.code})" for g in guards)
        lines += ["    try:",
                  f"        if not ({checks}):",
                  "            return _MISS",
                  "    except Exception:",
                  "        return _MISS"]
    lines += ["    if _box is not None:", "        _box.clear()"]
    lines += ["    " + line for line in body]
    return "\n".join(lines) + "\n"


class GraphCall:
    """How an entry calls its graph: the input expressions, the number of outputs and,
    for a graph that may fail at run time, what protects the call (see the module's
    docstring): the input arrays the graph writes in place (expressions) and the lines
    that run the frame natively instead.  The generated code calls ``_graph_failed(error)``
    (in the entry's scope) when the graph fails: it logs why the frame runs natively."""

    def __init__(self, input_exprs: Sequence[str], n_outputs: int, *,
                 on_graph_error: Optional[Sequence[str]] = None,
                 written_inputs: Sequence[str] = (),
                 errstate_overrides: Tuple[Dict[str, str], ...] = (),
                 generators: Sequence[str] = ()) -> None:
        self.input_exprs = list(input_exprs)
        # numpy.random.Generator inputs the graph draws from (compiler.ops.draws): their
        # state is read before the graph runs and put back if it fails, so that the native
        # run draws the numbers plain execution draws.
        self.generators = list(generators)
        self.errstate_overrides = tuple(errstate_overrides)   # traced np.errstate blocks
        self.n_outputs = n_outputs
        self.on_graph_error = list(on_graph_error) if on_graph_error else None
        self.written_inputs = list(written_inputs)

    def lines(self) -> List[str]:
        call = f"_graph({', '.join(self.input_exprs)})"
        if self.n_outputs:
            call = f"({', '.join(f'_o{i}' for i in range(self.n_outputs))},) = {call}"
        if not self.on_graph_error:
            return [call]
        lines = [f"_sn{k} = {expr}.copy()" for k, expr in enumerate(self.written_inputs)]
        lines += [f"_gs{k} = _draw_snapshot({expr})" for k, expr in enumerate(self.generators)]
        lines += [f"with _strict_errstate({self.errstate_overrides!r}):" if self.errstate_overrides
                  else "with _strict_errstate():",
                  "    try:",
                  "        " + call,
                  "    except _BackendUnavailable:",
                  "        raise",
                  "    except Exception as _ge:",
                  "        _gf = True",
                  "        _graph_failed(_ge)",
                  "    else:",
                  "        _gf = False",
                  "if _gf:"]
        lines += [f"    {expr}[...] = _sn{k}" for k, expr in enumerate(self.written_inputs)]
        lines += [f"    _draw_restore({expr}, _gs{k})" for k, expr in reversed(list(enumerate(self.generators)))]
        lines += ["    " + line for line in self.on_graph_error]
        return lines


def graph_call_body(graph_call: Optional[GraphCall], return_expr: str,
                    side_effects: Sequence[str] = ()) -> List[str]:
    """Run the graph (if any), rebuild the return value, replay side effects
    (compiler.side_effects), return.  The return value is built before any store, from the
    state the trace saw."""
    body = graph_call.lines() if graph_call is not None else []
    if side_effects:
        body.append(f"_r = {return_expr}")
        body.extend(side_effects)
        body.append("return _r")
    else:
        body.append(f"return {return_expr}")
    return body


def graph_break_body(graph_call: Optional[GraphCall], value_exprs: Sequence[str],
                     side_effects: Sequence[str], tail: Sequence[str]) -> List[str]:
    """Run the graph (if any), rebuild the values the rest of the frame needs (as ``_a``),
    replay side effects, then ``tail`` (graph_break.break_tail: the stub and the
    continuation)."""
    body = graph_call.lines() if graph_call is not None else []
    body.append(f"_a = ({''.join(e + ', ' for e in value_exprs)})")
    body.extend(side_effects)
    body.extend(tail)
    return body


# The caller's error modes -> the keyword arguments of the strict state (None: no change).
_STRICT: Dict[Any, Optional[Dict[str, str]]] = {}
# repr of the overrides ("" for none) -> (the caller's state object, the strict state object
# or None): the last answer, found again by identity (compiler.error_state).
_STRICT_STATES: Dict[str, Tuple[Any, Any]] = {}
_NO_CHANGE = contextlib.nullcontext()


def strict_modes(caller: Dict[str, str], overrides: Any) -> Dict[str, str]:
    """The error modes a graph runs under: a kind is ignored only where the caller's state
    and every traced block's state ignore it; every other kind raises."""
    strict = {}
    for kind, mode in caller.items():
        modes = [mode] + [block.get(kind, block.get("all", mode)) for block in overrides]
        strict[kind] = "ignore" if all(m == "ignore" for m in modes) else "raise"
    return strict


def _strict_change(overrides: Tuple[Dict[str, str], ...]) -> Optional[Dict[str, str]]:
    """The modes to set over the caller's state, None where it is strict already."""
    modes = tuple(np.geterr().items())
    key = (modes, repr(overrides)) if overrides else modes
    try:
        return _STRICT[key]
    except KeyError:
        wanted = strict_modes(dict(modes), overrides)
        strict = _STRICT[key] = None if wanted == dict(modes) else wanted
        return strict


def strict_errstate(overrides: Tuple[Dict[str, str], ...] = ()) -> ContextManager[Any]:
    """The error state a graph call runs under: every floating-point error the caller's
    state does not ignore raises (np.errstate is per thread / per context and restores the
    caller's state, ``seterrcall`` included, on exit).  ``overrides``: the modes of the
    ``with np.errstate(...)`` blocks the trace entered (compiler.variables.errstate); a kind
    is ignored only where every one of them ignores it too.

    On NumPy 2 the strict state object is made once per caller state and set directly
    (error_state.SwitchState): reading the modes and entering np.errstate cost 2-3 us per
    call, as much as the rest of a small compiled call."""
    if error_state.STATE is None:  # NumPy 1.x
        strict = _strict_change(overrides)
        return _NO_CHANGE if strict is None else np.errstate(**strict)
    key = repr(overrides) if overrides else ""
    state = error_state.STATE.get()
    last = _STRICT_STATES.get(key)
    if last is None or last[0] is not state:
        strict = _strict_change(overrides)
        last = _STRICT_STATES[key] = (state, None if strict is None else error_state.state_under(strict))
    return _NO_CHANGE if last[1] is None else error_state.SwitchState(last[1])


def native_call_body(code: types.CodeType) -> List[str]:
    """Call the original function with the bound arguments, spelled as its signature needs."""
    n_pos = code.co_argcount
    n_kwonly = code.co_kwonlyargcount
    names = code.co_varnames
    parts = [local_param_name(n) for n in names[:n_pos]]
    index = n_pos + n_kwonly
    if code.co_flags & 0x04:  # *args
        parts.append("*" + local_param_name(names[index]))
        index += 1
    parts += [f"{n}={local_param_name(n)}" if n.isidentifier() else f"**{{{n!r}: {local_param_name(n)}}}"
              for n in names[n_pos:n_pos + n_kwonly]]
    if code.co_flags & 0x08:  # **kwargs
        parts.append("**" + local_param_name(names[index]))
    # Entries are shared by every function object of this code (sibling closures):
    # call the one whose cells the caller passed in ``_cl``.
    if boxed_variant_of(code) is not None:
        # A stage taking its values in a box (opcode_tables.resume.boxed_code): it empties it.
        return [f"_v = [{', '.join(parts)}]"] + ([f"del {', '.join(parts)}"] if parts else []) + \
            ["return _boxed_function_for(_cl)(_v)"]
    if parts and not code.co_flags & 0x0C and not n_kwonly:
        # Positional only: the entry lets go of its arguments before the call, which takes
        # them from a list as plain arguments (moved into the callee's frame on CPython
        # 3.11+), so that the function alone holds them, as when called directly (its
        # ``del x`` frees x; a cycle it drops is collectable by a gc.collect() it calls).
        return [f"_v = [{', '.join(parts)}]", f"del {', '.join(parts)}",
                f"return _function_for(_cl)({', '.join('_v.pop(0)' for _ in parts)})"]
    return [f"return _function_for(_cl)({', '.join(parts)})"]


def native_stage_body(code: types.CodeType) -> List[str]:
    """Run the frame natively as a stage: the entry lets go of the bound arguments and returns
    ``_native_stage(function, values)`` (compiler.convert_frame.native_stage, in the entry's
    scope), a Handoff its caller runs once it has let go of them too.  Called inline, the
    function would run while the compiled function's wrapper still held them (a parameter
    it rebinds or deletes would not die there, as plain)."""
    values = [local_param_name(n) for n in param_names(code)]
    if not values:
        return ["return _native_stage(_function_for(_cl), [])"]
    return [f"_v = [{', '.join(values)}]", f"del {', '.join(values)}",
            "return _native_stage(_function_for(_cl), _v)"]


def native_scope(fn: types.FunctionType) -> Dict[str, Any]:
    """Names ``native_call_body`` needs: the compiled function and a way to call a
    sibling closure of the same code.  Arguments arrive bound explicitly (defaults
    applied), so a sibling needs only the code, globals, name and cells."""
    code, f_globals, name, qualname = fn.__code__, fn.__globals__, fn.__name__, fn.__qualname__
    # Held weakly: a continuation's function object holds one call's closure cells, which must
    # not outlive that call (a finalizer would run late); the user's own function stays alive
    # through its compiled wrapper.
    original = weakref.ref(fn)

    def made(of: types.CodeType, closure: Optional[tuple]) -> types.FunctionType:
        other = types.FunctionType(of, f_globals, name, None, closure)
        other.__qualname__ = qualname
        return other

    def function_for(closure: Optional[tuple]) -> types.FunctionType:
        known = original()
        if known is not None and known.__closure__ is closure:
            return known
        return made(code, closure)

    boxed = boxed_variant_of(code)

    def boxed_function_for(closure: Optional[tuple]) -> types.FunctionType:
        return made(boxed, closure)

    return {"_function_for": function_for, "_boxed_function_for": boxed_function_for}


def compile_entry(source: str, ns: Namespace, scope_extra: Dict[str, Any], label: str) -> Callable:
    """The entry function of ``source``, compiled under a file name ``<tracematrix {label} #N>``."""
    scope = dict(ns.values)
    scope.update(scope_extra)
    scope["_MISS"] = MISS
    scope["_strict_errstate"] = strict_errstate
    scope["_BackendUnavailable"] = BackendUnavailable
    scope["_draw_snapshot"] = draws.snapshot
    scope["_draw_restore"] = draws.restore
    # Tracebacks and debuggers show the generated source of the entry.
    exec(compile_generated(source, unique_filename(label)), scope)
    return scope["__entry"]
