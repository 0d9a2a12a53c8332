"""The Triton backend: compile-only facts everywhere, bandwidth on a GPU.

    PYTHONPATH=. python benchmarks/bench_triton.py [--sizes 1000000,67108864] [--repeat 10]

Always (Triton installed, GPU or not): for the 8-op arithmetic chain (1M
float32 and float64), the 8-op chain with np.sin, a softmax and a layer norm
on 1024x1024 (the graphs of bench_backends.py), the kernels the backend
generates, their Triton IR op counts and the ahead-of-time compile time for
sm_90.  Without a GPU it then prints "no GPU" and stops.

On a GPU (PyTorch or CuPy for device memory): the fused kernel of the
arithmetic chain, timed with CUDA events on device-resident buffers, as
achieved bandwidth (bytes read + written / time) against the device's copy
bandwidth (a device-to-device copy of the same bytes), and against the same
chain in PyTorch eager (8 kernels).  Not a test: timings depend on the machine.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
from typing import Any, Callable, List, Optional

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_backends import arith_chain_graph, chain_graph, layer_norm_graph, softmax_graph  # noqa: E402

from compiler.backends.triton import TritonBackend, toolchain, unavailable_reason  # noqa: E402
from compiler.backends.triton.codegen import build_program  # noqa: E402
from compiler.backends.triton.launch import allocate, collect, device_arrays, launch  # noqa: E402


def compile_only_facts() -> None:
    backend = TritonBackend()
    workloads = [("8-op arithmetic chain, 1M float32", arith_chain_graph(1_000_000, np.float32)),
                 ("8-op arithmetic chain, 1M float64", arith_chain_graph(1_000_000, np.float64)),
                 ("8-op chain with np.sin, 1M float32", chain_graph(1_000_000, np.float32)),
                 ("softmax, 1024x1024 float64", softmax_graph((1024, 1024))),
                 ("layer norm, 1024x1024 float64", layer_norm_graph((1024, 1024)))]
    print("\ncompile-only (ahead of time for cuda:sm_90, no GPU needed)")
    for title, graph in workloads:
        report = backend.compile_only(graph)
        print(f"  {title}: {report.kernel_count} kernel(s) for {len(graph.call_nodes)} ops, "
              f"lowering {report.lowering_time_s * 1e3:.1f} ms, compile {report.compile_time_s:.2f} s")
        for kernel in report.kernels:
            top = ", ".join(f"{name} {count}" for name, count in
                            sorted(kernel.ttir_ops.items(), key=lambda item: -item[1])[:5])
            print(f"    {kernel.name:12s} {kernel.kind:9s} TTIR ops {kernel.ttir_op_count:3d}  ({top})")


class EventTimer:
    """Milliseconds per call of ``fn`` on the GPU, from CUDA events (best of ``repeat`` rounds)."""

    def __init__(self, library: str):
        if library == "torch":
            import torch
            self.event = lambda: torch.cuda.Event(enable_timing=True)
        else:
            import cupy
            self.event = cupy.cuda.Event

    def __call__(self, fn: Callable[[], Any], repeat: int, number: int = 20) -> float:
        for _ in range(3):
            fn()
        best = float("inf")
        for _ in range(repeat):
            start, end = self.event(), self.event()
            start.record()
            for _ in range(number):
                fn()
            end.record()
            end.synchronize()
            elapsed = start.elapsed_time(end) if hasattr(start, "elapsed_time") else \
                __import__("cupy").cuda.get_elapsed_time(start, end)
            best = min(best, elapsed / number)
        return best


def torch_chain(x: Any) -> Any:
    import torch
    a = x * 2.0
    b = a + 1.0
    c = b * x
    d = c - 0.5
    e = torch.abs(d)
    f = e * 1.5
    g = f + x
    return torch.clamp_min(g, 0.0)


def device_copy(device: Any, source: Any, target: Any) -> Callable[[], Any]:
    if device.name == "torch":
        return lambda: target.copy_(source)
    import cupy
    return lambda: cupy.copyto(target.array, source.array)


def gpu_bandwidth(sizes: List[int], repeat: int) -> None:
    device = device_arrays()
    timer = EventTimer(device.name)
    print(f"\nGPU: device buffers through {device.name}")
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        for size in sizes:
            graph = arith_chain_graph(size, dtype)
            program = build_program(graph)
            module = toolchain.load_kernel_module(program.module_source)
            x = rng.standard_normal(size).astype(dtype)
            buffers = allocate(program, [x], device)
            launch(program, buffers, module)
            (got,) = collect(program, buffers, device)
            want = np.maximum(np.abs((x * 2.0 + 1.0) * x - 0.5) * 1.5 + x, 0.0)
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12,
                                       atol=1e-6)
            moved = 2 * x.nbytes  # one read of x, one write of the result
            fused_ms = timer(lambda: launch(program, buffers, module), repeat)
            source, target = buffers[program.inputs[0]], buffers[program.outputs[0][0]]
            copy_ms = timer(device_copy(device, source, target), repeat)
            fused_bw, copy_bw = moved / fused_ms / 1e6, moved / copy_ms / 1e6  # GB/s
            line = (f"  arith chain {np.dtype(dtype).name:7s} n={size:>10,d}: fused kernel "
                    f"{fused_ms * 1e3:9.1f} us {fused_bw:8.1f} GB/s = {fused_bw / copy_bw:6.1%} of "
                    f"copy ({copy_bw:7.1f} GB/s)")
            if device.name == "torch":
                eager_ms = timer(lambda: torch_chain(source), repeat)
                line += f"; PyTorch eager {eager_ms * 1e3:9.1f} us ({eager_ms / fused_ms:4.1f}x)"
            print(line)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,16777216,67108864",
                        help="elements of the chain on the GPU, comma-separated")
    parser.add_argument("--repeat", type=int, default=10, help="timed rounds (best is kept)")
    args = parser.parse_args(argv)
    version = toolchain.triton_version()
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, "
          f"Triton {version or 'not installed'}, {platform.machine()}")
    if version is None:
        print("triton not installed: nothing to compile")
        return 0
    compile_only_facts()
    reason = unavailable_reason()
    if reason is not None:
        print(f"\n{reason}: no bandwidth figures on this machine")
        return 0
    gpu_bandwidth([int(s) for s in args.sizes.split(",")], args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
