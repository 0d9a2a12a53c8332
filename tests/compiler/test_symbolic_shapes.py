"""compiler.symbolic_shapes on its own: the guards a trace records make every answer it got
from the hints the answer for every size the guards accept."""
from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.guards import GuardSet, Namespace
from compiler.symbolic_shapes import FramePolicy, ShapeEnv, SymInt, concrete

COMPARISONS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


def _env(*hints):
    guards = GuardSet(Namespace())
    env = ShapeEnv(guards)
    symbols = [env.create_symbol(f"L['x{i}'].shape[0]", f"v[{i}]", h) for i, h in enumerate(hints)]
    return guards, symbols


def _holds(guards, values) -> bool:
    return all(eval(g.code, {"v": values}) for g in guards.guards)  # noqa: S307 - our guard text


# An expression over two sizes a, b: the same Python operators run on SymInts and on ints.
_leaves = st.one_of(st.sampled_from(["a", "b"]), st.integers(-6, 9))


def _node(children):
    return st.one_of(
        st.tuples(st.sampled_from(["+", "-", "*"]), children, children),
        st.tuples(st.sampled_from(["//", "%"]), children, st.integers(1, 5)),
        st.tuples(st.just("neg"), children))


_exprs = st.recursive(_leaves, _node, max_leaves=6)
_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod}


def _evaluate(tree, a, b):
    if tree == "a":
        return a
    if tree == "b":
        return b
    if isinstance(tree, int):
        return tree
    if tree[0] == "neg":
        return -_evaluate(tree[1], a, b)
    return _OPS[tree[0]](_evaluate(tree[1], a, b), _evaluate(tree[2], a, b))


@settings(max_examples=400, deadline=None)
@given(left=_exprs, right=_exprs, compare=st.sampled_from(COMPARISONS),
       hints=st.tuples(st.integers(2, 40), st.integers(2, 40)),
       others=st.lists(st.tuples(st.integers(2, 60), st.integers(2, 60)), min_size=1, max_size=30))
def test_an_answer_holds_wherever_the_recorded_guards_do(left, right, compare, hints, others):
    guards, (a, b) = _env(*hints)
    sym_left, sym_right = _evaluate(left, a, b), _evaluate(right, a, b)
    answer = compare(sym_left, sym_right)
    assert answer == compare(_evaluate(left, *hints), _evaluate(right, *hints))
    assert _holds(guards, hints)  # the trace's own sizes pass
    for values in others:
        if _holds(guards, values):
            assert compare(_evaluate(left, *values), _evaluate(right, *values)) == answer, (
                [g.name for g in guards.guards], values)


@settings(max_examples=200, deadline=None)
@given(tree=_exprs, hints=st.tuples(st.integers(2, 40), st.integers(2, 40)))
def test_expression_code_computes_the_value(tree, hints):
    guards, (a, b) = _env(*hints)
    value = _evaluate(tree, a, b)
    if isinstance(value, SymInt):
        from compiler.symbolic_shapes import render
        code = render(value.expr, lambda i: f"v[{i}]")
        for values in (hints, (7, 3), (2, 50)):
            assert eval(code, {"v": values}) == _evaluate(tree, *values)  # noqa: S307
        assert value.hint == _evaluate(tree, *hints)


def test_known_ranges_need_no_guard():
    guards, (a, b) = _env(5, 5)
    assert a != 1 and a != 0 and a > 1 and not a <= 1 and a - 1 >= 1 and a + b > 3
    assert len(guards) == 0
    assert a == b
    assert [g.name for g in guards.guards] == ["s0 == s1"]


def test_relations_read_solved_for_the_symbol():
    guards, (a, _) = _env(4, 9)
    assert a - 1 == 3
    assert 10 > a + 2
    assert [g.name for g in guards.guards] == ["s0 == 4", "s0 < 8"]


def test_leaving_for_an_int_specializes_with_the_reason():
    guards, (a, _) = _env(6, 2)
    assert concrete(a, "range() over a size") == 6
    assert int(a * 2) == 12
    assert list(range(a)) == list(range(6))
    assert a / 4 == 1.5 and a - 0.5 == 5.5
    names = [g.name for g in guards.guards]
    assert names[0] == "s0 == 6 (specialized: range() over a size)"
    assert all("s0 == 6" in name or "2 * s0 == 12" in name for name in names)
    assert hash(a) == hash(6)


def test_other_types_compare_as_an_int_would():
    guards, (a, _) = _env(3, 3)
    assert (a == "3") is False and (a != None) is True  # noqa: E711
    with pytest.raises(TypeError):
        a + "x"
    assert len(guards) == 0


@pytest.mark.parametrize("dynamic, shapes, expected", [
    (None, [(4, 3), (5, 3), (6, 2)], [(False, False), (True, False), (True, True)]),
    (None, [(4, 3), (4, 3, 1), (5, 3, 1)], [(False, False), (False, False, False), (True, False, False)]),
    (None, [(4,), (1,), (7,)], [(False,), (False,), (True,)]),
    (True, [(4, 1, 0, 2)], [(True, False, False, True)]),
    (False, [(4,), (5,)], [(False,), (False,)]),
])
def test_frame_policy_marks_what_changed(dynamic, shapes, expected):
    policy = FramePolicy(dynamic, {})
    assert [policy.dynamic_dims("L['x']", s) for s in shapes] == expected


def test_numpy_integers_are_ints():
    guards, (a, _) = _env(8, 2)
    assert a + np.int64(2) == 10
    assert [g.name for g in guards.guards] == ["s0 == 8"]


def test_same_shape_counts_symbols_a_guard_made_equal_as_one():
    from compiler.symbolic_shapes import same_shape
    guards, (s0, s1, s2) = _env(5, 5, 5)
    assert same_shape((s0, 3), (s0, 3)) and not same_shape((s0,), (s0, 3))
    assert not same_shape((s0,), (s1,)) and not same_shape((s0,), (5,))
    recorded = len(guards.guards)
    assert not same_shape((s1,), (s2,)) and len(guards.guards) == recorded  # asks, records nothing
    assert s1 == s0 and s2 == s1  # the trace compared them: guards s0 == s1, s1 == s2
    assert same_shape((s0,), (s1,)) and same_shape((s2, 3), (s0, 3))
    assert not same_shape((s0 + 1,), (s0,)) and same_shape((s2 + 1,), (s0 + 1,))
    assert _holds(guards, [7, 7, 7]) and not _holds(guards, [7, 7, 8])
