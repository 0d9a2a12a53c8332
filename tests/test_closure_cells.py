"""opcode_tables.closure_cells: cell variables moved into the closure keep working, shared."""
from __future__ import annotations

import dis
import io
import types

import pytest

from opcode_tables.closure_cells import cells_as_free
from opcode_tables.decode import instructions_of


def _outer():
    k = 2

    def inner():
        return k

    k = k + 1
    return inner, k


def _with_free(a):
    def make():
        b = a * 10

        def read():
            return a + b

        b = b + 1
        return read()
    return make


def _as_function(code, cells, closure=()):
    return types.FunctionType(code, globals(), code.co_name, None, tuple(closure) + tuple(cells))


def test_cells_move_to_the_end_of_freevars_and_are_shared():
    code = cells_as_free(_outer.__code__, ["k"])
    assert code.co_cellvars == () and code.co_freevars == ("k",)
    cell = types.CellType()
    inner, k = _as_function(code, [cell])()
    assert (inner(), k) == (3, 3)
    assert cell.cell_contents == 3          # the frame wrote the caller's cell
    cell.cell_contents = 7
    assert inner() == 7                     # and the closure made inside reads it
    dis.dis(code, file=io.StringIO())


def test_existing_free_variables_keep_their_slots():
    make = _with_free(5)
    code = cells_as_free(make.__code__, ["b"])
    assert code.co_freevars == make.__code__.co_freevars + ("b",)
    cell = types.CellType()
    assert _as_function(code, [cell], make.__closure__)() == make()
    assert cell.cell_contents == 51


def test_instruction_indexes_are_unchanged():
    before = [i.opname for i in instructions_of(_outer.__code__)[0]]
    after = [i.opname for i in instructions_of(cells_as_free(_outer.__code__, ["k"]))[0]]
    assert len(before) == len(after)
    changed = [(a, b) for a, b in zip(before, after) if a != b]
    assert all(a == "MAKE_CELL" and b in ("NOP", "COPY_FREE_VARS") for a, b in changed)


def test_names_that_are_not_cells_are_refused():
    with pytest.raises(ValueError, match="not cell variables"):
        cells_as_free(_outer.__code__, ["nope"])


def test_a_parameter_cannot_become_free():
    with pytest.raises(ValueError, match="parameter"):
        cells_as_free(_with_free.__code__, ["a"])
