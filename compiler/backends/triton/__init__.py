"""The ``triton`` backend: fused regions of a graph as generated Triton kernels.

    backend = TritonBackend()
    compiled = backend.compile(graph)     # a CompiledGraph: lowering + kernel source, no GPU needed
    compiled.kernel_count, compiled.source, compiled.fn.program
    compiled(*arrays)                     # on a GPU: NumPy in, NumPy out
    backend.compile_only(graph)           # kernels compiled ahead of time for sm_90,
                                          # with TTIR op counts: works without a GPU

A graph with an op the backend does not lower runs through the ``eager``
backend as a whole (``compiled.backend == "eager"``, ``compiled.fallback_reason``;
logged on ``compiler.backends.triton``).  Calling a compiled graph that has kernels on
a machine without a GPU raises ``TritonUnavailable`` naming the reason
(``unavailable_reason()``: "triton not installed", "no GPU", ...).
"""
from __future__ import annotations

import importlib.util
import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from compiler.backends.base import Backend, CompiledGraph, check_graph
from compiler.backends.eager import make_runner
from compiler.backends.triton import toolchain
from compiler.backends.triton.codegen import build_program
from compiler.backends.triton.lowering import NotLowerable
from compiler.backends.triton.program import Program
from compiler.exc import BackendUnavailable
from compiler.graph import Graph
from compiler.ops import may_fail_at_run_time

logger = logging.getLogger("compiler.backends.triton")

# How close results are to the eager backend's: (rtol, atol) of the least
# precise float dtype a result depends on (a float64 result computed from a
# float32 sum carries float32 error).  Integers and bools are exact.  Floats differ by summation order (a block
# tree instead of NumPy's pairwise sum), fused multiply-add
# (TRITON_DEFAULT_FP_FUSION=1) and the GPU's exp/log/sin/sqrt, which are
# within a few ulp; float16 sums and means accumulate in float32 (more exact
# than NumPy's float16 sum).
TOLERANCES: Dict[str, Tuple[float, float]] = {
    "float16": (1e-2, 1e-3),
    "float32": (1e-5, 1e-6),
    "float64": (1e-12, 1e-13),
}

__all__ = ["TOLERANCES", "CompileReport", "KernelReport", "ProgramRunner", "TritonBackend",
           "TritonUnavailable", "available", "unavailable_reason"]


class TritonUnavailable(BackendUnavailable):
    """The Triton backend cannot run kernels here (no Triton, no GPU, no array library)."""


def unavailable_reason() -> Optional[str]:
    """Why compiled graphs cannot run here, or None when they can.  Cheap
    checks first: Triton is only imported on a machine with a CUDA device."""
    if importlib.util.find_spec("triton") is None:
        return "triton not installed"
    from compiler.backends.triton.launch import cuda_device_count, device_arrays
    if cuda_device_count() == 0:
        return "no GPU"
    if toolchain.triton_version() is None:
        return "triton not installed (import triton failed)"
    if device_arrays() is None:
        return "no array library for device buffers (install torch or cupy)"
    return None


def available() -> bool:
    return unavailable_reason() is None


class ProgramRunner:
    """Runs a lowered graph's kernels on the GPU (the ``fn`` of its CompiledGraph)."""

    def __init__(self, program: Program):
        self.program = program
        self._module: Any = None
        self._device: Any = None

    def load(self) -> None:
        """Load the kernels (once); raises TritonUnavailable where they cannot run."""
        if self._module is None:
            from compiler.backends.triton.launch import device_arrays
            reason = unavailable_reason()
            if reason is not None:
                raise TritonUnavailable(
                    f"triton backend cannot run graph {self.program.graph_hash}: {reason}. Use "
                    "the 'numpy' or 'eager' backend here, or TritonBackend().compile_only(graph) "
                    "for the kernels and their IR without running them")
            self._module = toolchain.load_kernel_module(self.program.module_source)
            self._device = device_arrays()

    def __call__(self, *inputs: Any) -> tuple:
        from compiler.backends.triton.launch import run_program
        self.load()
        return run_program(self.program, inputs, self._device, self._module)


