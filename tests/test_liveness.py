"""live_locals: which locals and cells a continuation at an instruction must receive.

Points are found by scanning the function's instructions for an opname and
argument, so the same assertions hold on every interpreter whatever its
opcodes.  (That passing exactly the live names is enough to resume is checked
by tests/test_resume_code.py, which builds every continuation from them.)
"""
from __future__ import annotations

from typing import Any, FrozenSet, Sequence

import pytest

from opcode_tables.decode import instructions_of
from opcode_tables.liveness import live_locals


def g(x: Any) -> Any:
    return x + 1


def boom(x: Any) -> Any:
    raise ValueError(x)


def _at(fn: Any, opnames: Sequence[str], argval: Any = None, nth: int = 0, after: bool = False) -> FrozenSet[str]:
    """live_locals at the nth instruction named one of ``opnames`` (with ``argval``), or just after it."""
    instructions, _ = instructions_of(fn.__code__)
    hits = [i for i, inst in enumerate(instructions)
            if inst.opname in opnames and (argval is None or inst.argval == argval)]
    return live_locals(fn.__code__, hits[nth] + int(after))


STORE = ("STORE_FAST",)
LOAD = ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW")
DEREF_STORE = ("STORE_DEREF",)


def straight(x, y):
    a = x * 2
    b = g(a)
    c = g(b) - y
    return c * a


def test_straight_line_names_die_after_their_last_read() -> None:
    assert _at(straight, STORE, "a", after=True) == {"a", "y"}     # x is never read again
    assert _at(straight, LOAD, "b") == {"a", "b", "y"}
    assert _at(straight, STORE, "c", after=True) == {"a", "c"}     # y was read for the last time
    assert _at(straight, ("RETURN_VALUE",)) == frozenset()


def test_arguments_are_live_at_the_start() -> None:
    assert live_locals(straight.__code__, 0) == {"x", "y"}


def loop(n):
    total = 0
    i = 0
    unused = 5
    while i < n:
        total = total + i
        i = g(i)
    return total


def test_loop_keeps_names_read_by_later_iterations() -> None:
    inside = _at(loop, STORE, "i", nth=1)          # i = g(i), inside the body
    assert {"total", "n"} <= inside                  # read again by the loop test and the next iteration
    assert "unused" not in inside
    assert _at(loop, STORE, "unused", after=True) == {"i", "n", "total"}


def for_loop(xs, scale):
    out = []
    for x in xs:
        out.append(g(x))
    return [o * scale for o in out]


def test_for_loop_variable_is_dead_where_the_loop_writes_it() -> None:
    instructions, _ = instructions_of(for_loop.__code__)
    head = next(i for i, inst in enumerate(instructions) if inst.opname == "FOR_ITER")
    assert "x" not in live_locals(for_loop.__code__, head)
    assert {"out", "scale"} <= live_locals(for_loop.__code__, head)
    assert "x" in _at(for_loop, STORE, "x", after=True)


def handler_reads(x):
    before = x * 2
    try:
        mid = g(x)
        result = boom(mid)
    except ValueError:
        return before
    return result


def test_a_name_read_only_by_an_exception_handler_is_live_in_the_try_body() -> None:
    assert "before" in _at(handler_reads, STORE, "mid", after=True)
    # after the try statement only the result is needed
    assert _at(handler_reads, LOAD, "result") == {"result"}


def deleting(x):
    a = g(x)
    b = a
    del a
    return b


def test_del_needs_the_name_bound_and_kills_it() -> None:
    assert "a" in _at(deleting, ("DELETE_FAST",), "a")
    assert _at(deleting, ("DELETE_FAST",), "a", after=True) == {"b"}


def cells(x):
    y = g(x)
    get = lambda: y + x  # noqa: E731  (x and y become cells)
    return get() + y


def test_cells_are_live_until_their_last_frame_read() -> None:
    code = cells.__code__
    assert {"x", "y"} <= set(code.co_cellvars)
    after_y = _at(cells, DEREF_STORE, "y", after=True)
    assert {"x", "y"} <= after_y                      # the lambda's closure still has to be built
    assert _at(cells, STORE, "get", after=True) == {"get", "y"}  # x is only reached through the closure now


def make_closure(k):
    def uses_free(x):
        return g(x) * k
    return uses_free


def test_free_variables_are_never_live_locals() -> None:
    fn = make_closure(3)
    assert "k" in fn.__code__.co_freevars
    for i in range(len(instructions_of(fn.__code__)[0])):
        assert "k" not in live_locals(fn.__code__, i)


def frame_reader(x):
    y = g(x)
    z = g(y)
    return locals()


def test_code_reading_its_own_frame_keeps_every_local_live() -> None:
    assert _at(frame_reader, STORE, "z", after=True) == set(frame_reader.__code__.co_varnames)


def comprehension(xs, t):
    r = [t * v for v in xs]
    return r


def test_comprehension_reads_are_live() -> None:
    assert {"xs", "t"} <= live_locals(comprehension.__code__, 0)
    assert _at(comprehension, STORE, "r", after=True) == {"r"}


def test_bad_index_is_refused() -> None:
    with pytest.raises(ValueError, match="outside"):
        live_locals(straight.__code__, 10_000)


class Base:
    def f(self, x: Any) -> Any:
        return x


class Derived(Base):
    def f(self, x):
        y = g(x)
        return super().f(y)


def test_zero_argument_super_keeps_self_live() -> None:
    # self is never loaded after the call of g, but super() reads it from the frame
    assert "self" in _at(Derived.f, STORE, "y", after=True)


def _writes_only_in_its_handler(a, b):
    c = a + 1
    try:
        c = g(c)
    except ValueError:
        b = None
    return b, c


def test_written_from_follows_exception_edges_and_only_what_is_reachable() -> None:
    """What the code run from an instruction may rebind: the handler's store counts from
    inside the try body (an exception edge), the earlier store does not."""
    from opcode_tables.liveness import written_from
    fn = _writes_only_in_its_handler
    instructions, _ = instructions_of(fn.__code__)
    call = next(i for i, inst in enumerate(instructions) if inst.opname in ("LOAD_GLOBAL", "LOAD_NAME")
                and inst.argval == "g")
    assert written_from(fn.__code__, call) >= {"b", "c"}
    assert "a" not in written_from(fn.__code__, call)
    assert written_from(fn.__code__, 0) >= {"b", "c"}
    ret = max(i for i, inst in enumerate(instructions) if inst.opname.startswith("RETURN"))
    assert not written_from(fn.__code__, ret)
