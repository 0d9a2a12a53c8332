"""Sources: stable names (guards, logs) and expressions (generated entry code)."""
from __future__ import annotations

from compiler.guards import Namespace
from compiler.sources import (AttrSource, BuiltinSource, ClosureSource, GlobalSource, ItemSource,
                              LocalSource, TypeSource, closure_cell_source)


def test_names_are_stable_and_readable():
    x = LocalSource("x")
    assert x.name() == "L['x']"
    assert AttrSource(x, "shape").name() == "L['x'].shape"
    assert ItemSource(GlobalSource("cfg"), "lr").name() == "G['cfg']['lr']"
    assert TypeSource(x).name() == "type(L['x'])"
    assert BuiltinSource("len").name() == "B['len']"
    assert ClosureSource("k", 0).name() == "C['k']"


def test_expressions_read_the_value_in_an_entry_function():
    ns = Namespace()
    x = LocalSource("x")
    assert x.expr(ns.const) == "L_x"
    assert AttrSource(ItemSource(x, 0), "w").expr(ns.const) == "L_x[0].w"
    assert ClosureSource("k", 2).expr(ns.const) == "_cl[2].cell_contents"
    assert closure_cell_source(GlobalSource("f"), 1).expr(ns.const) == \
        "_G['f'].__closure__[1].cell_contents"
    odd_key = ItemSource(x, (1, "a"))
    expr = odd_key.expr(ns.const)
    assert expr.startswith("L_x[_k") and ns.values[expr[4:-1]] == (1, "a")


def test_sources_are_hashable_and_compare_by_value():
    assert AttrSource(LocalSource("x"), "T") == AttrSource(LocalSource("x"), "T")
    assert len({LocalSource("x"), LocalSource("x"), GlobalSource("x")}) == 2
    assert AttrSource(ItemSource(LocalSource("x"), 1), "a").root() == LocalSource("x")
