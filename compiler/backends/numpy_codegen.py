"""The numpy backend: a graph lowered to the source of one Python function
that calls NumPy, with elementwise chains fused (fusion.py).

The source is kept on the compiled graph (``.source``) for inspection.  Names
in it: graph values by their node names (which never start with "_"), NumPy
as ``_np``, and everything that has no literal spelling (dtypes, NumPy
scalars, non-finite floats, user functions) bound as ``_c<N>`` / ``_f<N>``.

Results equal the eager backend's: the same NumPy functions run in the same
order, ``out=`` changes where a result is stored, not its value, and a
fused region writes into reused buffers only when every array it reads is
C-contiguous (then NumPy would have made C-contiguous results too; otherwise
the region runs unfused, so result layouts match as well).  Floating-point
values are compared in the tests with a relative tolerance of 1e-3 (float16),
1e-5 (float32, complex64) and 1e-12 (float64, complex128), for SIMD paths of
transcendental functions that may differ with memory alignment; integer and
boolean results are exact.

A graph this module cannot lower runs through the eager backend instead,
with the reason logged on ``compiler.backends`` and kept in
``fallback_reason``.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List

import numpy as np

from compiler.backends import fusion
from compiler.backends.base import Backend, CompiledGraph, LoweringError, check_graph, logger
from compiler.backends.eager import make_runner
from compiler.generated_code import compile_generated, unique_filename
from compiler.graph import Graph, Node

_FUNCTION_NAME = "compiled_graph"


class _Emitter:
    """Source lines plus the namespace their bound names live in."""

    def __init__(self) -> None:
        self.lines: List[str] = []
        self.namespace: Dict[str, Any] = {"_np": np}
        self._bound: Dict[int, str] = {}

    def bind(self, value: Any, prefix: str) -> str:
        name = self._bound.get(id(value))
        if name is None:
            name = f"_{prefix}{len(self._bound)}"
            self._bound[id(value)] = name
            self.namespace[name] = value
        return name

    def value(self, value: Any) -> str:
        """Source text of an argument."""
        if isinstance(value, Node):
            return value.name
        if isinstance(value, np.generic):  # before int/float: np.float64 subclasses float
            return self.bind(value, "c")
        if value is None or isinstance(value, (bool, str)):
            return repr(value)
        if value is Ellipsis:
            return "..."
        if type(value) is int and -10 ** 18 < value < 10 ** 18:
            return repr(value)
        if isinstance(value, int):
            return self.bind(value, "c")  # the object itself: int subclasses, ints too long to spell
        if isinstance(value, float) and math.isfinite(value):
            return repr(value)
        if isinstance(value, tuple):
            inner = ", ".join(self.value(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if isinstance(value, list):
            return "[" + ", ".join(self.value(v) for v in value) + "]"
        if isinstance(value, slice):
            return f"slice({self.value(value.start)}, {self.value(value.stop)}, " \
                   f"{self.value(value.step)})"
        if isinstance(value, (float, complex, np.generic, np.dtype, type)):
            return self.bind(value, "c")
        raise LoweringError(f"no source spelling for a constant of type {type(value).__name__}")

    def index(self, index: Any) -> str:
        """Source of a constant index inside ``x[...]``."""
        items = index if isinstance(index, tuple) else (index,)
        parts = []
        for item in items:
            if isinstance(item, slice):
                start, stop, step = (("" if v is None else self.value(v))
                                     for v in (item.start, item.stop, item.step))
                parts.append(f"{start}:{stop}" + (f":{step}" if step else ""))
            else:
                parts.append(self.value(item))
        if isinstance(index, tuple) and len(index) == 1:
            return parts[0] + ","
        if isinstance(index, tuple) and not index:
            return "()"
        return ", ".join(parts)

    def call(self, node: Node, out: str = "") -> str:
        """The expression computing ``node`` (``out`` adds an out= buffer)."""
        op = node.opinfo
        if op is None or not op.lowerable:
            raise LoweringError(f"op {node.target} is marked as not lowerable")
        args = [self.value(a) for a in node.args]
        kwargs = [f"{k}={self.value(node.kwargs[k])}" for k in sorted(node.kwargs)]
        if out:  # fused: the ufunc itself, whatever the op's spelling
            kwargs.append(f"out={out}")
            return f"{self._ufunc_callee(op.ufunc)}({', '.join(args + kwargs)})"
        source = op.source or ""
        kind, _, spelling = source.partition(":")
        if kind == "binop" and len(args) == 2 and not kwargs:
            left, right = (f"({a})" if a.startswith("-") else a for a in args)  # -1 ** x
            return f"{left} {spelling} {right}"
        if kind == "unop" and len(args) == 1 and not kwargs:
            return f"{spelling}{args[0]}"
        if kind == "method" and args:
            return f"{args[0]}.{spelling}({', '.join(args[1:] + kwargs)})"
        if kind == "attr" and len(args) == 1 and not kwargs:
            return f"{args[0]}.{spelling}"
        if source == "getitem" and len(node.args) == 2 and isinstance(node.args[0], Node):
            return f"{args[0]}[{self.index(node.args[1])}]"
        callee = self._callee(op)
        return f"{callee}({', '.join(args + kwargs)})"

    def _callee(self, op: Any) -> str:
        path = op.source or ""
        if path.startswith("numpy.") and _resolve(path) is op.fn:
            return "_np." + path[len("numpy."):]
        return self.bind(op.fn, "f")

    def _ufunc_callee(self, ufunc: np.ufunc) -> str:
        if getattr(np, ufunc.__name__, None) is ufunc:
            return "_np." + ufunc.__name__
        return self.bind(ufunc, "f")


def _resolve(path: str) -> Any:
    obj: Any = np
    for part in path.split(".")[1:]:
        obj = getattr(obj, part, None)
    return obj


def lower(graph: Graph) -> tuple:
    """(source, namespace, kernel_count) of the function computing ``graph``."""
    emit = _Emitter()
    params = [n.name for n in graph.placeholders]
    emit.lines.append(f"def {_FUNCTION_NAME}({', '.join(params)}):")
    items = fusion.partition(graph)
    for number, item in enumerate(items, 1):
        if isinstance(item, fusion.Region):
            _emit_region(emit, item, number)
        else:
            emit.lines.append(f"    {item.name} = {emit.call(item)}  # kernel {number}: {item.target}")
    outputs = [n.name for n in graph.outputs]
    emit.lines.append(f"    return ({', '.join(outputs)}{',' if len(outputs) == 1 else ''})")
    return "\n".join(emit.lines) + "\n", emit.namespace, fusion.kernel_count(items)


def _emit_region(emit: _Emitter, region: fusion.Region, number: int) -> None:
    names = ", ".join(n.target.rsplit(".", 1)[-1] for n in region.nodes)
    emit.lines.append(f"    # kernel {number}: fused region of {len(region.nodes)} ({names})")
    if not region.out_buffer:
        for node in region.nodes:
            emit.lines.append(f"    {node.name} = {emit.call(node)}")
        return
    checks = " and ".join(f"{n.name}.flags.c_contiguous" for n in region.external_arrays) or "True"
    emit.lines.append(f"    if {checks}:")
    for node in region.nodes:
        out = region.out_buffer.get(node.name, "")
        emit.lines.append(f"        {node.name} = {emit.call(node, out)}")
    # Not all C-contiguous: NumPy would choose the result layouts itself.
    emit.lines.append("    else:")
    for node in region.nodes:
        emit.lines.append(f"        {node.name} = {emit.call(node)}")


class NumpyBackend(Backend):
    name = "numpy"

    def compile(self, graph: Graph) -> CompiledGraph:
        check_graph(graph, self.name)
        try:
            source, namespace, kernels = lower(graph)
            code = compile_generated(source, unique_filename(f"numpy kernel {graph.graph_hash()[:12]}"))
            exec(code, namespace)
        except (LoweringError, SyntaxError) as error:
            reason = f"{type(error).__name__}: {error}"
            logger.warning("numpy backend cannot lower graph %s, running it eagerly: %s",
                           graph.graph_hash(), reason)  # only on this rare path: hashing costs
            return CompiledGraph(make_runner(graph), graph, "eager", kernel_count=0,
                                 fallback_reason=reason)
        return CompiledGraph(namespace[_FUNCTION_NAME], graph, self.name,
                             kernel_count=kernels, source=source)
