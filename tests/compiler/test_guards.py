"""Guards and recompiles: every way an input can change produces a new entry whose
recompile reason names the failing guard; the cache limit makes the frame run natively."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import compiler

SCALE = 2.0


def scaled(x):
    return x * SCALE


def affine(x, k):
    return x * k + 1


def _events():
    return compiler.events()


def test_same_inputs_hit_the_cache():
    f = compiler.compile(affine)
    x = np.ones(4)
    for _ in range(3):
        np.testing.assert_array_equal(f(x, 2), affine(x, 2))
    assert len(_events()) == 1
    assert _events()[0].recompile_reason is None


def test_new_dtype_recompiles_with_named_reason():
    f = compiler.compile(affine)
    f(np.ones(4), 2)
    out = f(np.ones(4, dtype=np.float32), 2)
    assert out.dtype == affine(np.ones(4, dtype=np.float32), 2).dtype
    first, second = _events()
    assert second.compile_id == f"{first.compile_id.split('/')[0]}/1"
    assert second.recompile_reason == "L['x'].dtype == float64"


def test_new_shape_recompiles():
    f = compiler.compile(affine)
    f(np.ones(4), 2)
    np.testing.assert_array_equal(f(np.ones((2, 3)), 2), affine(np.ones((2, 3)), 2))
    assert _events()[-1].recompile_reason == "L['x'].shape == (4,)"


def test_new_constant_recompiles():
    f = compiler.compile(affine)
    f(np.ones(4), 2)
    np.testing.assert_array_equal(f(np.ones(4), 3), affine(np.ones(4), 3))
    assert _events()[-1].recompile_reason == "L['k'] == 2"
    # A float with the same value is a different constant type (1 == 1.0 == True).
    f(np.ones(4), 2.0)
    assert _events()[-1].recompile_reason == "type(L['k']) is int"


def test_new_global_value_recompiles():
    global SCALE
    f = compiler.compile(scaled)
    x = np.arange(3.0)
    np.testing.assert_array_equal(f(x), x * 2.0)
    SCALE = 5.0
    try:
        np.testing.assert_array_equal(f(x), x * 5.0)
        assert _events()[-1].recompile_reason == "G['SCALE'] == 2.0"
    finally:
        SCALE = 2.0


def test_layout_is_guarded():
    def first_row(x):
        return x[0] + 1

    f = compiler.compile(first_row)
    c = np.arange(6.0).reshape(2, 3)
    fortran = np.asfortranarray(c)
    np.testing.assert_array_equal(f(c), first_row(c))
    np.testing.assert_array_equal(f(fortran), first_row(fortran))
    assert _events()[-1].recompile_reason == "L['x'] is C-contiguous"


def test_guards_listed_in_event():
    f = compiler.compile(affine)
    f(np.ones(4), 2)
    (event,) = _events()
    assert event.guard_count == len(event.guards)
    assert "type(L['x']) is numpy.ndarray" in event.guards
    assert "L['k'] == 2" in event.guards


def repeated(x, k):
    for _ in range(k):  # k decides control flow: specialized on every value
        x = x + 1
    return x


def test_cache_limit_runs_natively_and_says_so_in_the_logs(caplog):
    f = compiler.compile(repeated, cache_limit=2)
    x = np.ones(3)
    f(x, 1)
    f(x, 2)
    # Under the program's own warnings filters: the compiler issues no warning of its own
    # (-W error would make the call raise where the plain one returns).
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.WARNING, "tracematrix"):
        warnings.simplefilter("error")
        out = f(x, 3)
    assert caught == []
    np.testing.assert_array_equal(out, repeated(x, 3))
    [record] = [r for r in caplog.records if r.name == "tracematrix.recompiles"]
    assert record.levelno == logging.WARNING and "cache limit reached" in record.getMessage() \
        and "runs natively from now on" in record.getMessage()
    last = _events()[-1]
    assert "cache limit" in last.fallback_reason and "L['k'] == 2" in last.fallback_reason
    # From now on the frame runs natively without compiling again (and without a word).
    caplog.clear()
    with caplog.at_level(logging.WARNING, "tracematrix"):
        np.testing.assert_array_equal(f(x, 4), repeated(x, 4))
    assert len(_events()) == 3 and not caplog.records


def test_configured_default_cache_limit(monkeypatch, caplog):
    monkeypatch.setattr(compiler.config, "cache_limit", 1)
    f = compiler.compile(affine)
    f(np.ones(2), 1)
    with caplog.at_level(logging.WARNING, "tracematrix"):
        f(np.ones(2), 2)
    assert any("cache limit reached (1 entries" in r.getMessage() for r in caplog.records)


def test_the_cache_limit_writes_nothing_on_the_programs_stderr():
    """In a program that left logging unconfigured (no handler of its own -- pytest installs
    some, hence a process of its own -- and no channel switched on), nothing reaches stderr:
    logging's last-resort handler is not the compiler's to use."""
    program = ("import numpy as np, compiler\n"
               "def f(x, k):\n    return x * k\n"
               "g = compiler.compile(f, cache_limit=1)\n"
               "g(np.ones(3), 1); g(np.ones(3), 2)\n"
               "print(compiler.events()[-1].fallback_reason)\n")
    env = {k: v for k, v in os.environ.items() if k != "TRACEMATRIX_LOGS"}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "cache limit reached" in done.stdout and done.stderr == ""


def test_first_failing_guard_logged_with_marker(caplog):
    f = compiler.compile(affine)
    compiler.logs.enable("recompiles")
    with caplog.at_level("INFO", logger="tracematrix.recompiles"):
        f(np.ones(2), 1)
        f(np.ones(2), 7)
    messages = [r.getMessage() for r in caplog.records if r.name == "tracematrix.recompiles"]
    assert any(m.startswith("[") and "/1]" in m and "L['k'] == 1" in m for m in messages), messages


def test_container_inputs_are_guarded_by_length_and_items():
    def total(xs):
        return sum(xs)

    f = compiler.compile(total)
    a = [np.ones(2), np.ones(2)]
    np.testing.assert_array_equal(f(a), total(a))
    b = a + [np.ones(2)]
    np.testing.assert_array_equal(f(b), total(b))
    assert _events()[-1].recompile_reason == "len(L['xs']) == 2"


def test_closure_cells_are_guarded():
    def make(k):
        def inner(x):
            return x * k
        return inner

    f2 = compiler.compile(make(2))
    f3 = compiler.compile(make(3))
    x = np.ones(2)
    np.testing.assert_array_equal(f2(x), x * 2)
    np.testing.assert_array_equal(f3(x), x * 3)
    assert _events()[-1].recompile_reason == "C['k'] == 2"


def test_failing_guard_names_itself():
    from compiler.guards import GuardSet, Namespace, first_failing
    from compiler.sources import LocalSource
    ns = Namespace()
    guards = GuardSet(ns)
    guards.array_match(LocalSource("x"), np.ones(3), "C")
    params = ["_cl", "L_x"]
    assert first_failing(guards.guards, params, ns, [None, np.ones(3)]) is None
    assert first_failing(guards.guards, params, ns, [None, np.ones(4)]).name == "L['x'].shape == (3,)"
    assert first_failing(guards.guards, params, ns, [None, [1, 2, 3]]).name == \
        "type(L['x']) is numpy.ndarray"


def _plus_one_and_length(n, s):
    return n + 1, len(s)


def test_huge_constant_arguments_are_guarded_without_spelling_them_out():
    """A value guard's description and literal are bounded, not a repr of the whole value: an
    int past 4,300 digits has no repr at all (it raised an internal error, and the frame ran
    natively), and a 10 MB string cost a 10 MB repr per compile (CPython's test_re timing
    test)."""
    n, s = 10 ** 5000, "x" * 10 ** 6
    compiled = compiler.compile(_plus_one_and_length, backend="eager")
    assert compiled(n, s) == _plus_one_and_length(n, s)
    event = compiler.events()[-1]
    assert event.internal_error is None and event.fallback_reason is None
    assert max(len(g) for g in event.guards) < 120
    assert compiled(n + 1, s) == _plus_one_and_length(n + 1, s)  # a new value recompiles
    assert compiled(n, s + "y") == _plus_one_and_length(n, s + "y")
