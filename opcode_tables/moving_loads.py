"""Generated code that hands a local on by moving its reference, not by copying it.

From 3.14 a local may hold a *borrowed* reference: a caller that keeps its
argument in a local of its own pushes it with LOAD_FAST_BORROW, and the
callee's parameter then adds nothing to the object's reference count.  Python
source cannot pass such a parameter on unchanged: a plain load either borrows
again (and the local keeps whatever it held) or takes a reference of its own.
The table's ``moving_local_load`` (LOAD_FAST_AND_CLEAR) pushes the local's
reference as it is and clears the local, so a frame that receives it holds the
value exactly as the frame that gave it did: a borrowed reference stays
borrowed, and an owned one moves with the value (the receiver's ``x = None``
frees it).  The compiler's wrappers use it to hand a function's parameters to
the frames that run its code (compiler.resume.pinned_runner).

The loads to turn into moves are named by source line, which generated code
controls; the code must not read those locals again before rebinding them.
"""
from __future__ import annotations

import types
from typing import Collection

from .assemble import assemble
from .decode import decode
from .spec import VersionTable

__all__ = ["with_moving_loads"]


def _current_table() -> VersionTable:
    from . import current_table
    return current_table()


def with_moving_loads(code: types.CodeType, names: Collection[str], line: int) -> types.CodeType:
    """``code`` with every load of a fast local in ``names`` on source line ``line`` made a
    moving load (the table's ``moving_local_load``).  Raises ValueError where the table has
    none, or where the line loads none of the names (the generated source and this call
    disagree)."""
    table = _current_table()
    moving = table.fact("moving_local_load")
    if moving is None:
        raise ValueError(f"CPython {table.version[0]}.{table.version[1]} has no moving local load "
                         "(the table fact moving_local_load): its loads all own a reference")
    loads = set(table.fact("unchecked_local_loads")) | {"LOAD_FAST_CHECK"}
    instructions = decode(code, table).split_instructions()
    changed = 0
    for inst in instructions:
        if inst.line == line and inst.opname in loads and inst.argval in names:
            inst.opname, inst.arg = moving, None
            changed += 1
    if not changed:
        raise ValueError(f"{code.co_name}: line {line} loads none of {sorted(names)}")
    return assemble(instructions, code)
