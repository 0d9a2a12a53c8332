"""Triton backend without Triton: lowering, fusion (kernel counts), fallback,
generated source, and the no-GPU error.  Pure Python, so it runs everywhere."""
from __future__ import annotations

import ast
import itertools
import logging

import numpy as np
import pytest

from compiler.backends.triton import TritonBackend, TritonUnavailable, unavailable_reason
from compiler.backends.triton.codegen import broadcast_offset, build_program
from compiler.backends.triton.lowering import NotLowerable, lower_node, lowering_table
from compiler.backends.triton.program import Program
from compiler.backends.triton.toolchain import count_ttir_ops
from compiler.graph import Graph, TensorMeta
from tests.triton.triton_graphs import CASES, LOWERED, eager_outputs, fn, oper


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_kernel_count(case):
    compiled = TritonBackend().compile(case.build())
    assert compiled.kernel_count == case.kernels
    if case.kernels:
        assert compiled.backend == "triton" and compiled.fallback_reason is None
        assert compiled.fn.program.kernels and len(compiled.fn.program.kernels) == case.kernels


@pytest.mark.parametrize("case", LOWERED, ids=lambda c: c.name)
def test_every_node_computed_once_and_source_parses(case):
    graph = case.build()
    program = build_program(graph)
    computed = [name for kernel in program.kernels for name in kernel.nodes]
    assert sorted(computed) == sorted(n.name for n in graph.call_nodes)
    tree = ast.parse(program.module_source)
    kernels = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert [k.name for k in kernels] == [k.name for k in program.kernels]
    for kernel, spec in zip(kernels, program.kernels):
        assert [d.attr for d in kernel.decorator_list] == ["jit"]
        assert [a.arg for a in kernel.args.args] == [p for p, _ in spec.params] + ["BLOCK"]
        text = ast.get_source_segment(program.module_source, kernel) or ""
        assert "tl.load(" in text and "tl.store(" in text


@pytest.mark.parametrize("case", LOWERED, ids=lambda c: c.name)
def test_program_round_trips_as_plain_data(case):
    program = build_program(case.build())
    again = Program.from_dict(program.to_dict())
    assert again.to_dict() == program.to_dict()
    assert again.module_source == program.module_source


def test_softmax_is_one_row_kernel_reading_x_once():
    graph = next(c for c in CASES if c.name == "softmax").build()
    (kernel,) = build_program(graph).kernels
    assert kernel.kind == "row"
    assert kernel.buffers == ("x", "truediv")  # no intermediate leaves the kernel
    assert kernel.source.count("tl.load(") == 1


def test_reduction_with_prologue_stores_only_the_result():
    graph = next(c for c in CASES if c.name == "sum_axis0").build()
    (kernel,) = build_program(graph).kernels
    assert kernel.kind == "reduce" and kernel.nodes == ("mul", "sum")
    assert kernel.buffers == ("x", "sum") and kernel.grid == 33


def test_intermediate_used_by_two_kernels_is_stored():
    graph = next(c for c in CASES if c.name == "long_row_softmax").build()
    program = build_program(graph)
    assert [k.kind for k in program.kernels] == ["reduce", "reduce", "pointwise"]
    assert "exp" in program.kernels[1].buffers and "exp" in program.kernels[2].buffers


@pytest.mark.parametrize("case", [c for c in CASES if not c.kernels], ids=lambda c: c.name)
def test_unsupported_op_falls_back_per_graph_with_logged_reason(case, caplog):
    graph = case.build()
    with caplog.at_level(logging.INFO, logger="compiler.backends.triton"):
        compiled = TritonBackend().compile(graph)
    assert compiled.backend == "eager" and compiled.kernel_count == 0
    assert case.fallback_op in compiled.fallback_reason
    assert any(case.fallback_op in r.getMessage() and r.name == "compiler.backends.triton"
               for r in caplog.records)
    inputs = case.inputs(graph, np.random.default_rng(1))
    for got, want in zip(compiled(*inputs), eager_outputs(graph, inputs)):
        np.testing.assert_array_equal(got, want)


