"""Backends against plain NumPy, numexpr and numba, on one thread, side by side in one run.

    PYTHONPATH=. python benchmarks/bench_backends.py [--repeat 7] [--json OUT] [--quick] [--no-numba]
                                                     [--cpu-time] [--sizes 1e5,1e6,1e7]

Part 1, the CPU roofline: two chains over two float64 inputs, ``a*1.5 + b*b -
0.5*a*b + 2`` (memory-bound) and ``sin(a) * exp(b * 0.5) + a`` (compute-bound), at
1e5, 1e6 and 1e7 elements, run by plain NumPy (one expression), numexpr
(``set_num_threads(1)``), a hand-written numba loop, and our backends on the same
captured graph: eager, numpy (with its numba loops where numba is installed) and
numpy with blocked NumPy only, and the whole compiled function (numpy backend: guards
and error state included; one function called at every size, so that from the second
size on it runs the entry automatic dynamic shapes compiled for any size).  Each is given as a ratio to plain NumPy and as
achieved GB/s (the bytes the chain must move: each input read once, the result
written once), from the best round (the median round is printed too, for the
spread), next to the machine's copy bandwidth (np.copyto of 1e7 float64,
read + write).  numexpr or numba missing: their columns say so.  Each row also
gives our numpy backend and compiled function against the faster of numexpr and
the numba loop: from the best rounds, and as the median of per-round ratios (the
rounds are interleaved, so one round's figures met the same load of a shared machine).  ``--no-numba`` (or ``TRACEMATRIX_NO_NUMBA=1``) sets
``compiler.config.use_numba = False``: our backend and the compiled function then
run the pure-NumPy path, as where numba is not installed (the hand-written numba
loop stays as a contender where numba is importable).  ``--json`` writes these
figures (for the matrix history).  ``--cpu-time`` times with the process's CPU time
(``time.process_time``, every thread) instead of wall time: on a machine shared with
other work, the time the benchmark waits descheduled is left out (caches and memory
bandwidth are still shared).

Part 2, the numpy backend's own workloads:

Workloads: two 8-op elementwise chains (arithmetic only, memory-bound; and
one with np.sin, compute-bound) on 1M float64 and float32 elements, a
softmax and a layer norm on 1024x1024 float64.  For each: the plain function,
the eager backend and the numpy backend on the same captured graph (built
here with the graph API, so the tracer is not part of the measurement).
Times are the best of ``--repeat`` rounds, rounds interleaved so machine noise
hits every contender alike.  The chain's plain figure is given twice: with
named temporaries (what the tracer captures) and as one expression (where
NumPy's own temporary elision helps the plain code).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy loads its BLAS

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402
from typing import Any, Callable, Dict, List, Optional, Tuple  # noqa: E402

import numpy as np  # noqa: E402

import compiler  # noqa: E402
import compiler.ops as ops  # noqa: E402
from compiler.backends import get_backend  # noqa: E402
from compiler.backends.numpy_codegen import NumpyBackend  # noqa: E402
from compiler.entry_codegen import strict_errstate  # noqa: E402
from compiler.graph import Graph, Node, TensorMeta  # noqa: E402


def arith_chain_plain(x):
    a = x * 2.0
    b = a + 1.0
    c = b * x
    d = c - 0.5
    e = np.abs(d)
    f = e * 1.5
    g = f + x
    return np.maximum(g, 0.0)


def arith_chain_one_expression(x):
    return np.maximum(np.abs((x * 2.0 + 1.0) * x - 0.5) * 1.5 + x, 0.0)


def chain_plain(x):
    a = x * 2.0
    b = a + 1.0
    c = np.sin(b)
    d = c * c
    e = d - 0.5
    f = np.abs(e)
    g = f * x
    return g + 1.0


def chain_one_expression(x):
    t = np.sin(x * 2.0 + 1.0)
    return np.abs(t * t - 0.5) * x + 1.0


def softmax_plain(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm_plain(x, w, b):
    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    var = (d * d).mean(axis=-1, keepdims=True)
    return d / np.sqrt(var + 1e-5) * w + b


class _Builder:
    """Just enough of a tracer to write the graphs above by hand."""

    def __init__(self) -> None:
        self.graph = Graph()

    def input(self, name: str, shape: Tuple[int, ...], dtype) -> Node:
        return self.graph.placeholder(name, TensorMeta(shape, dtype))

    def op(self, name: str, *args, **kwargs) -> Node:
        return self.graph.call(ops.lookup_operator(name), args, kwargs)

    def fn(self, fn, *args, **kwargs) -> Node:
        return self.graph.call(ops.lookup_function(fn), args, kwargs)

    def method(self, name: str, *args, **kwargs) -> Node:
        return self.graph.call(ops.lookup_method(name), args, kwargs)

    def done(self, *outputs: Node) -> Graph:
        self.graph.output(outputs)
        return self.graph


def arith_chain_graph(size: int, dtype) -> Graph:
    b = _Builder()
    x = b.input("x", (size,), dtype)
    e = b.fn(np.abs, b.op("sub", b.op("mul", b.op("add", b.op("mul", x, 2.0), 1.0), x), 0.5))
    return b.done(b.fn(np.maximum, b.op("add", b.op("mul", e, 1.5), x), 0.0))


def chain_graph(size: int, dtype) -> Graph:
    b = _Builder()
    x = b.input("x", (size,), dtype)
    c = b.fn(np.sin, b.op("add", b.op("mul", x, 2.0), 1.0))
    f = b.fn(np.abs, b.op("sub", b.op("mul", c, c), 0.5))
    return b.done(b.op("add", b.op("mul", f, x), 1.0))


def softmax_graph(shape: Tuple[int, int]) -> Graph:
    b = _Builder()
    x = b.input("x", shape, np.float64)
    e = b.fn(np.exp, b.op("sub", x, b.method("max", x, axis=-1, keepdims=True)))
    return b.done(b.op("truediv", e, b.method("sum", e, axis=-1, keepdims=True)))


def layer_norm_graph(shape: Tuple[int, int]) -> Graph:
    b = _Builder()
    x = b.input("x", shape, np.float64)
    w = b.input("w", shape[-1:], np.float64)
    bias = b.input("b", shape[-1:], np.float64)
    d = b.op("sub", x, b.method("mean", x, axis=-1, keepdims=True))
    var = b.method("mean", b.op("mul", d, d), axis=-1, keepdims=True)
    y = b.op("truediv", d, b.fn(np.sqrt, b.op("add", var, 1e-5)))
    return b.done(b.op("add", b.op("mul", y, w), bias))


# The clock of every timing: wall time, or with --cpu-time this process's CPU time.
_TIMER = [time.perf_counter]


def best_times(contenders: Dict[str, Callable[[], object]], repeat: int,
               number: int = 5, rounds: Optional[Dict[str, List[float]]] = None) -> Dict[str, float]:
    """Best seconds per call of each contender, rounds interleaved (every round's figure
    appended to ``rounds[name]`` where given, for the spread)."""
    best = {name: float("inf") for name in contenders}
    for fn in contenders.values():
        fn()  # warm up (page in, caches, numba's compile)
    for _ in range(repeat):
        for name, fn in contenders.items():
            seconds = timeit.timeit(fn, number=number, timer=_TIMER[0]) / number
            best[name] = min(best[name], seconds)
            if rounds is not None:
                rounds.setdefault(name, []).append(seconds)
    return best


# -- part 1: the roofline chains -------------------------------------------------------------

def memory_chain_plain(a, b):
    return a * 1.5 + b * b - 0.5 * a * b + 2


def compute_chain_plain(a, b):
    return np.sin(a) * np.exp(b * 0.5) + a


CHAINS = {
    # name: (plain function, numexpr expression, graph builder)
    "memory-bound a*1.5 + b*b - 0.5*a*b + 2": (memory_chain_plain, "a*1.5 + b*b - 0.5*a*b + 2",
                                               "memory"),
    "compute-bound sin(a) * exp(b*0.5) + a": (compute_chain_plain, "sin(a) * exp(b*0.5) + a",
                                              "compute"),
}


def chain_graph_of(kind: str, size: int) -> Graph:
    g = _Builder()
    a = g.input("a", (size,), np.float64)
    b = g.input("b", (size,), np.float64)
    if kind == "memory":
        left = g.op("add", g.op("mul", a, 1.5), g.op("mul", b, b))
        out = g.op("add", g.op("sub", left, g.op("mul", g.op("mul", a, 0.5), b)), 2)
    else:
        out = g.op("add", g.op("mul", g.fn(np.sin, a), g.fn(np.exp, g.op("mul", b, 0.5))), a)
    return g.done(out)


def numba_loops() -> Optional[Dict[str, Callable]]:
    """The hand-written numba loop of each chain (one thread, compiled before timing)."""
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(error_model="numpy")
    def memory(a, b, out):
        for i in range(a.size):
            out[i] = a[i] * 1.5 + b[i] * b[i] - 0.5 * a[i] * b[i] + 2
        return out

    @numba.njit(error_model="numpy")
    def compute(a, b, out):
        for i in range(a.size):
            out[i] = np.sin(a[i]) * np.exp(b[i] * 0.5) + a[i]
        return out

    return {"memory": memory, "compute": compute}


def numexpr_module() -> Any:
    try:
        import numexpr
    except ImportError:
        return None
    numexpr.set_num_threads(1)
    return numexpr


def copy_bandwidth(repeat: int) -> float:
    """GB/s of np.copyto on 1e7 float64 (80 MB read + 80 MB written), best of ``repeat``."""
    src = np.random.default_rng(1).standard_normal(10_000_000)
    dst = np.empty_like(src)
    seconds = min(timeit.repeat(lambda: np.copyto(dst, src), number=3, repeat=repeat,
                                timer=_TIMER[0])) / 3
    return 2 * src.nbytes / seconds / 1e9


def roofline(repeat: int, sizes: List[int]) -> Dict[str, Any]:
    ne = numexpr_module()
    loops = numba_loops()
    bandwidth = copy_bandwidth(repeat)
    print(f"copy bandwidth (np.copyto, 1e7 float64, read + write): {bandwidth:.1f} GB/s")
    print(f"numexpr {getattr(ne, '__version__', 'not installed')}, numba "
          f"{_version('numba') if loops else 'not installed'}")
    backends = {"eager backend": get_backend("eager"), "numpy backend": get_backend("numpy"),
                "numpy backend, blocked NumPy only": NumpyBackend(use_numba=False)}
    figures: Dict[str, Any] = {"copy_bandwidth_gbs": bandwidth, "numexpr": getattr(ne, "__version__", None),
                               "numba": _version("numba") if loops else None, "chains": []}
    rng = np.random.default_rng(0)
    for title, (plain, expression, kind) in CHAINS.items():
        for size in sizes:
            a, b = rng.random(size), rng.random(size)
            graph = chain_graph_of(kind, size)
            contenders: Dict[str, Callable[[], object]] = {"plain NumPy": lambda: plain(a, b)}
            if ne is not None:
                contenders["numexpr"] = lambda: ne.evaluate(expression, local_dict={"a": a, "b": b})
            if loops is not None:
                loop = loops[kind]
                contenders["numba loop"] = lambda: loop(a, b, np.empty_like(a))
            for name, backend in backends.items():
                compiled = backend.compile(graph)
                contenders[name] = lambda compiled=compiled: compiled(a, b)[0]
            function = compiler.compile(plain, backend="numpy")
            contenders["compiled function (numpy backend)"] = lambda: function(a, b)
            expected = plain(a, b)
            # The graphs run under the error state a compiled function runs them under, from
            # NumPy's default (compiler.entry_codegen.strict_errstate); plain NumPy, numexpr and
            # numba run at the same speed under any state.
            with strict_errstate():
                for name, fn in contenders.items():
                    np.testing.assert_allclose(fn(), expected, rtol=1e-12, err_msg=name)
                # Enough calls per round that the allocator settles after the contender before
                # (a fresh 8 MB result faults its pages in when the heap was just trimmed).  The
                # eager backend runs in rounds of its own: after its seven whole-array
                # temporaries per call, whichever contender followed it in a round was 20%
                # slower for the whole round at 1e6 (measured with every order of contenders).
                apart = {"eager backend": contenders.pop("eager backend")}
                rounds: Dict[str, List[float]] = {}
                number = max(3, 20_000_000 // size)
                times = best_times(contenders, repeat, number=number, rounds=rounds)
                times.update(best_times(apart, repeat, number=number, rounds=rounds))
            moved = 3 * a.nbytes  # a and b read, the result written
            print(f"\n{title}, {size:.0e} float64 elements")
            row = {"chain": kind, "size": size, "bytes": moved, "contenders": {}}
            for name, seconds in times.items():
                speed = times["plain NumPy"] / seconds
                rate = moved / seconds / 1e9
                median = statistics.median(rounds[name])
                print(f"  {name:36s} {seconds * 1e3:9.3f} ms (median {median * 1e3:9.3f})  "
                      f"{speed:5.2f}x plain NumPy  {rate:6.2f} GB/s ({rate / bandwidth:4.0%} of copy)")
                row["contenders"][name] = {"seconds": seconds, "median_seconds": median,
                                           "vs_plain": speed, "gbs": rate}
            others = [n for n in ("numexpr", "numba loop") if n in times]
            if others:
                print("  vs the faster of numexpr / numba loop (best rounds; per-round ratios: "
                      "median, min-max):")
                for name in ("numpy backend", "compiled function (numpy backend)"):
                    best = min(times[n] for n in others) / times[name]
                    # Rounds are interleaved: one round's figures met the same machine load, so
                    # their ratio is steadier than a ratio of two best rounds on a shared machine.
                    paired = sorted(min(rounds[n][i] for n in others) / rounds[name][i]
                                    for i in range(repeat))
                    row["contenders"][name].update(vs_faster_of_numexpr_numba=best,
                                                   vs_faster_per_round=paired)
                    print(f"    {name:34s} {best:.2f}x; {statistics.median(paired):.2f}x "
                          f"({paired[0]:.2f}-{paired[-1]:.2f})")
            figures["chains"].append(row)
    return figures


def _version(name: str) -> Optional[str]:
    try:
        return __import__(name).__version__
    except ImportError:
        return None



def run_case(title: str, graph: Graph, plain: Dict[str, Callable], inputs: List[np.ndarray],
             repeat: int) -> None:
    eager = get_backend("eager").compile(graph)
    numpy_backend = get_backend("numpy").compile(graph)
    reference = next(iter(plain.values()))(*inputs)
    got = numpy_backend(*inputs)[0]
    np.testing.assert_allclose(got, reference, rtol=1e-5 if got.dtype == np.float32 else 1e-12)
    contenders = {name: (lambda fn=fn: fn(*inputs)) for name, fn in plain.items()}
    contenders["eager backend"] = lambda: eager(*inputs)
    contenders["numpy backend"] = lambda: numpy_backend(*inputs)
    times = best_times(contenders, repeat)
    print(f"\n{title}  (numpy backend: {numpy_backend.kernel_count} kernels for "
          f"{len(graph.call_nodes)} ops)")
    fused = times["numpy backend"]
    for name, seconds in times.items():
        ratio = "" if name == "numpy backend" else f"   numpy backend is {seconds / fused:5.2f}x faster"
        print(f"  {name:28s} {seconds * 1e3:8.3f} ms{ratio}")


def _numba_on() -> bool:
    # getattr: the script also runs against checkouts from before the setting (PYTHONPATH),
    # for figures before and after a change in one run.
    return getattr(compiler.config, "use_numba", True)


def main(argv: List[str] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="rounds per contender (best is kept)")
    parser.add_argument("--json", metavar="OUT", help="write the roofline figures to OUT")
    parser.add_argument("--quick", action="store_true", help="the roofline chains only")
    parser.add_argument("--no-numba", action="store_true",
                        help="our backend without its numba loops (compiler.config.use_numba = False)")
    parser.add_argument("--sizes", default="1e5,1e6,1e7",
                        help="elements of the roofline chains, comma-separated (default 1e5,1e6,1e7)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time with this process's CPU time instead of wall time")
    args = parser.parse_args(argv)
    if args.cpu_time:
        _TIMER[0] = time.process_time
    if args.no_numba:
        compiler.config.use_numba = False
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, {platform.machine()}, "
          f"one thread (OMP/OPENBLAS/MKL_NUM_THREADS=1), our numba loops "
          f"{'on' if _numba_on() else 'off'}, {'process CPU time' if args.cpu_time else 'wall time'}")
    figures = roofline(args.repeat, [int(float(size)) for size in args.sizes.split(",")])
    figures.update(python=platform.python_version(), numpy=np.__version__, machine=platform.machine(),
                   node=platform.node(), repeat=args.repeat, use_numba=_numba_on(),
                   clock="process CPU time" if args.cpu_time else "wall time")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(figures, out, indent=2)
    if args.quick:
        return
    print("\n-- the numpy backend's own workloads --")
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        x = rng.standard_normal(1_000_000).astype(dtype)
        run_case(f"8-op arithmetic chain, 1M {np.dtype(dtype).name}",
                 arith_chain_graph(x.size, dtype),
                 {"plain NumPy (named temps)": arith_chain_plain,
                  "plain NumPy (one expression)": arith_chain_one_expression}, [x], args.repeat)
        run_case(f"8-op chain with np.sin, 1M {np.dtype(dtype).name}", chain_graph(x.size, dtype),
                 {"plain NumPy (named temps)": chain_plain,
                  "plain NumPy (one expression)": chain_one_expression}, [x], args.repeat)
    x = rng.standard_normal((1024, 1024))
    run_case("softmax, 1024x1024 float64", softmax_graph(x.shape),
             {"plain NumPy": softmax_plain}, [x], args.repeat)
    w, bias = rng.standard_normal(1024), rng.standard_normal(1024)
    run_case("layer norm, 1024x1024 float64", layer_norm_graph(x.shape),
             {"plain NumPy": layer_norm_plain}, [x, w, bias], args.repeat)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
