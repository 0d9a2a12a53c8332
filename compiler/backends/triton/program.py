"""A lowered graph as plain data: buffers, kernels in launch order, inputs and outputs.

It is what the GPU launcher (launch.py), the CPU interpreter (interpret.py,
which runs it in a subprocess, hence ``to_dict``/``from_dict``) and the
compile-only path (toolchain.py) all consume; none of them needs the graph.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Tuple

import numpy as np

MODULE_HEADER = "import triton\nimport triton.language as tl\n"


@dataclass(frozen=True)
class BufferSpec:
    """One array in device memory: a graph input, an intermediate or an output."""

    name: str
    shape: Tuple[int, ...]
    dtype: str  # numpy dtype name

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass(frozen=True)
class KernelSpec:
    """One generated kernel and how to launch it."""

    name: str
    kind: str                          # "pointwise" | "row" | "reduce"
    source: str                        # the @triton.jit function's text
    params: Tuple[Tuple[str, str], ...]  # (argument name, Triton type such as "*fp32")
    buffers: Tuple[str, ...]           # the buffer passed for each param, in order
    block: int                         # the BLOCK constexpr
    grid: int                          # programs along axis 0
    num_warps: int
    nodes: Tuple[str, ...]             # graph nodes the kernel computes

    @property
    def signature(self) -> Dict[str, str]:
        return dict(self.params)


@dataclass
class Program:
    """Everything needed to run a graph as Triton kernels."""

    graph_hash: str
    buffers: Dict[str, BufferSpec]
    inputs: List[str]                  # buffer per graph placeholder, in order
    outputs: List[Tuple[str, str]]     # (buffer, "array" | "scalar") per graph output
    kernels: List[KernelSpec] = field(default_factory=list)

    @property
    def module_source(self) -> str:
        """All kernels as one importable module."""
        return "\n\n".join([MODULE_HEADER] + [k.source for k in self.kernels])

    def to_dict(self) -> Dict[str, Any]:
        return {"graph_hash": self.graph_hash,
                "buffers": [asdict(b) for b in self.buffers.values()],
                "inputs": list(self.inputs),
                "outputs": [list(o) for o in self.outputs],
                "kernels": [asdict(k) for k in self.kernels]}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Program":
        buffers = {b["name"]: BufferSpec(b["name"], tuple(b["shape"]), b["dtype"]) for b in data["buffers"]}
        kernels = [KernelSpec(name=k["name"], kind=k["kind"], source=k["source"],
                              params=tuple((p[0], p[1]) for p in k["params"]),
                              buffers=tuple(k["buffers"]), block=k["block"], grid=k["grid"],
                              num_warps=k["num_warps"], nodes=tuple(k["nodes"]))
                   for k in data["kernels"]]
        return cls(data["graph_hash"], buffers, list(data["inputs"]),
                   [(o[0], o[1]) for o in data["outputs"]], kernels)