def test_reasons_name_the_node_and_what_to_change():
    g = Graph()
    x = g.placeholder("x", TensorMeta((4,), np.complex128))
    y = g.call(oper("neg"), (x,), {})
    g.output([y])
    with pytest.raises(NotLowerable, match=r"neg .*complex128"):
        lower_node(y)
    g = Graph()
    x = g.placeholder("x", TensorMeta((4, 5, 6), np.float32))
    s = g.call(fn(np.sum), (x,), {"axis": (0, 2)})
    g.output([s])
    with pytest.raises(NotLowerable, match=r"axes \(0, 2\) are not contiguous"):
        lower_node(s)
    g = Graph()
    x = g.placeholder("x", TensorMeta((4,), np.float32))
    p = g.call(oper("pow"), (x, 1.7), {})
    g.output([p])
    with pytest.raises(NotLowerable, match="exponent 1.7"):
        lower_node(p)


def test_inplace_on_a_value_read_elsewhere_is_not_lowered():
    g = Graph()
    x = g.placeholder("x", TensorMeta((8,), np.float32))
    t = g.call(oper("mul"), (x, 2.0), {})
    i = g.call(oper("iadd"), (t, x), {})
    g.output([i, t])  # t is read after being written in place
    compiled = TritonBackend().compile(g)
    assert compiled.backend == "eager" and "iadd" in compiled.fallback_reason


def test_lowering_table_targets_exist_in_the_allowlist():
    from compiler import ops
    names = {op.name for op in ops.all_ops()}
    missing = sorted(t for t in lowering_table() if t not in names)
    assert not missing, f"lowering names targets the allowlist does not have: {missing}"


SHAPE_PAIRS = [((4, 5), (4, 5)), ((4, 5), (5,)), ((4, 5), (4, 1)), ((2, 3, 4), (3, 1)),
               ((2, 3, 4), (2, 1, 4)), ((2, 3, 4), ()), ((3, 1, 2), (1, 1, 2)), ((6,), (1,))]


@pytest.mark.parametrize("domain,shape", SHAPE_PAIRS)
def test_broadcast_offset_matches_numpy_broadcasting(domain, shape):
    source = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    want = np.broadcast_to(source, domain).reshape(-1)
    expression = broadcast_offset("flat", domain, shape)
    for flat in range(int(np.prod(domain))):
        offset = 0 if expression is None else eval(expression, {"flat": flat})
        assert source.reshape(-1)[offset] == want[flat]


def test_count_ttir_ops_counts_operations_not_locations():
    ttir = """module {
  tt.func public @k(%arg0: !tt.ptr<f32>) attributes {noinline = false} {
    %c256_i32 = arith.constant 256 : i32 loc(#loc1)
    %0 = tt.get_program_id x : i32 loc(#loc2)
    %1 = "tt.reduce"(%0) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %2 = arith.addf %a, %b : f32 loc(#loc3)
      tt.reduce.return %2 : f32 loc(#loc3)
    }) : (tensor<256xf32>) -> f32 loc(#loc3)
    tt.store %arg0, %1 : !tt.ptr<f32> loc(#loc4)
    tt.return loc(#loc5)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("k.py":3:4)
"""
    assert count_ttir_ops(ttir) == {"arith.addf": 1, "arith.constant": 1, "tt.get_program_id": 1,
                                    "tt.reduce": 1, "tt.reduce.return": 1, "tt.return": 1,
                                    "tt.store": 1}


def test_calling_without_a_gpu_raises_a_clear_error():
    reason = unavailable_reason()
    if reason is None:
        pytest.skip("this machine can run Triton kernels (GPU present)")
    graph = LOWERED[0].build()
    compiled = TritonBackend().compile(graph)
    inputs = LOWERED[0].inputs(graph, np.random.default_rng(0))
    with pytest.raises(TritonUnavailable, match=reason.split(" (")[0]) as error:
        compiled(*inputs)
    assert "compile_only" in str(error.value) and "numpy" in str(error.value)
    assert not TritonBackend().available()


def test_kernel_names_and_sources_are_deterministic():
    for case in LOWERED:
        first, second = build_program(case.build()), build_program(case.build())
        assert first.module_source == second.module_source
        assert list(itertools.chain(*[k.buffers for k in first.kernels])) == \
            list(itertools.chain(*[k.buffers for k in second.kernels]))
