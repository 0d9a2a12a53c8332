"""The public API: compile (function and decorator), explain, events, reset,
allow_in_graph, disable, fullgraph, internal-error fallback."""
from __future__ import annotations

import json
import os
import random

import numpy as np
import pytest

import compiler
from compiler.variables.builtins import BuiltinVariable


def f(x):
    y = x + x
    z = y * y
    return z


def draws_random(x):
    drawn = random.random()
    return x + 1 if drawn < 2 else x


def test_compile_returns_a_function_named_like_the_original():
    compiled = compiler.compile(f)
    assert compiled.__name__ == "f" and compiled.__wrapped__ is f
    x = np.arange(5.0)
    np.testing.assert_array_equal(compiled(x), f(x))


def test_decorator_form_with_options():
    @compiler.compile(backend="eager", fullgraph=True)
    def double(x):
        return x * 2

    np.testing.assert_array_equal(double(np.ones(3)), np.full(3, 2.0))
    assert compiler.events()[0].backend == "eager"


def test_numpy_backend_gives_the_same_result():
    compiled = compiler.compile(f, backend="numpy")
    x = np.linspace(0, 1, 7)
    np.testing.assert_allclose(compiled(x), f(x))
    assert compiler.events()[-1].backend == "numpy"


def test_event_fields_and_to_dict():
    compiler.compile(f)(np.ones(3))
    (event,) = compiler.events()
    assert event.compile_id == "0/0"
    assert event.frame_name == "f"
    assert event.graph_count == 1 and event.graph_break_count == 0
    assert event.graph_node_count == 2
    assert event.fallback_reason is None and event.recompile_reason is None
    assert len(event.graph_hashes) == 1 and len(event.graph_hashes[0]) == 16
    assert "operator.add" in event.graph_texts[0]
    assert event.compile_time_s > 0
    as_dict = event.to_dict()
    json.dumps(as_dict)  # plain data
    assert as_dict["ir_count"] == event.ir_count and as_dict["guards"] == event.guards


def test_frames_get_increasing_ids_and_reset_forgets():
    def g(x):
        return x - 1

    compiler.compile(f)(np.ones(2))
    compiler.compile(g)(np.ones(2))
    assert [e.compile_id for e in compiler.events()] == ["0/0", "1/0"]
    compiler.reset()
    assert compiler.events() == []
    compiled = compiler.compile(g)
    compiled(np.ones(2))
    compiled(np.ones(2))
    assert [e.compile_id for e in compiler.events()] == ["0/0"]


def test_explain_reports_graphs_ops_and_guards():
    x = np.ones(4)
    ex = compiler.explain(f, x)
    assert ex.graph_count == 1 and ex.graph_break_count == 0 and ex.break_reasons == []
    assert ex.ops_per_graph == [["operator.add", "operator.mul"]]
    assert str(ex.graphs[0]) == ex.events[0].graph_texts[0]
    assert "L['x'].shape == (4,)" in ex.guards
    np.testing.assert_array_equal(ex.result, f(x))
    text = str(ex)
    assert "Graph Count: 1" in text and "operator.mul" in text


def test_explain_names_the_unsupported_construct_with_file_and_line():
    ex = compiler.explain(draws_random, np.ones(2))
    np.testing.assert_array_equal(ex.result, np.full(2, 2.0))
    # The draw breaks the graph; `x + 1` after it is the continuation's graph.
    assert ex.graph_count == 1 and ex.graph_break_count == 1
    (reason,) = ex.break_reasons
    assert "Random.random" in reason
    line = draws_random.__code__.co_firstlineno + 1
    assert f"{os.path.basename(__file__)}:{line}" in reason


def test_unsupported_call_breaks_the_graph_and_records_why():
    compiled = compiler.compile(draws_random)
    np.testing.assert_array_equal(compiled(np.ones(2)), np.full(2, 2.0))
    frame, continuation = compiler.events()
    assert frame.fallback_reason is None and frame.graph_break_count == 1
    assert "Random.random" in frame.break_reasons[0]
    assert continuation.frame_name.startswith("draws_random.__resume_at_")
    assert continuation.graph_count == 1 and continuation.ir_count > 0
    # The continuation starts with the call's result on its stack and is specialised on it (a
    # float): a new draw is a recompile of the continuation, named by its guard; the
    # function's own entry is reused.
    compiled(np.ones(2))
    events = compiler.events()
    assert [e.frame_name for e in events[2:]] == [continuation.frame_name]
    assert events[2].recompile_reason.startswith("L['___stack0'] == ")