class ErrorStateDispatch:
    """A graph whose ops may signal floating-point errors, for the kernels or the eager
    backend, chosen per call.  Kernels set no NumPy floating-point flags, so they run only
    while NumPy's error state ignores every error (nothing could be reported then); under
    any other state the graph runs eagerly, where NumPy reports errors exactly as the plain
    function would see them (compiler.entry_codegen: ops that fail inside a graph)."""

    def __init__(self, kernels: Callable[..., tuple], eager: Callable[..., tuple]) -> None:
        self.kernels = kernels
        self.eager = eager

    @property
    def program(self) -> Program:
        return self.kernels.program

    def __call__(self, *inputs: Any) -> tuple:
        load = getattr(self.kernels, "load", None)
        if load is not None:
            load()  # a machine that cannot run the kernels says so, whichever path this call takes
        for mode in np.geterr().values():
            if mode != "ignore":
                return self.eager(*inputs)
        return self.kernels(*inputs)


@dataclass
class KernelReport:
    name: str
    kind: str
    nodes: List[str]
    source: str
    ttir_ops: Dict[str, int]
    ttir_op_count: int
    compile_time_s: float


@dataclass
class CompileReport:
    """The compile-only facts the matrix records for a graph."""

    graph_hash: str
    triton_version: Optional[str]
    target: str
    kernel_count: int
    fallback_reason: Optional[str]
    lowering_time_s: float
    compile_time_s: float
    kernels: List[KernelReport] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


class TritonBackend(Backend):
    name = "triton"

    def unavailable_reason(self) -> Optional[str]:
        return unavailable_reason()

    def lower(self, graph: Graph) -> Program:
        """The graph as kernels; raises NotLowerable naming the first op that has no lowering."""
        check_graph(graph, self.name)
        if any(node.meta.kind == "generator" for node in graph.placeholders):
            # Draws run on NumPy's generator in program order, even when their result is
            # unused (kernels keep only what an output needs): the whole graph runs eagerly.
            raise NotLowerable("the graph draws from a numpy.random.Generator (draws run on "
                               "the eager backend)")
        # Kernels, buffers and launch grids are sized at generation: dynamic dimensions are
        # specialized (guarded) first.
        graph.specialize_shapes("the triton backend sizes kernels and buffers when generating them")
        return build_program(graph)

    def compile(self, graph: Graph) -> CompiledGraph:
        """Lower and generate kernels (no GPU needed); the result runs them on a
        GPU, or the whole graph eagerly when an op has no lowering."""
        try:
            program = self.lower(graph)
        except NotLowerable as reason:
            logger.info("graph %s runs through the eager backend: %s", graph.graph_hash(), reason)
            return CompiledGraph(make_runner(graph), graph, "eager", fallback_reason=str(reason))
        runner: Any = ProgramRunner(program)
        if any(may_fail_at_run_time(node) for node in graph.call_nodes):
            runner = ErrorStateDispatch(runner, make_runner(graph))
        return CompiledGraph(runner, graph, self.name,
                             kernel_count=len(program.kernels), source=program.module_source)

    def compile_only(self, graph: Graph,
                     target: Tuple[str, int, int] = toolchain.DEFAULT_TARGET) -> CompileReport:
        """Lower ``graph`` and compile every kernel ahead of time for ``target``
        (no GPU needed).  Raises TritonUnavailable when Triton is not installed."""
        version = toolchain.triton_version()
        if version is None:
            raise TritonUnavailable("triton not installed: compile-only needs the triton package")
        target_name = f"{target[0]}:sm_{target[1]}"
        start = time.perf_counter()
        try:
            program = self.lower(graph)
        except NotLowerable as reason:
            logger.info("graph %s runs through the eager backend: %s", graph.graph_hash(), reason)
            return CompileReport(graph.graph_hash(), version, target_name, 0, str(reason),
                                 time.perf_counter() - start, 0.0)
        lowering_time = time.perf_counter() - start
        module = toolchain.load_kernel_module(program.module_source)
        reports = []
        for kernel in program.kernels:
            ir = toolchain.compile_ahead_of_time(getattr(module, kernel.name), kernel.signature,
                                                 {"BLOCK": kernel.block},
                                                 num_warps=kernel.num_warps, target=target)
            reports.append(KernelReport(kernel.name, kernel.kind, list(kernel.nodes), kernel.source,
                                        ir.ttir_ops, ir.ttir_op_count, ir.compile_time_s))
        return CompileReport(program.graph_hash, version, target_name, len(program.kernels), None,
                             lowering_time, sum(r.compile_time_s for r in reports), reports)
