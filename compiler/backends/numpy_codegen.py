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
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from compiler import config
from compiler.backends import blocked, fusion, numba_kernels
from compiler.backends.base import Backend, CompiledGraph, LoweringError, check_graph, logger
from compiler.backends.eager import make_runner
from compiler.backends.region_kernel import make_region_kernel
from compiler.generated_code import compile_generated, unique_filename
from compiler.graph import Graph, Node
from compiler.ops import may_fail_at_run_time
from compiler.symbolic_shapes import has_symbols, same_shape

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


def lower(graph: Graph, use_numba: bool = False) -> tuple:
    """(source, namespace, kernel_count) of the function computing ``graph``; large fused
    regions also get a one-pass evaluation (blocks, or with ``use_numba`` a numba loop),
    chosen per call (region_kernel.py)."""
    emit = _Emitter()
    items = fusion.partition(graph)
    passes = _one_pass_groups(emit, graph, items, use_numba)
    params = [n.name for n in graph.placeholders]
    emit.lines.append(f"def {_FUNCTION_NAME}({', '.join(params)}):")
    number = 0
    while number < len(items):  # number: items (kernels) emitted so far
        item = items[number]
        one_pass = passes.get(id(item))
        if one_pass is not None:  # its regions, and the sum it folds, are the next items
            _emit_one_pass(emit, one_pass)
            for region in one_pass.regions:
                number += 1
                _emit_region(emit, region, number, "        ")
            if one_pass.reduction is not None:
                number += 1
                node = one_pass.reduction
                emit.lines.append(f"        {node.name} = {emit.call(node)}  # kernel {number}: {node.target}")
        elif isinstance(item, fusion.Region):
            number += 1
            _emit_region(emit, item, number, "    ")
        else:
            number += 1
            emit.lines.append(f"    {item.name} = {emit.call(item)}  # kernel {number}: {item.target}")
    outputs = [n.name for n in graph.outputs]
    emit.lines.append(f"    return ({', '.join(outputs)}{',' if len(outputs) == 1 else ''})")
    return "\n".join(emit.lines) + "\n", emit.namespace, fusion.kernel_count(items)


class _OnePass:
    """Adjacent regions of one shape evaluated in one pass over their elements: the name the
    generated code calls it by, its operands and results, and what its region kernel is made
    of once the source has run."""

    def __init__(self, name: str, regions: List[fusion.Region], reduction: Optional[Node],
                 operands: List[Node], results: List[Node], blocked_name: Optional[str],
                 loop: Optional[numba_kernels.NumbaKernel], may_fail: bool) -> None:
        self.name = name
        self.regions = regions
        self.reduction = reduction  # a sum folded into the pass (it follows the regions)
        self.operands = operands
        self.results = results
        self.blocked_name = blocked_name
        self.loop = loop
        self.may_fail = may_fail


def _adjacent_groups(items: List[fusion.Item]) -> List[Tuple[List[fusion.Region], Optional[Node]]]:
    """Runs of regions next to each other in graph order with one shape (independent chains
    of one expression, ``a*1.5 + b*b``, are regions of their own), each with the sum right
    after it that folds into its pass, if any (fusion.folds_into)."""
    groups: List[Tuple[List[fusion.Region], Optional[Node]]] = []
    previous: Any = None
    for item in items:
        if isinstance(item, fusion.Region):
            if isinstance(previous, fusion.Region) and \
                    same_shape(item.nodes[0].meta.shape, previous.nodes[0].meta.shape):
                groups[-1][0].append(item)
            else:
                groups.append(([item], None))
        elif isinstance(previous, fusion.Region):
            regions = groups[-1][0]
            if fusion.folds_into(item, fusion.Region([n for r in regions for n in r.nodes])):
                groups[-1] = (regions, item)
        previous = item
    return groups


def _one_pass_groups(emit: _Emitter, graph: Graph, items: List[fusion.Item],
                     use_numba: bool) -> Dict[int, _OnePass]:
    """id(first region of a group) -> its one-pass evaluation, for each group of regions
    large enough to gain from one (its helper function's lines go first in ``emit.lines``)."""
    passes: Dict[int, _OnePass] = {}
    for number, (regions, reduction) in enumerate(_adjacent_groups(items), 1):
        group = fusion.Region([n for r in regions for n in r.nodes] +
                              ([reduction] if reduction is not None else []))
        if len(group.nodes) < 2:
            continue
        operands = fusion.region_operands(group)
        results = fusion.region_results(graph, group)
        label = f"group{number}"
        lines = blocked.blocked_source(emit, group, operands, results, f"_blocked_{label}")
        loop = None
        shape = group.nodes[0].meta.shape
        # A dynamic size is compared with MIN_ELEMENTS at run time (comparing it here would
        # record a guard).
        if use_numba and (has_symbols(shape) or math.prod(shape) >= numba_kernels.MIN_ELEMENTS) \
                and numba_kernels.eligible(group, operands):
            loop = numba_kernels.NumbaKernel(numba_kernels.kernel_source(group, operands, results),
                                             shape, operands, results,
                                             f"numba kernel {graph.graph_hash()[:12]} {label}")
        if lines is None and loop is None:
            continue
        emit.lines.extend(lines or [])
        may_fail = any(may_fail_at_run_time(n) for n in group.nodes)
        one_pass = _OnePass(f"_k_{label}", regions, reduction, operands, results,
                            f"_blocked_{label}" if lines is not None else None, loop, may_fail)
        emit.namespace[one_pass.name] = one_pass  # a region kernel once the source has run
        passes[id(regions[0])] = one_pass
        _keep_out_of_later_regions(items, regions, {n.name for n in group.nodes} -
                                   {n.name for n in results})
    return passes


