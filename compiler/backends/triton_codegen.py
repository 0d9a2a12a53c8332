"""The triton backend (GPU).  Not implemented yet: it reports why it is not
available here, and ``compile`` runs graphs eagerly with that reason logged,
so a matrix cell shows "unavailable" instead of crashing."""
from __future__ import annotations

import importlib.util
from typing import Optional

from compiler.backends.base import Backend, CompiledGraph, check_graph, logger
from compiler.backends.eager import make_runner
from compiler.graph import Graph


def _cuda_device_present() -> bool:
    import os
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")


class TritonBackend(Backend):
    name = "triton"

    def unavailable_reason(self) -> Optional[str]:
        if importlib.util.find_spec("triton") is None:
            return "triton is not installed (pip install 'tracematrix[gpu]')"
        if not _cuda_device_present():
            return "no GPU: no CUDA device on this machine"
        return "triton code generation is not implemented yet (issue 6)"

    def compile(self, graph: Graph) -> CompiledGraph:
        check_graph(graph, self.name)
        reason = self.unavailable_reason() or "unavailable"
        logger.warning("triton backend unavailable, running graph %s eagerly: %s",
                       graph.graph_hash(), reason)
        return CompiledGraph(make_runner(graph), graph, "eager", kernel_count=0,
                             fallback_reason=reason)
