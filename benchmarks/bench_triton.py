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

    --record PATH [--junit tests.xml]

writes the device's record (benchmarks/results/triton-<device>.json): the
device, the fused chain's bandwidth as a fraction of the copy bandwidth and its
speedup over PyTorch eager (largest float32 size), every measurement, and the
pass/fail counts of the Triton tests from pytest's JUnit XML, run on the same
machine (``pytest tests/triton --junitxml tests.xml``).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import xml.etree.ElementTree as ElementTree
import platform
import sys
from typing import Any, Callable, Dict, List, Optional

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


def gpu_bandwidth(sizes: List[int], repeat: int) -> List[Dict[str, Any]]:
    """Print and return one measurement per dtype and size."""
    device = device_arrays()
    measurements = []
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
            measurement = {"dtype": np.dtype(dtype).name, "elements": size, "bytes_moved": moved,
                           "fused_us": fused_ms * 1e3, "fused_gb_s": fused_bw,
                           "copy_us": copy_ms * 1e3, "copy_gb_s": copy_bw,
                           "bandwidth_fraction": fused_bw / copy_bw}
            if device.name == "torch":
                eager_ms = timer(lambda: torch_chain(source), repeat)
                line += f"; PyTorch eager {eager_ms * 1e3:9.1f} us ({eager_ms / fused_ms:4.1f}x)"
                measurement.update(torch_eager_us=eager_ms * 1e3,
                                   speedup_vs_torch_eager=eager_ms / fused_ms)
            print(line)
            measurements.append(measurement)
    return measurements


def junit_counts(junit_path: Optional[str]) -> Dict[str, int]:
    """Passed / failed / skipped from pytest's JUnit XML (errors count as failures)."""
    if junit_path is None:
        return {}
    root = ElementTree.parse(junit_path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = {key: sum(int(s.get(key, 0)) for s in suites)
             for key in ("tests", "failures", "errors", "skipped")}
    failed = total["failures"] + total["errors"]
    return {"tests_passed": total["tests"] - failed - total["skipped"],
            "tests_failed": failed, "tests_skipped": total["skipped"]}


def device_record(measurements: List[Dict[str, Any]], junit_path: Optional[str]) -> Dict[str, Any]:
    """The record committed as benchmarks/results/triton-<device>.json.  Headline figures
    come from the largest float32 chain (the steady state, past launch overheads)."""
    device = device_arrays()
    if device is not None and device.name == "torch":
        import torch
        name, library = torch.cuda.get_device_name(), f"torch {torch.__version__}"
    else:
        import cupy
        name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        library = f"cupy {cupy.__version__}"
    float32 = [m for m in measurements if m["dtype"] == "float32"]
    headline = max(float32, key=lambda m: m["elements"])
    record: Dict[str, Any] = {
        "device": name,
        "bandwidth_fraction": round(headline["bandwidth_fraction"], 4),
        "speedup_vs_torch_eager": (round(headline["speedup_vs_torch_eager"], 3)
                                   if "speedup_vs_torch_eager" in headline else None),
        "headline": f"8-op arithmetic chain, float32, {headline['elements']:,d} elements",
    }
    record.update(junit_counts(junit_path))
    record.update(python=platform.python_version(), numpy=np.__version__,
                  triton=toolchain.triton_version(), array_library=library,
                  measurements=measurements)
    return record


def record_file_name(device_name: str) -> str:
    """'NVIDIA H200' -> 'triton-nvidia-h200.json'."""
    return "triton-" + re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-") + ".json"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,16777216,67108864",
                        help="elements of the chain on the GPU, comma-separated")
    parser.add_argument("--repeat", type=int, default=10, help="timed rounds (best is kept)")
    parser.add_argument("--record", metavar="PATH",
                        help="write the device record (JSON) here; a directory gets "
                             "triton-<device>.json inside it")
    parser.add_argument("--junit", metavar="XML",
                        help="pytest's JUnit XML of the Triton tests run on this machine, "
                             "for the record's tests_passed / tests_failed")
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
    measurements = gpu_bandwidth([int(s) for s in args.sizes.split(",")], args.repeat)
    if args.record:
        record = device_record(measurements, args.junit)
        path = args.record
        if os.path.isdir(path):
            path = os.path.join(path, record_file_name(record["device"]))
        with open(path, "w") as out:
            json.dump(record, out, indent=2)
            out.write("\n")
        print(f"\nrecord written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