def test_without_graph_breaks_an_unsupported_frame_runs_natively(monkeypatch):
    monkeypatch.setattr(compiler.config, "graph_breaks", False)
    compiled = compiler.compile(draws_random)
    np.testing.assert_array_equal(compiled(np.ones(2)), np.full(2, 2.0))
    (event,) = compiler.events()
    assert "Random.random" in event.fallback_reason and event.graph_count == 0


def test_fullgraph_raises_unsupported_with_location():
    compiled = compiler.compile(draws_random, fullgraph=True)
    with pytest.raises(compiler.Unsupported) as info:
        compiled(np.ones(2))
    assert "Random.random" in str(info.value)
    assert info.value.where.endswith(f":{draws_random.__code__.co_firstlineno + 1}")
    assert str(info.value).endswith(f"{info.value.where})")


def test_internal_error_falls_back_natively(monkeypatch):
    def broken(self, tx, args, kwargs):
        raise RuntimeError("bug in a tracker")

    def uses_len(x):
        return x * len(x)

    monkeypatch.setattr(BuiltinVariable, "call", broken)
    monkeypatch.setattr(compiler.config, "raise_internal_errors", False)
    x = np.ones(3)
    np.testing.assert_array_equal(compiler.compile(uses_len)(x), uses_len(x))
    (event,) = compiler.events()
    assert "internal compiler error: RuntimeError: bug in a tracker" == event.fallback_reason
    assert "Traceback" in event.internal_error


def test_internal_error_raises_in_strict_mode(monkeypatch):
    def broken(self, tx, args, kwargs):
        raise RuntimeError("bug in a tracker")

    def uses_len(x):
        return x * len(x)

    monkeypatch.setattr(BuiltinVariable, "call", broken)
    with pytest.raises(compiler.InternalCompilerError, match="bug in a tracker"):
        compiler.compile(uses_len)(np.ones(3))


def test_wrong_arguments_raise_exactly_like_the_plain_function():
    compiled = compiler.compile(f)
    for args, kwargs in [((), {}), ((1, 2), {}), ((np.ones(2),), {"y": 1})]:
        with pytest.raises(TypeError) as plain:
            f(*args, **kwargs)
        with pytest.raises(TypeError) as ours:
            compiled(*args, **kwargs)
        assert str(ours.value) == str(plain.value)


def test_keyword_defaults_and_varargs_are_bound_like_python():
    def g(x, scale=2.0, *rest, shift=1.0, **extra):
        return x * scale + shift + sum(rest) + len(extra)

    compiled = compiler.compile(g)
    x = np.arange(3.0)
    for args, kwargs in [((x,), {}), ((x, 3.0), {}), ((x, 3.0, 1, 2), {"shift": 0.5, "a": 1}),
                         ((), {"x": x, "scale": 1.0})]:
        np.testing.assert_array_equal(compiled(*args, **kwargs), g(*args, **kwargs))


def test_disable_makes_callers_break_at_the_call():
    def helper(x):
        return x + 1

    def caller(x):
        return helper(x) * 2

    compiler.disable(helper)
    out = compiler.compile(caller)(np.ones(2))
    np.testing.assert_array_equal(out, caller(np.ones(2)))
    frame = compiler.events()[0]
    assert frame.fallback_reason is None and "disabled" in frame.break_reasons[0]
    # helper ran natively: no frame of its own
    assert not any(e.frame_name.endswith("helper") for e in compiler.events())


def test_allow_in_graph_puts_a_user_function_in_the_graph():
    def opaque(a):
        return np.sort(a)[::-1].copy()

    compiler.allow_in_graph(opaque)

    def uses(x):
        return opaque(x) + 1

    x = np.array([3.0, 1.0, 2.0])
    ex = compiler.explain(uses, x)
    np.testing.assert_array_equal(ex.result, uses(x))
    assert len(ex.ops_per_graph[0]) == 2 and ex.ops_per_graph[0][0].endswith("opaque")


def test_returned_inputs_keep_their_identity_and_inputs_are_not_mutated():
    def passthrough(x, xs):
        return x, xs, x + 1

    compiled = compiler.compile(passthrough)
    x = np.ones(2)
    xs = [1, 2]
    a, b, c = compiled(x, xs)
    assert a is x and b is xs
    np.testing.assert_array_equal(c, x + 1)
    np.testing.assert_array_equal(x, np.ones(2))


