"""The ``triton`` backend: fused regions of a graph as generated Triton kernels.

    backend = TritonBackend()
    compiled = backend.compile(graph)     # lowering + kernel source; no GPU needed
    compiled.kernel_count, compiled.source
    compiled(*arrays)                     # on a GPU: NumPy in, NumPy out
    backend.compile_only(graph)           # kernels compiled ahead of time for sm_90,
                                          # with TTIR op counts: works without a GPU

A graph with an op the backend does not lower runs through the ``eager``
backend as a whole (``compiled.fallback_reason``; logged on
``compiler.backends.triton``).  Calling a compiled graph that has kernels on
a machine without a GPU raises ``TritonUnavailable`` naming the reason
(``unavailable_reason()``: "triton not installed", "no GPU", ...).
"""
from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from compiler.backends.triton import toolchain
from compiler.backends.triton.codegen import build_program
from compiler.backends.triton.lowering import NotLowerable
from compiler.backends.triton.program import Program

logger = logging.getLogger("compiler.backends.triton")

__all__ = ["CompileReport", "KernelReport", "TritonBackend", "TritonCompiledGraph",
           "TritonUnavailable", "available", "unavailable_reason"]


class TritonUnavailable(RuntimeError):
    """The Triton backend cannot run here (no Triton, no GPU, no array library)."""


def unavailable_reason() -> Optional[str]:
    """Why compiled graphs cannot run here, or None when they can."""
    if toolchain.triton_version() is None:
        return "triton not installed"
    from compiler.backends.triton.launch import cuda_device_count, device_arrays
    if cuda_device_count() == 0:
        return "no GPU"
    if device_arrays() is None:
        return "no array library for device buffers (install torch or cupy)"
    return None


def available() -> bool:
    return unavailable_reason() is None


class TritonCompiledGraph:
    """A graph lowered to Triton kernels (or, with a fallback reason, run eagerly)."""

    def __init__(self, graph: Any, program: Optional[Program], fallback: Any = None,
                 fallback_reason: Optional[str] = None):
        self.graph = graph
        self.program = program
        self.fallback = fallback
        self.fallback_reason = fallback_reason
        self.kernel_count = len(program.kernels) if program is not None else 0
        self.source: Optional[str] = program.module_source if program is not None else None
        self._module: Any = None
        self._device: Any = None

    def __call__(self, *inputs: Any) -> tuple:
        if self.program is None:
            return tuple(self.fallback(*inputs))
        reason = unavailable_reason()
        if reason is not None:
            raise TritonUnavailable(
                f"triton backend cannot run graph {self.program.graph_hash}: {reason}. Use the "
                "'numpy' or 'eager' backend here, or TritonBackend().compile_only(graph) for the "
                "kernels and their IR without running them")
        from compiler.backends.triton.launch import device_arrays, run_program
        if self._module is None:
            self._module = toolchain.load_kernel_module(self.program.module_source)
            self._device = device_arrays()
        return run_program(self.program, inputs, self._device, self._module)


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


class TritonBackend:
    name = "triton"

    def compile(self, graph: Any) -> TritonCompiledGraph:
        try:
            program = build_program(graph)
        except NotLowerable as reason:
            logger.info("graph %s runs through the eager backend: %s", graph.graph_hash(), reason)
            from compiler.backends import get_backend
            return TritonCompiledGraph(graph, None, get_backend("eager").compile(graph), str(reason))
        return TritonCompiledGraph(graph, program)

    def compile_only(self, graph: Any,
                     target: Tuple[str, int, int] = toolchain.DEFAULT_TARGET) -> CompileReport:
        """Lower ``graph`` and compile every kernel ahead of time for ``target``
        (no GPU needed).  Raises TritonUnavailable when Triton is not installed."""
        version = toolchain.triton_version()
        if version is None:
            raise TritonUnavailable("triton not installed: compile-only needs the triton package")
        start = time.perf_counter()
        target_name = f"{target[0]}:sm_{target[1]}"
        try:
            program = build_program(graph)
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
