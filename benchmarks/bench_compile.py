"""Compile time and cache-hit overhead of compiler.compile, next to torch.compile where importable.

    PYTHONPATH=. python benchmarks/bench_compile.py [--fresh 40] [--calls 20000] [--backend eager]

For ``f(x): y = x + x; z = y * y; return z`` on a 10-element array:

* first-call compile time: the first call of a freshly defined function (a new code object,
  so nothing is cached), minus the plain call's time; median over ``--fresh`` functions
  created in this process;
* per-call overhead on a cache hit: best-of-5 mean time per call of the compiled function
  minus the plain function's.

With torch importable, the same two figures for ``torch.compile(backend="eager")`` on a torch
tensor, side by side.

Guard dispatch: with ``cache_limit=16``, the per-call time of hitting the oldest of 16 cache
entries (integer arrays of 8 dtypes x 1 and 2 dimensions, so no entry pays for a
floating-point error state and the figure is the dispatch itself) against hitting a
function's only entry.  Not a test: timings depend on the machine.  The script runs
against any checkout of the compiler (``PYTHONPATH=<checkout>``), so figures before and
after a change can be taken in one run.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import timeit
import warnings

import numpy as np

SOURCE = """
def f(x):
    y = x + x
    z = y * y
    return z
"""


def fresh_function(index: int):
    scope: dict = {}
    exec(compile(SOURCE, f"<bench fresh {index}>", "exec"), scope)
    return scope["f"]


def per_call_seconds(fn, arg, calls: int) -> float:
    timer = timeit.Timer(lambda: fn(arg))
    return min(timer.repeat(repeat=5, number=calls)) / calls


def bench_ours(fresh: int, calls: int, backend: str) -> dict:
    import compiler
    x = np.arange(10.0)
    plain_call = per_call_seconds(fresh_function(-1), x, calls)
    firsts = []
    for i in range(fresh):
        fn = fresh_function(i)
        compiled = compiler.compile(fn, backend=backend)
        start = time.perf_counter()
        compiled(x)
        firsts.append(time.perf_counter() - start - plain_call)
    plain = fresh_function(-2)
    compiled = compiler.compile(plain, backend=backend)
    compiled(x)
    hit = per_call_seconds(compiled, x, calls)
    base = per_call_seconds(plain, x, calls)
    event = compiler.events()[-1]
    return {"compile_ms": statistics.median(firsts) * 1e3, "plain_us": base * 1e6,
            "compiled_us": hit * 1e6, "overhead_us": (hit - base) * 1e6,
            "ir_count": event.ir_count, "compile_time_s_event_ms": event.compile_time_s * 1e3}


DISPATCH_DTYPES = ("int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64")


def bench_dispatch(calls: int, backend: str) -> dict:
    """Per-call seconds hitting a single entry, and the oldest / newest of 16 entries."""
    import compiler
    values = [np.ones((3,) * ndim, dtype) for dtype in DISPATCH_DTYPES for ndim in (1, 2)]
    single = compiler.compile(fresh_function(-10), backend=backend, cache_limit=16)
    single(values[0])
    many = compiler.compile(fresh_function(-11), backend=backend, cache_limit=16)
    for value in values:
        many(value)
    plain = fresh_function(-12)
    best = {"plain_us": per_call_seconds(plain, values[0], calls),
            "one_entry_us": per_call_seconds(single, values[0], calls),
            "oldest_of_16_us": per_call_seconds(many, values[0], calls),
            "newest_of_16_us": per_call_seconds(many, values[-1], calls)}
    figures = {name: seconds * 1e6 for name, seconds in best.items()}
    figures["oldest_vs_one"] = figures["oldest_of_16_us"] / figures["one_entry_us"]
    return figures


def bench_torch(fresh: int, calls: int):
    try:
        import torch
    except ImportError:
        return None
    x = torch.arange(10.0)
    firsts = []
    for i in range(fresh):
        torch._dynamo.reset()
        fn = torch.compile(fresh_function(1000 + i), backend="eager")
        start = time.perf_counter()
        fn(x)
        firsts.append(time.perf_counter() - start)
    plain = fresh_function(-3)
    compiled = torch.compile(plain, backend="eager")
    compiled(x)
    hit = per_call_seconds(compiled, x, calls)
    base = per_call_seconds(plain, x, calls)
    return {"version": torch.__version__, "compile_ms": statistics.median(firsts) * 1e3,
            "plain_us": base * 1e6, "compiled_us": hit * 1e6, "overhead_us": (hit - base) * 1e6}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", type=int, default=40, help="fresh functions for the compile-time median")
    parser.add_argument("--calls", type=int, default=20000, help="calls per timing repeat")
    parser.add_argument("--backend", default="eager")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    ours = bench_ours(args.fresh, args.calls, args.backend)
    print(f"Python {sys.version.split()[0]}, NumPy {np.__version__}; f on a 10-element float64 array")
    print(f"{'':32}{'first-call compile':>20}{'plain call':>13}{'compiled hit':>15}{'overhead':>12}")
    print(f"{'tracematrix (' + args.backend + ')':32}{ours['compile_ms']:>17.3f} ms"
          f"{ours['plain_us']:>10.2f} us{ours['compiled_us']:>12.2f} us{ours['overhead_us']:>9.2f} us")
    torch_result = bench_torch(max(3, args.fresh // 8), args.calls // 4)
    if torch_result is None:
        print("torch.compile(backend='eager')  torch is not importable in this interpreter")
    else:
        print(f"{'torch ' + torch_result['version'] + ' (eager)':32}{torch_result['compile_ms']:>17.3f} ms"
              f"{torch_result['plain_us']:>10.2f} us{torch_result['compiled_us']:>12.2f} us"
              f"{torch_result['overhead_us']:>9.2f} us")
        print(f"compile speed-up: {torch_result['compile_ms'] / ours['compile_ms']:.1f}x; overhead ratio: "
              f"{ours['overhead_us'] / torch_result['overhead_us']:.2f}")
    print(f"(ir_count of f here: {ours['ir_count']})")
    dispatch = bench_dispatch(args.calls, args.backend)
    print(f"guard dispatch, cache_limit=16 (int arrays, 8 dtypes x ndim 1, 2): one entry "
          f"{dispatch['one_entry_us']:.3f} us, oldest of 16 {dispatch['oldest_of_16_us']:.3f} us "
          f"({dispatch['oldest_vs_one']:.2f}x), newest of 16 {dispatch['newest_of_16_us']:.3f} us, "
          f"plain call {dispatch['plain_us']:.3f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
