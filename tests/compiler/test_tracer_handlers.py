"""The opcode-handler registry and the per-instruction stack-effect check."""
from __future__ import annotations

import numpy as np
import pytest

import compiler
import compiler.handlers.registry as handlers
import opcode_tables


def test_handlers_are_bound_into_the_running_table():
    table = opcode_tables.current_table()
    registered = set(handlers.registered_opnames())
    bound = set(table.handlers)
    assert bound == registered & set(table.opcodes)
    # The handlers every frame needs are there on every version.
    for opname in ("LOAD_FAST", "STORE_FAST", "RETURN_VALUE", "LOAD_CONST", "LOAD_GLOBAL"):
        assert opname in bound


def test_registering_an_unknown_opname_fails_at_bind_time(monkeypatch):
    registry = dict(handlers._REGISTRY)
    monkeypatch.setattr(handlers, "_REGISTRY", registry)
    handlers.handler("LOAD_FAST_TYPO")(lambda tx, inst: None)
    with pytest.raises(AssertionError, match="LOAD_FAST_TYPO"):
        handlers.bind()


def test_registering_an_opname_twice_fails(monkeypatch):
    monkeypatch.setattr(handlers, "_REGISTRY", dict(handlers._REGISTRY))
    with pytest.raises(AssertionError, match="two handlers"):
        handlers.handler("POP_TOP")(lambda tx, inst: None)


def test_stack_effect_check_catches_a_wrong_handler(monkeypatch):
    table = opcode_tables.current_table()
    monkeypatch.setitem(table.handlers, "POP_TOP", lambda tx, inst: None)  # forgets to pop

    def discards(x):
        x + 1
        return x

    with pytest.raises(compiler.InternalCompilerError, match="POP_TOP"):
        compiler.compile(discards)(np.ones(2))


def test_opcodes_without_handlers_name_themselves(monkeypatch):
    table = opcode_tables.current_table()
    monkeypatch.delitem(table.handlers, "BUILD_SET")

    def makes_set(x):
        s = {1, 2}
        return x * len(s)

    out = compiler.compile(makes_set)(np.ones(2))
    np.testing.assert_array_equal(out, np.full(2, 2.0))
    # The set is built natively at a graph break; the rest of the frame is compiled.
    frame, continuation = compiler.events()
    assert "BUILD_SET" in frame.break_reasons[0] and frame.fallback_reason is None
    assert continuation.graph_count == 1
