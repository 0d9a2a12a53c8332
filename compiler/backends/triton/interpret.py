"""Run generated kernels on the CPU with Triton's interpreter (``TRITON_INTERPRET=1``).

The interpreter expects torch-like tensors (NumPy arrays fail with
"'numpy.ndarray' object has no attribute 'type'"): ``HostBuffer`` is a
zero-copy stand-in over a NumPy array with just the tensor surface the
interpreters of Triton 3.1 to 3.9 use (``data_ptr``, ``dtype``, ``cpu``,
``untyped_storage``, ``new_empty``/``set_``, ``copy_``).  Memory is host
memory already, so every "copy to the host" is the buffer itself.

Triton decides at import time whether ``@triton.jit`` interprets, and the
interpreter patches ``triton.language`` in place, so interpretation runs in
a subprocess: ``run_interpreted`` sends programs and inputs there and reads
the outputs back.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import traceback
from typing import Any, List, Sequence, Tuple

import numpy as np

from compiler.backends.triton.launch import DeviceArrays, run_program
from compiler.backends.triton.program import Program


class HostBuffer:
    """A NumPy array seen by Triton's interpreter as a CPU tensor (no copies)."""

    def __init__(self, array: np.ndarray):
        self.array = array
        self.dtype = array.dtype  # str() gives "float32", which Triton canonicalises

    # the tensor surface
    def data_ptr(self) -> int:
        return int(self.array.ctypes.data)

    def cpu(self) -> "HostBuffer":
        return self

    def to(self, *args: Any, **kwargs: Any) -> "HostBuffer":
        return self

    @property
    def data(self) -> "HostBuffer":
        return self

    @property
    def device(self) -> str:
        return "cpu"

    def copy_(self, other: "HostBuffer") -> "HostBuffer":
        if other.data_ptr() != self.data_ptr():
            np.copyto(self.array, other.array.reshape(self.array.shape))
        return self

    # storage view (Triton 3.2+ copies storages, not tensors)
    def untyped_storage(self) -> "HostBuffer":
        return self

    def new_empty(self, *args: Any, **kwargs: Any) -> "HostBuffer":
        return HostBuffer(self.array)

    def set_(self, storage: "HostBuffer", offset: int, size: Any, stride: Any) -> "HostBuffer":
        self.array = storage.array
        return self

    def storage_offset(self) -> int:
        return 0

    def size(self) -> Tuple[int, ...]:
        return tuple(self.array.shape)

    def stride(self) -> Tuple[int, ...]:
        return tuple(s // self.array.itemsize for s in self.array.strides)

    def element_size(self) -> int:
        return self.array.itemsize

    def numel(self) -> int:
        return int(self.array.size)


class HostArrays(DeviceArrays):
    name = "host"

    def upload(self, array: np.ndarray) -> HostBuffer:
        return HostBuffer(np.array(array, copy=True))

    def empty(self, shape: Tuple[int, ...], dtype: np.dtype) -> HostBuffer:
        # zero-filled: a kernel that fails to write an element shows up as a mismatch,
        # never as a lucky match with stale memory
        return HostBuffer(np.zeros(shape, dtype=dtype))

    def download(self, buffer: HostBuffer, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        return np.array(buffer.array, copy=True).reshape(shape)


class InterpreterError(RuntimeError):
    """A program failed in Triton's interpreter; the message has the subprocess's traceback."""


def run_interpreted(jobs: Sequence[Tuple[Program, Sequence[Any]]],
                    timeout_s: float = 600.0) -> List[Tuple[Any, ...]]:
    """Run each (program, inputs) through Triton's interpreter in one subprocess;
    the outputs of each, in order."""
    with tempfile.TemporaryDirectory(prefix="tracematrix-interpret-") as workdir:
        programs = []
        for index, (program, inputs) in enumerate(jobs):
            programs.append(program.to_dict())
            np.savez(os.path.join(workdir, f"inputs_{index}.npz"),
                     *[np.asarray(value) for value in inputs])
        with open(os.path.join(workdir, "programs.json"), "w", encoding="utf-8") as handle:
            json.dump(programs, handle)
        env = dict(os.environ, TRITON_INTERPRET="1")
        env.pop("TRITON_CACHE_DIR", None)  # the subprocess makes its own
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))))
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        completed = subprocess.run([sys.executable, "-m", "compiler.backends.triton.interpret",
                                    workdir], env=env, capture_output=True, text=True,
                                   timeout=timeout_s)
        if completed.returncode != 0:
            raise InterpreterError("Triton interpreter subprocess failed "
                                   f"(exit {completed.returncode}):\n{completed.stderr[-4000:]}")
        results = []
        for index, (program, _) in enumerate(jobs):
            error_path = os.path.join(workdir, f"error_{index}.txt")
            if os.path.exists(error_path):
                with open(error_path, encoding="utf-8") as handle:
                    raise InterpreterError(f"program {index} ({program.graph_hash}) failed in "
                                           f"Triton's interpreter:\n{handle.read()}")
            with np.load(os.path.join(workdir, f"outputs_{index}.npz")) as data:
                arrays = [data[f"arr_{i}"] for i in range(len(data.files))]
            kinds = [kind for _, kind in program.outputs]
            results.append(tuple(a[()] if kind == "scalar" else a for a, kind in zip(arrays, kinds)))
        return results


def _serve(workdir: str) -> int:
    """The subprocess side: run every program of ``workdir`` in the interpreter."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        print("compiler.backends.triton.interpret must run with TRITON_INTERPRET=1", file=sys.stderr)
        return 2
    from compiler.backends.triton.toolchain import load_kernel_module
    with open(os.path.join(workdir, "programs.json"), encoding="utf-8") as handle:
        programs = [Program.from_dict(p) for p in json.load(handle)]
    device = HostArrays()
    for index, program in enumerate(programs):
        try:
            with np.load(os.path.join(workdir, f"inputs_{index}.npz")) as data:
                inputs = [data[f"arr_{i}"] for i in range(len(data.files))]
            module = load_kernel_module(program.module_source)
            outputs = run_program(program, inputs, device, module)
            np.savez(os.path.join(workdir, f"outputs_{index}.npz"),
                     *[np.asarray(value) for value in outputs])
        except Exception:
            with open(os.path.join(workdir, f"error_{index}.txt"), "w", encoding="utf-8") as handle:
                handle.write(traceback.format_exc())
    return 0


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1]))
