"""The cell runner: statuses, crash isolation, backend states, metrics from events."""
from __future__ import annotations

import pytest

from matrix import schema
from matrix.cases import load_suite, select
from matrix.runner import run_cases, run_cell

FAKE = "matrix_fakes:FakeEngine"
SUITE = "matrix_fakes"


def _run(pattern, **kw):
    cases = select(load_suite(SUITE), pattern)
    return run_cases(cases, suite=SUITE, backend="eager", engine_spec=FAKE, jobs=2, **kw)


def test_passing_case_records_the_engine_metrics():
    result = _run("doubles")["doubles"]
    assert result["status"] == "pass"
    assert result["metrics"]["ir_count"] == sum(result["ir_opcodes"].values()) > 0
    assert result["metrics"]["graph_count"] == 1
    assert result["graph_hash"] == result["graph_hashes"][0]
    assert result["guards"] and result["guards"][0].startswith("[0/0] ")


def test_recompiles_are_counted_and_metrics_summed_over_events():
    result = _run("adds_then_multiplies")["adds_then_multiplies"]
    assert result["status"] == "pass"
    assert result["metrics"]["recompile_count"] == 1 == result["expected_recompiles"]
    assert result["recompile_reasons"] == ["x.shape changed"]
    assert len(result["events"]) == 2
    assert result["metrics"]["ir_count"] == sum(e["ir_count"] for e in result["events"])
    assert result["graph_hash"] not in result["graph_hashes"]  # combined hash of two graphs


def test_same_exception_as_plain_is_a_pass_and_a_different_result_a_mismatch():
    results = _run("raises_the_same,wrong_when_compiled")
    assert results["raises_the_same"]["status"] == "pass"
    assert results["wrong_when_compiled"]["status"] == "mismatch"
    assert "array values differ" in results["wrong_when_compiled"]["detail"]


def test_crashes_and_hangs_are_recorded_and_the_cell_goes_on():
    results = _run("crashing/*,doubles", timeout_s=3.0)
    assert results["exits_the_process"]["status"] == "error"
    assert "exit code 7" in results["exits_the_process"]["detail"]
    assert results["segfaults"]["status"] == "error"
    assert "SIGSEGV" in results["segfaults"]["detail"]
    assert results["hangs"]["status"] == "timeout"
    assert results["compile_raises"]["status"] == "error"
    assert "refuses this function" in results["compile_raises"]["detail"]
    assert results["doubles"]["status"] == "pass"
    for result in results.values():
        schema.validate_case("x", result)


def test_results_come_back_in_suite_order():
    cases = select(load_suite(SUITE), "synthetic/*")
    assert list(_run("synthetic/*")) == [c.name for c in cases]


def test_no_gpu_backend_is_a_visible_cell_status_and_still_traces():
    cell = run_cell(backend="triton", suite=SUITE, pattern="doubles", engine_spec=FAKE, jobs=1)
    assert cell["cell_status"] == schema.CELL_NO_GPU
    assert cell["environment"]["cases_ran_on"] == "eager"
    case = cell["cases"]["doubles"]
    assert case["status"] == "pass" and case["metrics"]["ir_count"]
    assert case["metrics"]["kernel_count"] is None  # nothing to say about kernels without a GPU
    schema.validate_cell(cell)


def test_gpu_backend_without_gpu_is_probed_compile_only_for_kernels():
    cell = run_cell(backend="gpu", suite=SUITE, pattern="adds_then_multiplies", engine_spec=FAKE, jobs=1)
    assert cell["cell_status"] == schema.CELL_NO_GPU
    assert cell["environment"]["kernels_probed_on"] == "gpu"
    case = cell["cases"]["adds_then_multiplies"]
    assert case["status"] == "pass"            # results checked on eager
    assert case["metrics"]["kernel_count"] == 6  # 3 kernels per compiled shape, two shapes


def test_unavailable_backend_and_unloadable_engine_do_not_crash_the_cell():
    cell = run_cell(backend="bogus", suite=SUITE, pattern="doubles", engine_spec=FAKE, jobs=1)
    assert cell["cell_status"] == "backend unavailable: bogus is not a backend"
    assert cell["cases"] == {}
    cell = run_cell(backend="eager", suite=SUITE, pattern="doubles", engine_spec="no_such_module:X", jobs=1)
    assert cell["cell_status"].startswith(schema.CELL_ERROR_PREFIX)
    assert cell["cases"]["doubles"]["status"] == "error"
    schema.validate_cell(cell)


def test_cell_records_environment_and_run_id(monkeypatch):
    monkeypatch.setenv("TRACEMATRIX_RUN_ID", "shared-run-42")
    monkeypatch.setenv("TRACEMATRIX_MACHINE", "ci-gpu-7")
    cell = run_cell(backend="eager", suite=SUITE, pattern="doubles", engine_spec=FAKE, jobs=1,
                    coverage=lambda: {"python": "x", "counts": {}})
    assert cell["run_id"] == "shared-run-42"
    assert cell["machine"] == "ci-gpu-7"
    assert cell["coverage"] == {"python": "x", "counts": {}}
    env = cell["environment"]
    import numpy
    assert env["numpy"] == numpy.__version__
    assert cell["python"] == ".".join(env["python_version"].split(".")[:2])
    for key in ("python_implementation", "python_build", "platform", "git_commit", "triton"):
        assert key in env


@pytest.mark.parametrize("pattern, expected", [("doubles", ["doubles"]),
                                               ("synthetic/w*", ["wrong_when_compiled"]),
                                               ("nothing*", [])])
def test_case_selection(pattern, expected):
    assert [c.name for c in select(load_suite(SUITE), pattern)] == expected


def test_spawned_workers_work_too(monkeypatch):
    """Where fork is unavailable (Windows, macOS default) workers are spawned: the worker
    entry point must import everything by name."""
    import multiprocessing

    from matrix import runner
    monkeypatch.setattr(runner, "_context", lambda: multiprocessing.get_context("spawn"))
    results = _run("doubles,exits_the_process", timeout_s=60.0)
    assert results["doubles"]["status"] == "pass"
    assert results["exits_the_process"]["status"] == "error"
