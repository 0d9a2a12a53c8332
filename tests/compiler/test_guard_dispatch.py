"""Cache-entry dispatch (compiler.guard_dispatch): with many entries the hit path looks
entries up by parameter type, dtype and shape, and still picks exactly the entry the
newest-first walk would pick; recompile reasons and ``cache_entries`` are unchanged."""
from __future__ import annotations

import builtins

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
from compiler import guard_dispatch
from compiler.entry_codegen import MISS
from compiler.guards import GuardSet, Namespace, first_failing
from compiler.sources import LocalSource

DTYPES = [np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16, np.float64, np.float32]


def doubled(x):
    return x + x


class Sub(np.ndarray):
    pass


def _values():
    values = [np.ones((2,) * ndim, dtype) for dtype in DTYPES for ndim in (1, 2)]
    values += [np.ones(3), np.ones((3, 1)), 2, 2.5, True, [1, 2], np.ones(2).view(Sub)]
    return values


def _cache(fn):
    return fn._tracematrix_cache


def test_many_entries_each_value_gets_its_own_entry_and_no_recompile():
    f = compiler.compile(doubled, cache_limit=64)
    values = _values()
    for value in values:
        f(value)
    cache = _cache(f)
    assert len(cache.cache_entries) == len(values)
    assert len(cache.hit_entries) == 1  # one dispatcher
    events = len(compiler.events())
    for value in reversed(values):
        got, expected = f(value), doubled(value)
        assert type(got) is type(expected)
        assert getattr(got, "dtype", None) == getattr(expected, "dtype", None)
        np.testing.assert_array_equal(got, expected)
    assert len(compiler.events()) == events  # every call hit its entry


def test_few_entries_are_tried_directly():
    f = compiler.compile(doubled)
    f(np.ones(2))
    f(np.ones(2, np.float32))
    assert _cache(f).hit_entries == _cache(f).entries


def _reasons_of_a_call_sequence():
    compiler.reset()
    f = compiler.compile(doubled, cache_limit=64)
    for value in _values() + [np.ones(5, DTYPES[0]), np.ones((2, 2), DTYPES[3]), 3]:
        f(value)
    cache = _cache(f)
    assert [e.fn for e in cache.cache_entries] == cache.entries
    assert [e.event for e in cache.cache_entries] == list(reversed(compiler.events()))
    return [(e.recompile_reason, list(e.failed_guards), list(e.guards)) for e in compiler.events()]


def test_recompile_reasons_and_entry_order_are_unchanged(monkeypatch):
    with_dispatch = _reasons_of_a_call_sequence()
    monkeypatch.setattr(guard_dispatch, "DISPATCH_FROM", 10 ** 9)
    assert _reasons_of_a_call_sequence() == with_dispatch


def test_weakly_held_types_still_dispatch_and_die():
    f = compiler.compile(doubled, cache_limit=64)
    for dtype in DTYPES[:4]:
        f(np.ones(2, dtype))

    class Local:
        def __add__(self, other):
            return "added"
    assert f(Local()) == "added"
    assert f(Local()) == "added"
    events = len(compiler.events())
    for dtype in DTYPES[:4]:
        f(np.ones(2, dtype))
    assert len(compiler.events()) == events


def test_a_replaced_builtin_type_is_not_called_by_the_dispatcher():
    f = compiler.compile(doubled, cache_limit=64)
    for dtype in DTYPES[:4]:
        f(np.ones(2, dtype))
    original = builtins.type
    calls = []

    def counting_type(*args):
        calls.append(args)
        return original(*args)
    builtins.type = counting_type
    try:
        out = f(np.ones(2, DTYPES[0]))
    finally:
        builtins.type = original
    np.testing.assert_array_equal(out, doubled(np.ones(2, DTYPES[0])))
    dispatcher = _cache(f).hit_entries[0]
    assert dispatcher.__globals__["_type"] is original


# -- the dispatcher against the newest-first walk, on entries made from real guards -------------

class _Entry:
    def __init__(self, index, guards, ns):
        self.params = ["_cl", "L_x", "L_y"]
        self.guards = guards
        self.index = index

        def fn(_cl, L_x, L_y):
            ok = first_failing(guards, self.params, ns, [_cl, L_x, L_y]) is None
            return index if ok else MISS
        self.fn = fn


def _guards_for(x, y, ns):
    guards = GuardSet(ns)
    for name, value in (("x", x), ("y", y)):
        if isinstance(value, np.ndarray):
            guards.array_match(LocalSource(name), value, "C")
        elif name == "x" or isinstance(value, float):  # y sometimes unguarded
            guards.constant_match(LocalSource(name), value)
    return guards.guards


_arrays = st.builds(lambda dtype, ndim: np.zeros((2,) * ndim, dtype),
                    st.sampled_from(DTYPES[:4]), st.integers(1, 3))
_anything = st.one_of(_arrays, st.sampled_from([1, 2, 1.5, None, "s"]))


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(made=st.lists(st.tuples(_anything, _anything), min_size=1, max_size=20),
       calls=st.lists(st.tuples(_anything, _anything), min_size=1, max_size=20))
def test_dispatch_picks_the_newest_accepting_entry(made, calls):
    ns = Namespace()
    entries = [_Entry(i, _guards_for(x, y, ns), ns) for i, (x, y) in enumerate(made)]
    entries.reverse()  # newest first
    path = guard_dispatch.hit_path(entries)
    for x, y in list(made) + list(calls):
        expected = next((e.index for e in entries if e.fn(None, x, y) is not MISS), MISS)
        got = MISS
        for fn in path:
            got = fn(None, x, y)
            if got is not MISS:
                break
        assert got == expected if expected is not MISS else got is MISS


@pytest.mark.parametrize("limit", [16])
def test_oldest_of_sixteen_is_found_without_recompiling(limit):
    f = compiler.compile(doubled, cache_limit=limit)
    values = [np.ones((2,) * ndim, dtype) for dtype in DTYPES for ndim in (1, 2)]
    for value in values:
        f(value)
    events = len(compiler.events())
    np.testing.assert_array_equal(f(values[0]), doubled(values[0]))
    assert len(compiler.events()) == events
