"""Leaving try/finally and with blocks by return, break or continue.

3.8 compiles these to POP_FINALLY / CALL_FINALLY / BEGIN_FINALLY sequences,
3.9-3.10 to inlined finally bodies, 3.11+ to exception-table regions; on every
interpreter each function must trace into one graph and return what the plain
function returns.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import compiler


def return_inside_with(x):
    with contextlib.nullcontext():
        return x + 1


def return_inside_try_finally(x):
    try:
        return x * 2
    finally:
        x = x - 1


def break_inside_with_in_loop(x):
    out = x
    for i in range(4):
        with contextlib.nullcontext():
            if i == 2:
                break
            out = out + i
    return out


def continue_through_finally(x):
    out = x
    for i in range(4):
        try:
            if i % 2:
                continue
            out = out * 2
        finally:
            out = out + 1
    return out


def return_from_nested_withs(x):
    with contextlib.nullcontext():
        with contextlib.nullcontext() as entered:
            return x - 3, entered


def return_inside_finally_in_loop(x):
    for i in range(3):
        try:
            return x + i
        finally:
            pass


def return_through_two_finallys(x):
    try:
        try:
            return x + 1
        finally:
            x = x * 5
    finally:
        x = x - 2


# (function, call nodes of its one graph): + - * / ops applied to arrays
CASES = [
    (return_inside_with, 1),
    (return_inside_try_finally, 2),   # x * 2, then the finally's x - 1
    (break_inside_with_in_loop, 2),   # out + 0, out + 1
    (continue_through_finally, 6),    # i = 0, 2: *2 and +1; i = 1, 3: +1
    (return_from_nested_withs, 1),
    (return_inside_finally_in_loop, 1),
    (return_through_two_finallys, 3),
]


@pytest.mark.parametrize("fn,nodes", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_exit_from_finally_or_with_traces_into_one_graph(fn, nodes):
    compiled = compiler.compile(fn)
    for n in (3, 5):
        x = np.arange(float(n))
        expected = fn(x.copy())
        got = compiled(x.copy())
        assert type(got) is type(expected)
        np.testing.assert_array_equal(np.asarray(got[0] if isinstance(got, tuple) else got),
                                      np.asarray(expected[0] if isinstance(expected, tuple) else expected))
        assert repr(got) == repr(expected)
    event = compiler.events()[-1]
    assert event.fallback_reason is None
    assert (event.graph_count, event.graph_node_count) == (1, nodes)
