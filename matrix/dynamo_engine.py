"""The Dynamo subject: the suite through `torch.compile(backend=...)`, measured by Dynamo.

Every number comes from Dynamo's own bookkeeping, one record per compiled frame
(`torch._dynamo.utils.get_compilation_metrics()`, the `CompilationMetrics` that Dynamo's
own `test_ir_count` reads): `ir_count`, `guard_count`, `recompile_reason`, the restart
reasons of a graph break, the failure of a frame it gave up on.  Two things Dynamo does
not keep are observed as it works, never recomputed:

- the graphs: the backend is Dynamo's registered backend of that name, wrapped so that
  each FX graph it receives is recorded (call nodes, text) under its compile id;
- the opcodes behind `ir_count`: where Dynamo adds to `ir_count`, the instructions its
  translator counted (`instructions[start_point:instruction_pointer]`) are recorded.
  They are kept only where they add up to the `ir_count` Dynamo recorded for the frame,
  so a change in Dynamo's internals makes them absent, never wrong.  Those counted in
  Dynamo's own polyfills (Python versions of builtins it traces) are tagged as such.

torch is imported by this module only when the engine is built; where it cannot be, the
engine raises `SubjectUnavailable` and the cell says so ("subject unavailable").
"""
from __future__ import annotations

import hashlib
import importlib
import sys
from collections import Counter
from typing import Any, Callable, Dict, List, NamedTuple, Optional

from matrix import schema
from matrix.engines import BackendState, SubjectUnavailable, UnknownBackend
from matrix.explain import polyfill_opname

# Dynamo's backends that need nothing but torch on the CPU.
DYNAMO_BACKENDS = ("eager", "aot_eager")
# torch computes NumPy's functions with its own kernels (torch._numpy): a float result may
# differ from NumPy's in the last bits.  Relative tolerance for comparing the results.
RESULT_TOLERANCE = 1e-9
_CALL_OPS = ("call_function", "call_method", "call_module")
_METRICS_KEPT = 4096


class _OpcodeRecorder:
    """Opnames Dynamo counted into `ir_count`, per compile id (see the module docstring)."""

    def __init__(self, torch_guards: Any) -> None:
        self._guards = torch_guards
        self.by_compile: Dict[str, Counter] = {}

    def record(self, translator: Any) -> None:
        instructions = getattr(translator, "instructions", None)
        start, stop = getattr(translator, "start_point", None), getattr(translator, "instruction_pointer", None)
        if instructions is None or start is None or stop is None:
            return
        compile_id = str(self._guards.CompileContext.current_compile_id())
        names = [getattr(inst, "opname", "?") for inst in instructions[start:stop]]
        own = dynamos_own_code(getattr(translator, "f_code", None))
        if own is not None:
            names = [polyfill_opname(name, own) for name in names]
        self.by_compile.setdefault(compile_id, Counter()).update(names)


def dynamos_own_code(code: Any) -> Optional[str]:
    """The function's name where ``code`` is Dynamo's own (under torch/_dynamo), else None."""
    filename = str(getattr(code, "co_filename", "")).replace("\\", "/")
    return getattr(code, "co_name", "?") if "/torch/_dynamo/" in filename else None


def _install_ir_count_hook(metrics_context_class: Any, recorder: _OpcodeRecorder) -> None:
    """Wrap `MetricsContext.increment` once per process: for "ir_count", the caller is
    the translator whose counted instructions are recorded before Dynamo adds them."""
    original = metrics_context_class.increment
    if getattr(original, "_tracematrix_hook", False):
        original.recorder[0] = recorder
        return

    def increment(self: Any, metric: str, value: int) -> None:
        if metric == "ir_count":
            caller = sys._getframe(1).f_locals.get("self")
            try:
                increment.recorder[0].record(caller)
            except Exception:  # observing must never change what Dynamo does
                pass
        original(self, metric, value)

    increment._tracematrix_hook = True  # type: ignore[attr-defined]
    increment.recorder = [recorder]  # type: ignore[attr-defined]
    metrics_context_class.increment = increment


class _Graph(NamedTuple):
    text: str
    calls: int        # call nodes: the graph's ops, as graph_node_count counts them


