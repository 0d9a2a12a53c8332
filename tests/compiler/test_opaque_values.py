"""Values the tracer does not model, and with blocks whose __exit__ it does not model: the frame
stays compiled around them (they are passed along as themselves; using one is a graph break)
instead of running natively from its start."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import compiler

BACKENDS = ["eager", "numpy"]


def _takes_a_code_object(code, x):
    y = x * 2.0
    name = code.co_name  # a use: a graph break, natively
    return y + 1.0, name


def _takes_a_generator(gen, x):
    y = x + 1.0
    first = next(gen)
    return y * first, gen


def _code_on_the_stack(x):
    def inner(v, scale=len(str(x))):  # str(x) of an array: a break while MAKE_FUNCTION's operands wait
        return v * scale
    return inner(x * 2.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_builtin_values_it_does_not_model_are_passed_along(backend):
    x = np.arange(3.0)
    compiled = compiler.compile(_takes_a_code_object, backend=backend)
    for code in (_takes_a_generator.__code__, _code_on_the_stack.__code__):
        got, want = compiled(code, x), _takes_a_code_object(code, x)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1]
    compiled = compiler.compile(_takes_a_generator, backend=backend)
    gen = (i for i in range(5, 9))
    got, gen_back = compiled(gen, x)
    np.testing.assert_array_equal(got, (x + 1.0) * 5)
    assert gen_back is gen and next(gen) == 6
    compiled = compiler.compile(_code_on_the_stack, backend=backend)
    np.testing.assert_array_equal(compiled(x), _code_on_the_stack(x))
    events = compiler.events()
    assert all(e.fallback_reason is None for e in events), [e.fallback_reason for e in events]
    assert any(e.graph_count for e in events if e.frame_name.startswith("_takes_a_code_object"))


def _raises_inside_pytest_raises(x, log):
    y = x * 2.0
    with pytest.raises(ZeroDivisionError, match="division"):
        log.append("inside")
        1 / 0
    log.append("after")
    with pytest.raises(TypeError):
        len(5)
    return y + 1.0


def _suppressed_by_a_native_context_manager(x, log):
    y = x * 3.0
    with contextlib.ExitStack() as stack:
        stack.callback(log.append, "closed")
        with contextlib.suppress(KeyError):
            {}["missing"]
        log.append("after suppress")
    return y


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("program", [_raises_inside_pytest_raises, _suppressed_by_a_native_context_manager],
                         ids=lambda p: p.__name__[1:])
def test_an_exception_inside_a_natively_entered_with_block(program, backend):
    compiled = compiler.compile(program, backend=backend)
    for n in (3, 3, 4):
        plain_log, compiled_log = [], []
        np.testing.assert_array_equal(compiled(np.arange(float(n)), compiled_log),
                                      program(np.arange(float(n)), plain_log))
        assert compiled_log == plain_log
    root = [e for e in compiler.events() if e.frame_name == program.__name__]
    assert root and all(e.fallback_reason is None for e in root), [e.fallback_reason for e in root]
    assert any(e.graph_count for e in root)
