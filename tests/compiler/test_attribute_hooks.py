"""Tracing never runs a program object's own attribute hooks: ``isinstance(obj, T)`` reads
``obj.__class__`` through ``type(obj).__getattribute__``, so the compiler asks the type
instead.  An object that records every attribute read (as importlib's lazy modules load on
the first one) sees exactly the reads of the plain function, compiled (CPython's
test_importlib LazyLoaderTests found the load happening at trace time)."""
from __future__ import annotations

import numpy as np
import pytest

import compiler


class Recording:
    """Records each attribute read; ``x`` is its only data."""

    def __init__(self, log):
        object.__setattr__(self, "log", log)
        object.__setattr__(self, "x", 2.0)

    def __getattribute__(self, name):
        object.__getattribute__(self, "log").append(name)
        return object.__getattribute__(self, name)


def _passes_along(obj, a, log):
    log.append("start")
    return obj, a * 2.0


def _reads_after_a_break(obj, a, log):
    log.append("start")
    b = a + 1.0
    print("", end="")  # a graph break with obj live across it
    log.append("after break")
    return b * obj.x


@pytest.mark.parametrize("program", [_passes_along, _reads_after_a_break], ids=lambda p: p.__name__[1:])
def test_an_objects_attribute_hook_runs_only_where_the_plain_function_runs_it(program):
    compiled = compiler.compile(program)
    for _ in range(2):  # the compiling call and a cache hit
        plain_log, compiled_log = [], []
        want = program(Recording(plain_log), np.arange(3.0), plain_log)
        got = compiled(Recording(compiled_log), np.arange(3.0), compiled_log)
        assert compiled_log == plain_log
        np.testing.assert_array_equal(got[1] if isinstance(got, tuple) else got,
                                      want[1] if isinstance(want, tuple) else want)
