"""On a GPU: the Triton backend's kernels really run and equal the eager backend.

Every lowered corpus graph, the generated reduction and elementwise programs,
and whole functions compiled with ``backend="triton"`` run as kernels on the
device (buffers through PyTorch or CuPy) and are compared with the eager
backend / the plain function within the documented per-dtype tolerance (exact
for integers and bools).  The interpreter tests check the same numerics on the
CPU; these check what only a GPU shows: launch grids, device pointers, the GPU's
own math functions and reduction order, and the host <-> device round trip.

Skipped, with the reason, where kernels cannot run (no Triton, no GPU, no array
library): CI has no GPU, so these run only on a lent device machine
(benchmarks/bench_triton.py --record writes what they gave there).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import compiler
from compiler.backends.triton import ProgramRunner, TritonBackend, unavailable_reason
from compiler.backends.triton.codegen import build_program
from tests.graph.graphs import elementwise_programs
from tests.triton.triton_graphs import (LOWERED, assert_matches_eager, eager_outputs,
                                        lowered_programs, reduction_programs)

REASON = unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"Triton kernels cannot run here: {REASON}")


def run_on_gpu(graph, inputs):
    """The graph's kernels on the device (never the eager path of ErrorStateDispatch)."""
    return ProgramRunner(build_program(graph))(*inputs)


@pytest.mark.parametrize("case", LOWERED, ids=lambda c: c.name)
def test_corpus_graph_runs_on_the_gpu_and_matches_eager(case):
    graph = case.build()
    inputs = case.inputs(graph, np.random.default_rng(7))
    compiled = TritonBackend().compile(graph)
    assert compiled.backend == "triton" and compiled.kernel_count == case.kernels
    with np.errstate(all="ignore"):  # kernels run only where NumPy would report nothing
        got = compiled(*inputs)
        want = eager_outputs(graph, inputs)
    assert_matches_eager(graph, tuple(got), want)
    assert_matches_eager(graph, run_on_gpu(graph, inputs), want)


def test_nan_propagates_through_max_min_and_maximum_on_the_gpu():
    case = next(c for c in LOWERED if c.name == "nan_reductions")
    graph = case.build()
    got = run_on_gpu(graph, case.inputs(graph, np.random.default_rng(3)))
    for value in got:
        assert np.isnan(value).any() and not np.isnan(value).all()


def test_generated_reduction_programs_match_eager_on_the_gpu():
    collected = lowered_programs(reduction_programs(), 80)
    assert len(collected) >= 40
    for graph, inputs, lowered, want in collected:
        assert_matches_eager(graph, ProgramRunner(lowered)(*inputs), want)


def test_generated_elementwise_programs_match_eager_on_the_gpu():
    collected = lowered_programs(elementwise_programs(), 120)
    assert len(collected) >= 30
    for graph, inputs, lowered, want in collected:
        assert_matches_eager(graph, ProgramRunner(lowered)(*inputs), want)


def test_large_chain_covers_every_block_of_the_grid():
    """16M + 3 elements: many program instances and a masked last block."""
    x = np.random.default_rng(11).standard_normal(16 * 1024 * 1024 + 3).astype(np.float32)

    def chain(a):
        return np.maximum(np.abs((a * 2.0 + 1.0) * a - 0.5) * 1.5 + a, 0.0)

    compiled = compiler.compile(chain, backend="triton")
    with np.errstate(all="ignore"):
        got = compiled(x)
    (entry,) = compiler.cache_entries(compiled)
    assert entry.backend == "triton" and entry.kernel_sources
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, chain(x), rtol=1e-5, atol=1e-6)


# --- whole functions compiled with backend="triton" -------------------------------------


def softmax(x):
    shifted = x - x.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=-1, keepdims=True)
    return centered / np.sqrt(var + eps)


def mixed(x, y, n):
    total = 0.0
    for _ in range(n):  # unrolled by the tracer: one graph
        x = np.where(x > y, x - y, y * 0.5)
    total = float(x.sum())  # a graph output used by Python code after the graph
    return x, total


FUNCTIONS = [
    (softmax, lambda rng: (rng.standard_normal((512, 1000)).astype(np.float32),)),
    (layer_norm, lambda rng: (rng.standard_normal((256, 4096)),)),
    (mixed, lambda rng: (rng.standard_normal((300, 70)), rng.standard_normal(70), 3)),
]


@pytest.mark.parametrize("fn,make_inputs", FUNCTIONS, ids=[f.__name__ for f, _ in FUNCTIONS])
@pytest.mark.parametrize("error_state", ["ignore", "default"])
def test_compiled_function_on_the_gpu_equals_the_plain_one(fn, make_inputs, error_state):
    args = make_inputs(np.random.default_rng(5))
    compiled = compiler.compile(fn, backend="triton")
    with np.errstate(all="ignore") if error_state == "ignore" else warnings.catch_warnings():
        want = fn(*args)
        got = compiled(*args)
        got_again = compiled(*args)  # the cached entry, kernels already loaded
    entries = compiler.cache_entries(compiled)
    assert entries and all(e.backend == "triton" for e in entries if e.graphs)
    tolerance = (1e-5, 1e-6) if args[0].dtype == np.float32 else (1e-12, 1e-13)
    for result in (got, got_again):
        pairs = zip(result, want) if isinstance(want, tuple) else [(result, want)]
        for value, reference in pairs:
            assert type(value) is type(reference)
            np.testing.assert_allclose(value, reference, rtol=tolerance[0], atol=tolerance[1])


def test_non_contiguous_inputs_are_read_correctly():
    x = np.random.default_rng(2).standard_normal((300, 200)).astype(np.float32)
    view = x.T  # Fortran order: uploaded as a contiguous copy
    compiled = compiler.compile(softmax, backend="triton")
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(compiled(view), softmax(view), rtol=1e-5, atol=1e-6)


def test_inputs_of_another_shape_are_refused_with_the_reason():
    case = LOWERED[0]
    graph = case.build()
    runner = ProgramRunner(build_program(graph))
    inputs = case.inputs(graph, np.random.default_rng(0))
    wrong = [np.concatenate([inputs[0], inputs[0]])] + list(inputs[1:])
    with pytest.raises(TypeError, match="compile it again for these inputs"):
        runner(*wrong)
