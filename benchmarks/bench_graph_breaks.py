"""Per-call cost of a graph break on a cache hit, against the plain function.

    PYTHONPATH=. python benchmarks/bench_graph_breaks.py [--calls 20000] [--backend eager]

Two functions on a 10-element array, each compiled with one break: an unknown call
between two elementwise chains (entry -> graph -> stub -> continuation -> graph), and a
data-dependent ``if`` (one continuation per side).  Reports best-of-5 mean time per call,
plain and compiled, and the difference.  Not a test: timings depend on the machine.
"""
from __future__ import annotations

import argparse
import timeit

import numpy as np

import compiler


@compiler.disable
def opaque(v):
    return v


def call_break(x):
    y = x * 2.0 + 1.0
    opaque(0)
    return y * y - 3.0


def branch_break(x):
    y = x * 2.0 + 1.0
    if y.sum() > 0:
        return y * 3.0
    return y


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--backend", default="eager")
    args = parser.parse_args()
    x = np.arange(10.0)
    for fn in (call_break, branch_break):
        compiled = compiler.compile(fn, backend=args.backend)
        compiled(x)
        breaks = sum(e.graph_break_count for e in compiler.events())
        plain = min(timeit.repeat(lambda: fn(x), number=args.calls, repeat=5)) / args.calls * 1e6
        fast = min(timeit.repeat(lambda: compiled(x), number=args.calls, repeat=5)) / args.calls * 1e6
        print(f"{fn.__name__:13s} plain {plain:6.2f} us  compiled ({breaks} break) {fast:6.2f} us  "
              f"overhead {fast - plain:6.2f} us")
        compiler.reset()


if __name__ == "__main__":
    main()