def test_hit_path_wrapper_binds_like_the_plain_function():
    def two(x, y, /, z):
        return x + y * z

    compiled = compiler.compile(two)
    a = np.ones(2)
    np.testing.assert_array_equal(compiled(a, a, z=2.0), two(a, a, z=2.0))
    np.testing.assert_array_equal(compiled(a, a, 2.0), two(a, a, 2.0))
    for args, kwargs in [((a,), {}), ((a, a, 1, 2), {}), ((a,), {"y": a, "z": 1}), ((a, a, 1), {"z": 1})]:
        with pytest.raises(TypeError) as plain:
            two(*args, **kwargs)
        with pytest.raises(TypeError) as ours:
            compiled(*args, **kwargs)
        assert str(ours.value) == str(plain.value)
    assert compiled.__name__ == "two" and compiled.__qualname__ == two.__qualname__


def test_defaults_are_bound_on_the_hit_path_and_follow_later_changes():
    def scaled(x, k=2.0):
        return x * k

    compiled = compiler.compile(scaled)
    x = np.ones(2)
    np.testing.assert_array_equal(compiled(x), x * 2.0)
    np.testing.assert_array_equal(compiled(x, 3.0), x * 3.0)
    scaled.__defaults__ = (5.0,)
    np.testing.assert_array_equal(compiled(x), x * 5.0)


def _double_then_square(x):
    y = x + x
    return y * y


def test_explain_of_a_compiled_function_traces_the_original():
    x = np.arange(4.0)
    plain = compiler.explain(_double_then_square, x)
    compiler.reset()
    via_compiled = compiler.explain(compiler.compile(_double_then_square), x)
    assert via_compiled.graph_count == 1 and via_compiled.graph_break_count == 0
    assert [str(g) for g in via_compiled.graphs] == [str(g) for g in plain.graphs]


def test_compiling_a_compiled_function_does_not_wrap_twice():
    once = compiler.compile(_double_then_square)
    twice = compiler.compile(once, backend="numpy")
    x = np.arange(5.0)
    np.testing.assert_array_equal(twice(x), _double_then_square(x))
    assert [e.frame_name for e in compiler.events()] == ["_double_then_square"]
    assert compiler.events()[0].graph_node_count == 2


def test_a_compiled_callee_is_inlined_into_its_compiled_caller():
    inner = compiler.compile(_double_then_square)

    def outer(x):
        return inner(x) - 1.0

    x = np.arange(3.0)
    np.testing.assert_array_equal(compiler.compile(outer)(x), _double_then_square(x) - 1.0)
    (event,) = compiler.events()  # one frame: inner was inlined, not compiled on its own
    assert event.frame_name.endswith("outer") and event.fallback_reason is None
    assert event.graph_count == 1 and event.graph_node_count == 3


def test_a_functools_wraps_decorated_function_binds_its_own_parameters():
    # functools.wraps sets __wrapped__, and inspect.signature follows it by default:
    # binding must use the wrapper's own (*args, **kwargs), not the wrapped signature.
    import functools

    def traced(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs) + 1.0
        return wrapper

    @traced
    def scale(x, factor=2.0):
        return x * factor

    compiled = compiler.compile(scale)
    x = np.arange(4.0)
    np.testing.assert_array_equal(compiled(x), scale(x))
    np.testing.assert_array_equal(compiled(x, factor=3.0), scale(x, factor=3.0))
    event = compiler.events()[-1]
    assert event.fallback_reason is None and event.graph_node_count == 2


def test_lambdas_compile_and_misuse_raises_like_the_plain_lambda():
    square_plus = lambda x, k=1.0: x * x + k  # noqa: E731
    compiled = compiler.compile(square_plus)
    x = np.arange(3.0)
    np.testing.assert_array_equal(compiled(x), square_plus(x))
    np.testing.assert_array_equal(compiled(x, 2.0), square_plus(x, 2.0))
    with pytest.raises(TypeError) as plain:
        square_plus()
    with pytest.raises(TypeError) as got:
        compiled()
    assert str(got.value) == str(plain.value)


def _make_counter():
    count = 0

    def step(x):
        nonlocal count  # a store into the caller's cell: the frame runs natively
        count += 1
        return x * count
    return step


def test_sibling_closures_sharing_code_never_run_each_others_cells():
    x = np.arange(3.0)
    first = compiler.compile(_make_counter())
    first(x), first(x)
    plain, compiled = _make_counter(), compiler.compile(_make_counter())
    for _ in range(3):
        np.testing.assert_array_equal(compiled(x), plain(x))
    np.testing.assert_array_equal(first(x), x * 3)  # its own count went on from 2
