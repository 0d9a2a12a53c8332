"""Test doubles for the harness: a synthetic suite, a fake engine, hand-built cells."""
from __future__ import annotations

import ctypes
import dis
import hashlib
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from matrix import schema
from matrix.cases import Registry
from matrix.cases.inputs import arr, args
from matrix.engines import BackendState, UnknownBackend

REGISTRY = Registry()
case = REGISTRY.case


@case("synthetic", args(arr(4)))
def doubles(x):
    return x * 2.0


@case("synthetic", args(arr(4)), args(arr(2, 2)), recompiles=1)
def adds_then_multiplies(x):
    y = x + x
    return y * y


@case("synthetic", args(arr(4)))
def raises_the_same(x):
    raise RuntimeError("raised by the plain function too")


@case("synthetic", args(arr(4)))
def wrong_when_compiled(x):
    return x + 1.0


@case("crashing", args(arr(4)))
def exits_the_process(x):
    os._exit(7)


@case("crashing", args(arr(4)))
def segfaults(x):
    ctypes.string_at(0)


@case("crashing", args(arr(4)))
def hangs(x):
    time.sleep(120)


@case("crashing", args(arr(4)))
def compile_raises(x):
    return x


class FakeEngine:
    """Records one event per call from the function's real bytecode (so opcodes differ
    per interpreter like the compiler's would); misbehaves on purpose for some cases."""

    def __init__(self) -> None:
        self._events: List[Dict[str, Any]] = []

    def backend_state(self, name: str) -> BackendState:
        if name == "triton":
            return BackendState(schema.CELL_NO_GPU, "eager", "no CUDA device")
        if name == "typo":
            raise UnknownBackend("unknown backend 'typo'; the compiler offers eager, gpu, triton, bogus")
        if name == "gpu":
            return BackendState(schema.CELL_NO_GPU, "eager", "no GPU: fake", probe="gpu")
        if name == "bogus":
            return BackendState(schema.CELL_UNAVAILABLE_PREFIX + "bogus is not a backend", None)
        return BackendState(schema.CELL_OK, name)

    def reset(self) -> None:
        self._events = []

    def compile(self, fn: Callable[..., Any], backend: str) -> Callable[..., Any]:
        if fn.__name__ == "compile_raises":
            raise RuntimeError("the fake compiler refuses this function")
        seen_shapes: List[Any] = []
        cannot_execute = backend == "gpu"

        def compiled(*a: Any, **k: Any) -> Any:
            shape = getattr(a[0], "shape", None) if a else None
            if shape not in seen_shapes:
                seen_shapes.append(shape)
                self._events.append(fake_event(fn, len(seen_shapes) - 1, backend))
            if cannot_execute:
                raise RuntimeError("compiled for a GPU this machine does not have")
            result = fn(*a, **k)
            return result + 1.0 if fn.__name__ == "wrong_when_compiled" else result
        return compiled

    def events(self) -> List[Dict[str, Any]]:
        return list(self._events)


def fake_event(fn: Callable[..., Any], recompile: int, backend: str) -> Dict[str, Any]:
    ops = Counter(i.opname for i in dis.get_instructions(fn))
    text = f"graph {fn.__name__}\n  call numpy.multiply"
    return {"compile_id": f"0/{recompile}", "frame_name": fn.__name__, "ir_count": sum(ops.values()),
            "ir_opcodes": dict(ops), "graph_node_count": 1, "graph_count": 1, "graph_break_count": 0,
            "break_reasons": [], "guard_count": 2, "guards": ["type(x) is ndarray", "x.shape == (4,)"],
            "recompile_reason": "x.shape changed" if recompile else None, "compile_time_s": 0.001,
            "kernel_count": 3 if backend == "gpu" else 0, "graph_hashes": [hashlib.sha256(text.encode()).hexdigest()[:16]],
            "graph_texts": [text], "fallback_reason": None, "backend": backend}


def make_case(ir_opcodes: Dict[str, int], *, status: str = "pass", group: str = "g",
              graph_text: str = "graph\n  add = numpy.add(x, x)", **metrics: Any) -> schema.Json:
    """A hand-built case result whose ir_count is the sum of its opcodes."""
    values = {"ir_count": sum(ir_opcodes.values()), "graph_node_count": 1, "graph_count": 1,
              "graph_break_count": 0, "guard_count": 2, "recompile_count": 0, "kernel_count": 0,
              "compile_time_s": 0.002}
    values.update(metrics)
    digest = hashlib.sha256(graph_text.encode()).hexdigest()[:16]
    return schema.case_result(group, status, None if status == "pass" else "planted", metrics=values,
                              ir_opcodes=dict(ir_opcodes), graph_hash=digest, graph_hashes=[digest],
                              graph_texts=[graph_text], guards=["[0/0] type(x) is ndarray"], calls=1)


def make_cell(python: str, backend: str = "eager", cases: Optional[Dict[str, schema.Json]] = None, *,
              machine: str = "box-a", run_id: str = "run-1", cell_status: str = schema.CELL_OK,
              timestamp: str = "2026-01-01T00:00:00+00:00", coverage: Optional[schema.Json] = None,
              subject: str = schema.SUBJECT_TRACEMATRIX, torch: Optional[str] = None) -> schema.Json:
    env = {"python_version": f"{python}.0", "python_implementation": "CPython", "numpy": "1.26.4",
           "triton": None, "platform": "Linux", "git_commit": "0" * 40}
    if torch is not None:
        env["torch"] = torch
    return schema.cell_document(run_id=run_id, timestamp=timestamp, machine=machine, python=python,
                                backend=backend, cell_status=cell_status, environment=env,
                                coverage=coverage, duration_s=1.0, cases=cases or {}, subject=subject)


def write_cells(folder: Path, *cells: schema.Json) -> List[Path]:
    """Each cell as a result file in `folder`, in the order given."""
    paths = []
    for i, cell in enumerate(cells):
        path = folder / f"{i}-{schema.cell_name(cell['python'], cell['backend'], cell['subject'])}.json"
        schema.write_cell(path, cell)
        paths.append(path)
    return paths


class FakeDynamoEngine(FakeEngine):
    """The fake engine standing in for Dynamo where torch is absent: same events, the
    Dynamo subject's backends, a torch version in the environment."""

    subject = schema.SUBJECT_DYNAMO
    tolerance = 1e-9

    def backend_state(self, name: str) -> BackendState:
        if name not in ("eager", "aot_eager"):
            raise UnknownBackend(f"unknown backend {name!r} for the Dynamo subject; it offers eager, aot_eager")
        return BackendState(schema.CELL_OK, name, "torch 9.9.0 (fake)")

    def environment(self) -> Dict[str, Any]:
        return {"torch": "9.9.0+fake"}


# Opcode multisets shaped like Dynamo's test1 on 3.10 and 3.11 (3.11 adds RESUME and
# turns BINARY_ADD / BINARY_MULTIPLY into BINARY_OP).
TEST1_310 = {"LOAD_FAST": 5, "BINARY_ADD": 1, "STORE_FAST": 2, "BINARY_MULTIPLY": 1, "RETURN_VALUE": 1}
TEST1_311 = {"RESUME": 1, "LOAD_FAST": 5, "BINARY_OP": 2, "STORE_FAST": 2, "RETURN_VALUE": 1}
