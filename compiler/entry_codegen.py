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
"""
from __future__ import annotations

import linecache
import types
from typing import Any, Callable, Dict, List, Optional, Sequence

from .graph import Node
from .guards import Guard, Namespace
from .sources import ClosureSource, Source, local_param_name

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

    def const(self, obj: Any) -> str:
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

    def cell_object(self, cell: Any) -> str:
        """An expression for the real cell object behind a CellVariable: the frame's closure
        cell for a free variable; for a cell of the traced code, one new cell made (with its
        contents) where the generated code first needs it, and shared from then on.  The
        first use is the first one evaluated: expressions are generated in execution order."""
        if isinstance(cell.source, ClosureSource):
            return f"_cl[{cell.source.index}]"
        name = self._cells.get(id(cell))
        if name is not None:
            return name
        name = self._cells[id(cell)] = f"_cell{len(self._cells)}"
        self._keep.append(cell)
        made = f"({name} := {self.const(types.CellType)}())"
        if cell.contents is None:
            return made
        # Made empty and named before its contents are rebuilt: the contents may need the cell
        # (a local function that calls itself holds its own cell in its closure).
        return f"{self.const(_filled)}({made}, {self.const(_set_cell)}({name}, {cell.contents.reconstruct(self)}))"

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
    params = ", ".join(entry_params(param_names))
    lines = [f"def {name}({params}):"]
    if guards:
        checks = " and\n            ".join(f"({g.code})" for g in guards)
        lines += ["    try:",
                  f"        if not ({checks}):",
                  "            return _MISS",
                  "    except Exception:",
                  "        return _MISS"]
    lines += ["    " + line for line in body]
    return "\n".join(lines) + "\n"


def graph_call_body(input_exprs: Sequence[str], n_outputs: int, return_expr: str,
                    side_effects: Sequence[str] = (),
                    on_graph_error: Optional[Sequence[str]] = None) -> List[str]:
    """Run the graph, rebuild the return value, replay side effects (compiler.side_effects),
    return.  The return value is built before any store, from the state the trace saw.
    ``on_graph_error``: lines run when the graph raises (a graph whose success depends on
    the data, e.g. an index array out of range); the graph changes nothing the caller sees,
    so running the plain function then gives exactly the plain call's effects and error."""
    body = _graph_call_lines(input_exprs, n_outputs, on_graph_error)
    if side_effects:
        body.append(f"_r = {return_expr}")
        body.extend(side_effects)
        body.append("return _r")
    else:
        body.append(f"return {return_expr}")
    return body


def _graph_call_lines(input_exprs: Sequence[str], n_outputs: int,
                      on_graph_error: Optional[Sequence[str]]) -> List[str]:
    if not n_outputs:
        return []
    targets = ", ".join(f"_o{i}" for i in range(n_outputs))
    call = f"({targets},) = _graph({', '.join(input_exprs)})"
    if not on_graph_error:
        return [call]
    return ["try:", "    " + call, "except Exception:"] + ["    " + line for line in on_graph_error]


def graph_break_body(input_exprs: Sequence[str], n_outputs: int, value_exprs: Sequence[str],
                     side_effects: Sequence[str], tail: Sequence[str],
                     on_graph_error: Optional[Sequence[str]] = None) -> List[str]:
    """Run the graph, rebuild the values the rest of the frame needs (as ``_a``), replay
    side effects, then ``tail`` (graph_break.break_tail: the stub and the continuation)."""
    body = _graph_call_lines(input_exprs, n_outputs, on_graph_error)
    body.append(f"_a = ({''.join(e + ', ' for e in value_exprs)})")
    body.extend(side_effects)
    body.extend(tail)
    return body


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
    parts += [f"{n}={local_param_name(n)}" for n in names[n_pos:n_pos + n_kwonly]]
    if code.co_flags & 0x08:  # **kwargs
        parts.append("**" + local_param_name(names[index]))
    # Entries are shared by every function object of this code (sibling closures):
    # call the one whose cells the caller passed in ``_cl``.
    return [f"return (_fn if _cl is _fn.__closure__ else _sibling(_cl))({', '.join(parts)})"]


def native_scope(fn: types.FunctionType) -> Dict[str, Any]:
    """Names ``native_call_body`` needs: the compiled function and a way to call a
    sibling closure of the same code.  Arguments arrive bound explicitly (defaults
    applied), so a sibling needs only the code, globals, name and cells."""
    code, f_globals, name, qualname = fn.__code__, fn.__globals__, fn.__name__, fn.__qualname__

    def sibling(closure: Optional[tuple]) -> types.FunctionType:
        other = types.FunctionType(code, f_globals, name, None, closure)
        other.__qualname__ = qualname
        return other

    return {"_fn": fn, "_sibling": sibling}


def compile_entry(source: str, ns: Namespace, scope_extra: Dict[str, Any], filename: str) -> Callable:
    scope = dict(ns.values)
    scope.update(scope_extra)
    scope["_MISS"] = MISS
    # Tracebacks and debuggers show the generated source of the entry.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), scope)
    return scope["__entry"]