def _keep_out_of_later_regions(items: List[fusion.Item], regions: List[fusion.Region],
                               inside: set) -> None:
    """A value that exists only inside a one-pass group has no whole array a later region
    could write into: those regions allocate instead."""
    for region in items:
        if isinstance(region, fusion.Region) and all(region is not r for r in regions):
            for name, buffer in list(region.out_buffer.items()):
                if buffer in inside:
                    del region.out_buffer[name]
            region.external_arrays = [n for n in region.external_arrays if n.name not in inside]


def make_region_kernels(namespace: Dict[str, Any]) -> None:
    """Replace the _OnePass objects ``lower`` left in the executed namespace by their
    region kernels (region_kernel.make_region_kernel), now that the blocked functions exist."""
    for name, one_pass in list(namespace.items()):
        if isinstance(one_pass, _OnePass):
            blocked_fn = namespace[one_pass.blocked_name] if one_pass.blocked_name else None
            namespace[name] = make_region_kernel(blocked_fn, one_pass.loop, one_pass.may_fail)


def _emit_one_pass(emit: _Emitter, one_pass: _OnePass) -> None:
    """The call of a group's region kernel; the regions' own code follows as its fallback."""
    arrays = [n for n in one_pass.operands if n.meta.ndim >= 1]
    # Fresh results are C-contiguous: NumPy's layout only when every operand is.
    checks = " and ".join(f"{n.name}.flags.c_contiguous" for n in arrays) or "True"
    results = ", ".join(n.name for n in one_pass.results) + ","
    emit.lines += [f"    # one pass over {len(one_pass.regions)} region(s): {one_pass.name}",
                   f"    _r = {one_pass.name}({', '.join(n.name for n in one_pass.operands)}) "
                   f"if {checks} else None",
                   "    if _r is not None:",
                   f"        ({results}) = _r",
                   "    else:  # NumPy over whole arrays"]


def _emit_region(emit: _Emitter, region: fusion.Region, number: int, indent: str) -> None:
    names = ", ".join(n.target.rsplit(".", 1)[-1] for n in region.nodes)
    emit.lines.append(f"{indent}# kernel {number}: fused region of {len(region.nodes)} ({names})")
    if not region.out_buffer:
        for node in region.nodes:
            emit.lines.append(f"{indent}{node.name} = {emit.call(node)}")
        return
    checks = " and ".join(f"{n.name}.flags.c_contiguous" for n in region.external_arrays) or "True"
    emit.lines.append(f"{indent}if {checks}:")
    for node in region.nodes:
        out = region.out_buffer.get(node.name, "")
        emit.lines.append(f"{indent}    {node.name} = {emit.call(node, out)}")
    # Not all C-contiguous: NumPy would choose the result layouts itself.
    emit.lines.append(f"{indent}else:")
    for node in region.nodes:
        emit.lines.append(f"{indent}    {node.name} = {emit.call(node)}")


class NumpyBackend(Backend):
    """``use_numba``: large fused regions run as numba loops where numba is installed
    (None: whenever it is and ``compiler.config.use_numba`` is set; False: blocked NumPy
    only, for comparison)."""

    name = "numpy"

    def __init__(self, use_numba: Optional[bool] = None) -> None:
        self.use_numba = use_numba

    def compile(self, graph: Graph) -> CompiledGraph:
        check_graph(graph, self.name)
        use_numba = self.use_numba if self.use_numba is not None else \
            config.use_numba and numba_kernels.numba_available()
        try:
            source, namespace, kernels = lower(graph, use_numba)
            code = compile_generated(source, unique_filename(f"numpy kernel {graph.graph_hash()[:12]}"))
            exec(code, namespace)
            make_region_kernels(namespace)
        except (LoweringError, SyntaxError) as error:
            reason = f"{type(error).__name__}: {error}"
            logger.warning("numpy backend cannot lower graph %s, running it eagerly: %s",
                           graph.graph_hash(), reason)  # only on this rare path: hashing costs
            return CompiledGraph(make_runner(graph), graph, "eager", kernel_count=0,
                                 fallback_reason=reason)
        return CompiledGraph(namespace[_FUNCTION_NAME], graph, self.name,
                             kernel_count=kernels, source=source)
