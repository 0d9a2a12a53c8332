"""Numerics: every lowered corpus graph, run by Triton's interpreter on the
CPU (TRITON_INTERPRET=1, in a subprocess), equals the eager backend within
the documented per-dtype tolerance (exact for integers and bools)."""
from __future__ import annotations

import numpy as np
import pytest

from compiler.backends.triton import TOLERANCES, toolchain
from compiler.backends.triton.codegen import build_program
from compiler.backends.triton.interpret import HostArrays, HostBuffer, run_interpreted
from tests.triton.triton_graphs import LOWERED, eager_outputs

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
    assert len(got) == len(want)
    for value, reference in zip(got, want):
        assert type(value) is type(reference)
        assert np.asarray(value).dtype == np.asarray(reference).dtype
        assert np.shape(value) == np.shape(reference)
        if np.asarray(reference).dtype.kind == "f":
            rtol, atol = TOLERANCES[np.asarray(reference).dtype.name]
            np.testing.assert_allclose(value, reference, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(value, reference)


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
