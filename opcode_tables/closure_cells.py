"""Turning a code object's cell variables into free variables.

A continuation (opcode_tables.resume) runs the rest of a frame whose cells may
already be shared with closures made before the graph break.  It must use the
*same* cell objects, so the cells arrive in its closure: the names move from
``co_cellvars`` to the end of ``co_freevars``, the frame prologue stops making
them (3.11+: MAKE_CELL becomes NOP, and COPY_FREE_VARS copies the longer
closure), and every cell/free/local argument is re-derived by the assembler.
Instruction indexes are unchanged (NOPs keep their places), so index maps
made for the input code stay valid.
"""
from __future__ import annotations

import dis
import types
from typing import List, Sequence

from .assemble import assemble
from .decode import decode
from .instruction import Instruction, create_instruction


def _current_table():
    from . import current_table
    return current_table()


def cells_as_free(code: types.CodeType, names: Sequence[str]) -> types.CodeType:
    """``code`` with the cell variables ``names`` read from its closure instead (appended to
    ``co_freevars`` in the given order).  The function object must be made with
    ``closure = original closure + (one cell per name)``."""
    names = list(names)
    missing = [n for n in names if n not in code.co_cellvars]
    if missing:
        raise ValueError(f"{code.co_name}: {missing} are not cell variables (cells: {list(code.co_cellvars)})")
    if not names:
        return code
    table = _current_table()
    freevars = list(code.co_freevars) + names
    cellvars = [n for n in code.co_cellvars if n not in names]
    # A cell that was also a parameter now lives only in the closure.
    varnames = [n for n in code.co_varnames if n not in names]
    n_params = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    params = [n for n in code.co_varnames[:n_params] if n in names]
    if params:
        raise ValueError(f"{code.co_name}: the parameters {params} cannot become free variables")
    instructions: List[Instruction] = decode(code, table).split_instructions()
    touches_names = set(dis.hasfree) | set(dis.haslocal)
    copy_free_placed = any(inst.opname == "COPY_FREE_VARS" for inst in instructions)
    out: List[Instruction] = []
    for inst in instructions:
        if inst.opname == "MAKE_CELL" and inst.argval in names:
            if not copy_free_placed:
                replacement = create_instruction("COPY_FREE_VARS", arg=len(freevars))
                copy_free_placed = True
            else:
                replacement = create_instruction("NOP")
            replacement.line, replacement.positions = inst.line, inst.positions
            _retarget(instructions, inst, replacement)
            out.append(replacement)
            continue
        if inst.opname == "COPY_FREE_VARS":
            inst.arg = len(freevars)
        elif dis.opmap.get(inst.opname) in touches_names:
            inst.arg = None  # re-derived from argval in the new name spaces
        out.append(inst)
    return assemble(out, code, co_cellvars=tuple(cellvars), co_freevars=tuple(freevars),
                    co_varnames=tuple(varnames), co_nlocals=len(varnames))


def _retarget(instructions: List[Instruction], old: Instruction, new: Instruction) -> None:
    for inst in instructions:
        if inst.target is old:
            inst.target = new
        if inst.exc is not None and inst.exc.target is old:
            inst.exc.target = new
