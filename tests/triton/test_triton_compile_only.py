"""Generated kernels compile ahead of time for sm_90 with the installed Triton
(3.1 on Python 3.8 ... 3.9 on 3.11+), without a GPU, and the compile-only
report carries the same kernel counts on every release."""
from __future__ import annotations

import numpy as np
import pytest

from compiler.backends.triton import TritonBackend, toolchain
from compiler.backends.triton.codegen import build_program
from tests.triton.triton_graphs import CASES, LOWERED

pytestmark = pytest.mark.skipif(toolchain.triton_version() is None,
                                reason="triton not installable on this interpreter "
                                       "(import triton failed)")


@pytest.fixture(scope="module")
def reports():
    backend = TritonBackend()
    return {case.name: backend.compile_only(case.build()) for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_compile_only_report(case, reports):
    report = reports[case.name]
    assert report.triton_version == toolchain.import_triton().__version__
    assert report.target == "cuda:sm_90"
    assert report.kernel_count == case.kernels == len(report.kernels)
    if not case.kernels:
        assert case.fallback_op in report.fallback_reason
        return
    program = build_program(case.build())
    assert [k.name for k in report.kernels] == [k.name for k in program.kernels]
    for kernel in report.kernels:
        ops = kernel.ttir_ops
        assert kernel.ttir_op_count == sum(ops.values())
        assert ops.get("tt.store", 0) >= 1 and ops.get("tt.get_program_id") == 1
        assert kernel.compile_time_s > 0
        if kernel.kind in ("row", "reduce"):
            assert ops.get("tt.reduce", 0) >= 1
        assert kernel.source.startswith("@triton.jit")
    assert report.to_dict()["kernels"][0]["ttir_ops"] == report.kernels[0].ttir_ops


def test_long_reductions_loop_over_the_reduced_extent(reports):
    report = reports["long_row_softmax"]  # rows of 10000 > BLOCK: a loop per output element
    assert [k.kind for k in report.kernels] == ["reduce", "reduce", "pointwise"]
    for kernel in report.kernels[:2]:
        assert kernel.ttir_ops.get("scf.for") == 1


def test_fused_chain_has_one_load_per_input_and_one_store():
    report = TritonBackend().compile_only(LOWERED[0].build())  # chain8_f32: x, y -> one output
    (kernel,) = report.kernels
    assert kernel.ttir_ops["tt.load"] == 2 and kernel.ttir_ops["tt.store"] == 1


def test_ahead_of_time_compile_gives_every_stage_for_sm_90():
    program = build_program(LOWERED[0].build())
    module = toolchain.load_kernel_module(program.module_source)
    kernel = program.kernels[0]
    ir = toolchain.compile_ahead_of_time(getattr(module, kernel.name), kernel.signature,
                                         {"BLOCK": kernel.block}, num_warps=kernel.num_warps)
    assert "tt.func" in ir.ttir and ("ttg." in ir.ttgir or "triton_gpu" in ir.ttgir)
    assert "define" in ir.llir and "sm_90" in ir.ptx
    assert ir.ttir_ops == toolchain.count_ttir_ops(ir.ttir)


def test_environment_is_set_before_triton_reads_it():
    import os
    toolchain.import_triton()
    assert os.environ.get("TRITON_DEFAULT_FP_FUSION") in ("0", "1")
    cache = os.environ["TRITON_CACHE_DIR"]
    assert not cache.startswith(os.path.expanduser("~/.triton"))


def test_block_sizes_are_powers_of_two():
    for case in LOWERED:
        for kernel in build_program(case.build()).kernels:
            assert kernel.block & (kernel.block - 1) == 0 and kernel.block >= 16
            assert np.int64(kernel.grid) >= 1


def test_generated_programs_compile_ahead_of_time():
    """Triton's interpreter is lenient about types; the real compiler is not:
    generated programs (the graph layer's elementwise generator and this
    package's reduction generator) compile for sm_90 too."""
    from hypothesis import HealthCheck, given, settings

    from compiler.backends.triton.lowering import NotLowerable
    from tests.graph.graphs import elementwise_programs
    from tests.triton.triton_graphs import reduction_programs

    backend, compiled = TritonBackend(), []
    for strategy in (elementwise_programs(), reduction_programs()):
        @settings(max_examples=20, derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(strategy)
        def compile_one(program):
            graph, _ = program
            try:
                build_program(graph)
            except NotLowerable:
                return
            report = backend.compile_only(graph)
            assert report.kernel_count == len(report.kernels)  # 0 when every op is dead
            compiled.extend(report.kernels)

        compile_one()
    assert len(compiled) >= 20
