"""opcode_tables.moving_loads: handing a local on by moving its reference (from 3.14).

The generated callers of the compiler's stage runner rely on it: a frame that
receives a moved reference frees the value when it rebinds its parameter, as the
plain frame would, where a plain load would leave the giver's reference behind."""
from __future__ import annotations

import weakref

import numpy as np
import pytest

import opcode_tables
from opcode_tables.moving_loads import with_moving_loads

MOVING = opcode_tables.current_table().fact("moving_local_load")


def _hand_on(receive, make, log):
    x = make(log)
    return receive(x), log.append("giver returns")


def _receive_and_drop(y):
    y = None
    return "dropped"


def _make(log):
    value = np.arange(3.0)
    weakref.finalize(value, log.append, "died")
    return value


def _line_of_the_call() -> int:
    return _hand_on.__code__.co_firstlineno + 2


@pytest.mark.skipif(MOVING is None, reason="every load owns a reference here: nothing to move")
def test_a_moved_local_dies_where_the_receiver_lets_it_go():
    moving = with_moving_loads(_hand_on.__code__, ["x"], _line_of_the_call())
    fn = type(_hand_on)(moving, _hand_on.__globals__)
    log: list = []
    assert fn(_receive_and_drop, _make, log) == ("dropped", None)
    assert log == ["died", "giver returns"]
    plain_log: list = []
    _hand_on(_receive_and_drop, _make, plain_log)
    assert plain_log == ["giver returns", "died"]   # the giver's local kept it


@pytest.mark.skipif(MOVING is None, reason="every load owns a reference here: nothing to move")
def test_a_line_that_loads_none_of_the_names_is_refused():
    with pytest.raises(ValueError, match="loads none of"):
        with_moving_loads(_hand_on.__code__, ["x"], _line_of_the_call() - 1)


@pytest.mark.skipif(MOVING is not None, reason="this table can move a reference")
def test_a_table_without_a_moving_load_refuses():
    with pytest.raises(ValueError, match="no moving local load"):
        with_moving_loads(_hand_on.__code__, ["x"], _line_of_the_call())