def _graph_text(gm: Any) -> str:
    """The FX graph's Python, without the source-location comments (they name files)."""
    code = str(getattr(gm, "code", gm))
    return "\n".join(line for line in code.strip().splitlines() if not line.strip().startswith("#"))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class DynamoEngine:
    """`torch.compile` in this interpreter; an engine in `matrix.engines`' sense."""

    subject = schema.SUBJECT_DYNAMO
    tolerance = RESULT_TOLERANCE

    def __init__(self) -> None:
        try:
            self.torch = importlib.import_module("torch")
            self.dynamo = importlib.import_module("torch._dynamo")
            self.utils = importlib.import_module("torch._dynamo.utils")
            self.guards = importlib.import_module("torch._guards")
            metrics_context = importlib.import_module("torch._dynamo.metrics_context")
            self._lookup_backend = importlib.import_module("torch._dynamo.backends.registry").lookup_backend
        except Exception as err:  # not installed, or installed and broken: both are "unavailable"
            raise SubjectUnavailable(f"torch is not importable here ({type(err).__name__}: {err})",
                                     DYNAMO_BACKENDS) from None
        # The cases are tiny; one thread keeps forked workers clear of a thread pool
        # started in the parent.
        self.torch.set_num_threads(1)
        # Dynamo keeps the last 64 frames' metrics; a case with many recompiles and
        # continuations must not lose its first ones.
        limit = getattr(self.utils, "set_compilation_metrics_limit", None)
        if limit is not None:
            limit(_METRICS_KEPT)
        self._recorder = _OpcodeRecorder(self.guards)
        _install_ir_count_hook(metrics_context.MetricsContext, self._recorder)
        self._graphs: Dict[str, List[_Graph]] = {}

    def environment(self) -> Dict[str, Any]:
        """What the cell's environment adds for this subject (the history service reads
        `torch` as an upstream version)."""
        return {"torch": self.torch.__version__,
                "dynamo_trace_numpy": bool(getattr(self.dynamo.config, "trace_numpy", False))}

    def backend_state(self, name: str) -> BackendState:
        if name not in DYNAMO_BACKENDS:
            raise UnknownBackend(f"unknown backend {name!r} for the Dynamo subject; "
                                 f"it offers {', '.join(DYNAMO_BACKENDS)}")
        if not getattr(self.dynamo.config, "trace_numpy", False):
            return BackendState(schema.CELL_SUBJECT_UNAVAILABLE_PREFIX + "torch._dynamo.config.trace_numpy "
                                "is off: Dynamo would not trace NumPy code", None)
        return BackendState(schema.CELL_OK, name, f"torch {self.torch.__version__}")

    def warm_up(self, backend: str) -> None:
        """Compile one tiny NumPy function in the parent, so that forked workers inherit
        what Dynamo imports lazily."""
        import numpy as np

        try:
            self.compile(lambda x: (x * 2.0 + 1.0).sum(), backend)(np.ones(2))
        except Exception:  # the cases will report whatever is wrong, one by one
            pass
        self.reset()

    def reset(self) -> None:
        self.dynamo.reset()
        self.utils.clear_compilation_metrics()
        self.utils.counters.clear()
        self._recorder.by_compile.clear()
        self._graphs.clear()

    def compile(self, fn: Callable[..., Any], backend: str, **options: Any) -> Callable[..., Any]:
        # The suite's options are torch.compile's own (dynamic=None | True | False).
        return self.torch.compile(fn, backend=self._recording(backend), **options)

    def _recording(self, backend: str) -> Callable[..., Any]:
        inner = self._lookup_backend(backend)

        def recording_backend(gm: Any, example_inputs: Any) -> Any:
            compile_id = str(self.guards.CompileContext.current_compile_id())
            calls = sum(1 for node in gm.graph.nodes if node.op in _CALL_OPS)
            self._graphs.setdefault(compile_id, []).append(_Graph(_graph_text(gm), calls))
            return inner(gm, example_inputs)

        recording_backend.__name__ = backend  # Dynamo names the backend in its logs
        return recording_backend

    def events(self) -> List[Dict[str, Any]]:
        """One event per frame Dynamo compiled (or gave up on), in the order it did them."""
        return [self._event(m) for m in self.utils.get_compilation_metrics()]

    def _event(self, metrics: Any) -> Dict[str, Any]:
        compile_id = str(metrics.compile_id)
        graphs = self._graphs.get(compile_id, [])
        ir_count = metrics.ir_count
        opcodes = self._recorder.by_compile.get(compile_id, Counter())
        exact = ir_count is not None and sum(opcodes.values()) == ir_count
        breaks = sorted(str(r) for r in (metrics.restart_reasons or ()))
        if metrics.fail_type:
            fallback: Optional[str] = f"{metrics.fail_type}: {metrics.fail_reason}"
        elif metrics.has_guarded_code is False:
            fallback = "Dynamo installed no compiled code for this frame (it runs natively)"
        else:
            fallback = None
        return {
            "compile_id": compile_id, "frame_name": metrics.co_name,
            "ir_count": ir_count, "ir_opcodes": dict(opcodes) if exact else {},
            "graph_count": len(graphs),
            "graph_node_count": sum(g.calls for g in graphs) if graphs else metrics.graph_op_count,
            "graph_texts": [g.text for g in graphs], "graph_hashes": [_digest(g.text) for g in graphs],
            "graph_break_count": len(breaks), "break_reasons": breaks,
            "guard_count": metrics.guard_count, "guards": [],
            "recompile_reason": metrics.recompile_reason,
            "compile_time_s": metrics.entire_frame_compile_time_s,
            "fallback_reason": fallback,
            "kernel_count": None, "backend": None,
        }

