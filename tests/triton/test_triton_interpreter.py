"""Numerics: every lowered corpus graph, run by Triton's interpreter on the
CPU (TRITON_INTERPRET=1, in a subprocess), equals the eager backend within
the documented per-dtype tolerance (exact for integers and bools)."""
from __future__ import annotations

import numpy as np
import pytest

from compiler.backends.triton import toolchain
from compiler.backends.triton.codegen import build_program
from compiler.backends.triton.interpret import HostArrays, HostBuffer, run_interpreted
from tests.graph.graphs import elementwise_programs
from tests.triton.triton_graphs import (LOWERED, assert_matches_eager, eager_outputs,
                                        lowered_programs, reduction_programs)

pytestmark = pytest.mark.skipif(toolchain.triton_version() is None,
                                reason="triton not installable on this interpreter "
                                       "(import triton failed)")


@pytest.fixture(scope="module")
def interpreted():
    jobs, expected = [], []
    for index, case in enumerate(LOWERED):
        graph = case.build()
        inputs = case.inputs(graph, np.random.default_rng(100 + index))
        jobs.append((build_program(graph), inputs))
        expected.append(eager_outputs(graph, inputs))
    return dict(zip([c.name for c in LOWERED], zip(run_interpreted(jobs), expected)))


@pytest.mark.parametrize("case", LOWERED, ids=lambda c: c.name)
def test_interpreter_matches_eager(case, interpreted):
    got, want = interpreted[case.name]
    assert_matches_eager(case.build(), got, want)


def test_nan_propagates_through_max_min_and_maximum(interpreted):
    got, _ = interpreted["nan_reductions"]
    for value in got:  # some NaN, some not: propagation, not a NaN everywhere
        assert np.isnan(value).any() and not np.isnan(value).all()


def test_host_buffer_is_zero_copy():
    array = np.arange(6, dtype=np.float32)
    buffer = HostBuffer(array)
    assert buffer.data_ptr() == array.ctypes.data
    assert buffer.cpu() is buffer and buffer.untyped_storage().data_ptr() == array.ctypes.data
    other = HostArrays().upload(np.ones(6, dtype=np.float32))
    buffer.copy_(other)
    assert (array == 1).all()


@pytest.fixture(scope="module")
def generated():
    collected = lowered_programs(reduction_programs(), 80)
    return collected, run_interpreted([(lowered, inputs) for _, inputs, lowered, _ in collected])


def test_generated_reduction_programs_match_eager(generated):
    collected, outputs = generated
    assert len(collected) >= 40, "too few generated programs lowered to test anything"
    kinds = {kernel.kind for _, _, lowered, _ in collected for kernel in lowered.kernels}
    assert kinds == {"pointwise", "row", "reduce"}
    for (graph, _, _, want), got in zip(collected, outputs):
        assert_matches_eager(graph, got, want)


@pytest.fixture(scope="module")
def generated_elementwise():
    collected = lowered_programs(elementwise_programs(), 120)
    return collected, run_interpreted([(lowered, inputs) for _, inputs, lowered, _ in collected])


def test_generated_elementwise_programs_match_eager(generated_elementwise):
    """The graph layer's own generator (mixed dtypes, broadcasting, Python and
    NumPy scalar constants, where/clip, in-place ops)."""
    collected, outputs = generated_elementwise
    assert len(collected) >= 30, "too few generated programs lowered to test anything"
    for (graph, _, _, want), got in zip(collected, outputs):
        assert_matches_eager(graph, got, want)
