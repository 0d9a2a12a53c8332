"""Code objects compare equal by value: what the compiler keeps per code object is keyed by
identity.

Two functions made from the same source (a generated helper made again by ``exec``, with a
fresh globals dict each time; hypothesis running one test body over many examples, as the
project-tests suite found) have equal but distinct code objects.  A cache entry, a
continuation, a generated caller or an instruction index found for one must never serve the
other: its globals, constants and instructions are its own."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import compiler
from compiler.cache import cache_for
from opcode_tables.decode import instructions_of
from opcode_tables.identity_map import IdentityWeakMap

_SOURCE = '''
def dispatch(x, n):
    total = x * 2.0
    for _ in range(n):
        print(end="")            # a break in a loop: stubs and continuations of their own
        total = total + K
    return float(total.sum()), TABLE.get(n)
'''


def _made(k: float):
    scope = {"K": k, "TABLE": {1: f"one {k}", 2: f"two {k}"}}
    exec(compile(_SOURCE, "<generated dispatch>", "exec"), scope)
    return scope["dispatch"]


def test_equal_code_objects_are_told_apart():
    a, b = _made(1.0), _made(2.0)
    assert a.__code__ == b.__code__ and a.__code__ is not b.__code__
    assert cache_for(a) is not cache_for(b)
    first, _ = instructions_of(a.__code__)
    second, _ = instructions_of(b.__code__)
    assert first is not second and all(x is not y for x, y in zip(first, second))


@pytest.mark.parametrize("backend", ["eager", "numpy"])
def test_functions_made_again_from_one_source_read_their_own_globals(backend):
    """Made, compiled, run and let go, again and again (each globals dict dies before the next
    is made, so its address is free for the next one): every call reads its own K and TABLE,
    on the compiling call and from the cache, also once a continuation runs natively."""
    for round_ in range(12):
        made = [_made(float(round_ * 10 + k)) for k in range(3)]
        for plain in made:
            compiled = compiler.compile(plain, backend=backend, cache_limit=2)
            for n in (1, 2, 1, 3):
                assert compiled(np.ones(2), n) == plain(np.ones(2), n)
        del made, plain, compiled
        gc.collect()


class _Key:
    pass


def test_identity_weak_map_finds_the_key_itself_and_forgets_it_with_the_key():
    table: IdentityWeakMap = IdentityWeakMap()
    key, other = _Key(), _Key()
    table[key] = "value"
    assert table.get(key) == "value" and table.get(other) is None
    del key
    gc.collect()
    assert len(table) == 0
    # A new object, perhaps at the dead key's address, is not the dead key.
    fresh = [_Key() for _ in range(50)]
    assert all(table.get(k) is None for k in fresh)


def _pair(x, y):
    print(end="")                                # a break inside the comprehension below
    return {"x": x, "y": y}


def _comprehension_over_captured_names(rows):
    made = [_pair(x, y) for x, y in rows]         # x and y are cells of the frame (the genexpr
    out = []                                      # below captures them): 3.12+ inlines the
    for x, y in rows:                             # comprehension, saving the cells on the stack
        out.append(next(i for i, m in enumerate(made) if m["x"] is x and m["y"] is y))
    return out


def test_a_break_inside_a_comprehension_over_names_that_are_cells():
    """3.12+ inlines the comprehension and saves what the slots of x and y hold -- their
    cells -- on the stack while it runs.  A break there cannot rebuild a cell object, so the
    frame runs natively for those inputs; it used to resume with NULL in its place, and the
    continuation, once run natively (here past its cache limit), crashed the interpreter."""
    compiled = compiler.compile(_comprehension_over_captured_names, cache_limit=1)
    for rows in ([(np.ones(2), 1.5), (2, None)], [("s", 2.5), (None, 1)], [(1.5, "t")],
                 [(np.zeros(3), 2)]):
        assert compiled(rows) == _comprehension_over_captured_names(rows)
