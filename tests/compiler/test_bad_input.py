"""compile() and explain() reject what they cannot compile with messages naming the problem."""
from __future__ import annotations

import numpy as np
import pytest

import compiler


def plain(x):
    return x + 1


class Thing:
    def method(self, x):
        return x

    def __call__(self, x):
        return x


@pytest.mark.parametrize("obj, words", [
    (len, ["len", "builtin or C function"]),
    (np.add, ["add", "without __code__"]),
    (Thing, ["class Thing"]),
    (Thing(), ["Thing", "without __code__"]),
    (Thing().method, ["bound method", "Thing.method"]),
    (42, ["int"]),
])
def test_non_functions_are_rejected(obj, words):
    with pytest.raises(TypeError) as info:
        compiler.compile(obj)
    for word in words:
        assert word in str(info.value)


def test_unknown_backend_lists_the_accepted_ones():
    with pytest.raises(ValueError) as info:
        compiler.compile(plain, backend="tpu")
    assert "'tpu'" in str(info.value) and "eager" in str(info.value) and "numpy" in str(info.value)


def test_backend_must_be_a_name():
    with pytest.raises(TypeError, match="backend must be a name"):
        compiler.compile(plain, backend=None)


def test_unknown_option_names_the_accepted_ones():
    with pytest.raises(TypeError) as info:
        compiler.compile(plain, mode="max-autotune")
    assert "'mode'" in str(info.value) and "cache_limit" in str(info.value) and "dynamic" in str(info.value)


@pytest.mark.parametrize("value", ["yes", 1, 0, "True"])
def test_bad_dynamic_value(value):
    with pytest.raises(ValueError, match=r"dynamic=.*None .*True .*False"):
        compiler.compile(plain, dynamic=value)


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "8"])
def test_bad_option_value(value):
    with pytest.raises(ValueError, match="cache_limit"):
        compiler.compile(plain, cache_limit=value)


def test_fullgraph_must_be_bool():
    with pytest.raises(TypeError, match="fullgraph"):
        compiler.compile(plain, fullgraph="yes")


def test_decorator_validates_before_decorating():
    with pytest.raises(ValueError):
        compiler.compile(backend="nope")


def test_explain_rejects_non_functions():
    with pytest.raises(TypeError, match="explain"):
        compiler.explain(len, [1])


def test_disable_and_allow_in_graph_reject_non_callables():
    with pytest.raises(TypeError):
        compiler.disable(3)
    with pytest.raises(TypeError):
        compiler.allow_in_graph("np.add")


def test_unknown_log_channel():
    with pytest.raises(ValueError, match="guards"):
        compiler.logs.enable("gards")
