"""Run a ``Program``: NumPy arrays in, kernels launched in order, NumPy arrays out.

Device memory comes from whichever array library is installed (PyTorch or
CuPy); host arrays travel through DLPack where the library takes it.  The
same sequencing runs on the CPU through Triton's interpreter, with
``interpret.HostArrays`` as the "device".
"""
from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from compiler.backends.triton.program import Program


class DeviceArrays:
    """Where a program's buffers live.  Buffers must have ``data_ptr()`` and a
    ``dtype`` Triton can read (what it takes from torch tensors)."""

    name = "device"

    def upload(self, array: np.ndarray) -> Any:
        raise NotImplementedError

    def empty(self, shape: Tuple[int, ...], dtype: np.dtype) -> Any:
        raise NotImplementedError

    def download(self, buffer: Any, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        raise NotImplementedError

    def synchronize(self) -> None:
        pass


class TorchArrays(DeviceArrays):
    name = "torch"

    def __init__(self) -> None:
        import torch
        self.torch = torch

    def upload(self, array: np.ndarray) -> Any:
        torch = self.torch
        try:
            host = torch.from_dlpack(array)
        except (AttributeError, TypeError, RuntimeError, BufferError):
            host = torch.from_numpy(array)
        return host.to("cuda")

    def empty(self, shape: Tuple[int, ...], dtype: np.dtype) -> Any:
        host = self.torch.from_numpy(np.empty(0, dtype=dtype))
        return self.torch.empty(shape, dtype=host.dtype, device="cuda")

    def download(self, buffer: Any, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        return np.array(buffer.cpu().numpy(), dtype=dtype, copy=True).reshape(shape)

    def synchronize(self) -> None:
        self.torch.cuda.synchronize()


class _CupyBuffer:
    """A CuPy array as Triton sees a tensor: ``data_ptr()`` and ``dtype``."""

    def __init__(self, array: Any):
        self.array = array
        self.dtype = array.dtype  # str(np.dtype) is what Triton canonicalises ("float32")

    def data_ptr(self) -> int:
        return int(self.array.data.ptr)


class CupyArrays(DeviceArrays):
    name = "cupy"

    def __init__(self) -> None:
        import cupy
        self.cupy = cupy

    def upload(self, array: np.ndarray) -> Any:
        return _CupyBuffer(self.cupy.asarray(array))

    def empty(self, shape: Tuple[int, ...], dtype: np.dtype) -> Any:
        return _CupyBuffer(self.cupy.empty(shape, dtype=dtype))

    def download(self, buffer: Any, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        return self.cupy.asnumpy(buffer.array).reshape(shape)

    def synchronize(self) -> None:
        self.cupy.cuda.Device().synchronize()


def cuda_device_count() -> int:
    """CUDA devices visible through the driver (0 without a driver), asked of
    libcuda directly so that no array library has to be installed."""
    names = ["libcuda.so.1", "libcuda.so", ctypes.util.find_library("cuda"), "nvcuda.dll"]
    for name in [n for n in names if n]:
        try:
            driver = ctypes.CDLL(name)
        except OSError:
            continue
        count = ctypes.c_int(0)
        if driver.cuInit(0) != 0 or driver.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return 0
        return count.value
    return 0


def device_arrays() -> Optional[DeviceArrays]:
    """The array library that can hold device buffers here, or None."""
    try:
        import torch
        if torch.cuda.is_available():
            return TorchArrays()
    except ImportError:
        pass
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return CupyArrays()
    except Exception:  # ImportError, or CuPy without a usable runtime
        pass
    return None


def check_inputs(program: Program, inputs: Sequence[Any]) -> List[np.ndarray]:
    """The inputs as C-contiguous arrays, checked against what the program was built for."""
    if len(inputs) != len(program.inputs):
        raise TypeError(f"triton compiled graph takes {len(program.inputs)} input(s), "
                        f"got {len(inputs)}")
    arrays = []
    for position, (name, value) in enumerate(zip(program.inputs, inputs)):
        spec = program.buffers[name]
        array = np.asarray(value)
        if array.shape != tuple(spec.shape) or array.dtype != np.dtype(spec.dtype):
            raise TypeError(f"triton compiled graph: input {position} ({name!r}) is "
                            f"{array.dtype.name}{list(array.shape)}, the graph was compiled for "
                            f"{spec.dtype}{list(spec.shape)}; compile it again for these inputs")
        arrays.append(np.ascontiguousarray(array))
    return arrays


def allocate(program: Program, arrays: Sequence[np.ndarray], device: DeviceArrays) -> Dict[str, Any]:
    """Device buffers for every buffer of ``program``, inputs uploaded."""
    buffers: Dict[str, Any] = {}
    for name, array in zip(program.inputs, arrays):
        buffers[name] = device.upload(array)
    for name, spec in program.buffers.items():
        if name not in buffers:
            buffers[name] = device.empty(tuple(spec.shape), np.dtype(spec.dtype))
    return buffers


def launch(program: Program, buffers: Dict[str, Any], kernels: Any) -> None:
    """Launch every kernel once, in order (asynchronously on a GPU)."""
    for kernel in program.kernels:
        function = getattr(kernels, kernel.name)
        args = [buffers[name] for name in kernel.buffers]
        function[(kernel.grid,)](*args, BLOCK=kernel.block, num_warps=kernel.num_warps)


def collect(program: Program, buffers: Dict[str, Any], device: DeviceArrays) -> Tuple[Any, ...]:
    """The graph's outputs as NumPy values (arrays, or NumPy scalars where the graph has them)."""
    device.synchronize()
    results = []
    for name, kind in program.outputs:
        spec = program.buffers[name]
        array = device.download(buffers[name], tuple(spec.shape), np.dtype(spec.dtype))
        results.append(array[()] if kind == "scalar" else array)
    return tuple(results)


def run_program(program: Program, inputs: Sequence[Any], device: DeviceArrays,
                kernels: Any) -> Tuple[Any, ...]:
    """Launch ``program``'s kernels (functions of module ``kernels``) on ``device``."""
    buffers = allocate(program, check_inputs(program, inputs), device)
    launch(program, buffers, kernels)
    return collect(program, buffers, device)
