"""Small instruction-sequence factories that hide per-version shapes.

Code that emits bytecode (resume functions, transformed code, tests) asks for
"call this with n arguments" or "protect these instructions with a handler"
and gets the running interpreter's sequence; which one comes from the table's
facts (``call_null_layout``, ``has_precall``, ``exception_table``,
``frame_prologue``), never from a version check.
"""
from __future__ import annotations

from typing import Any, List, Optional

from .instruction import ExcHandler, Instruction, create_instruction
from .spec import VersionTable


def _table(table: Optional[VersionTable]) -> VersionTable:
    if table is not None:
        return table
    from . import current_table
    return current_table()


def create_load_const(value: Any) -> Instruction:
    return create_instruction("LOAD_CONST", argval=value)


def create_load_global(name: str, push_null: bool = False) -> Instruction:
    """LOAD_GLOBAL; with ``push_null`` it also pushes the NULL a later call expects (where calls use one)."""
    return create_instruction("LOAD_GLOBAL", argval=name, push_null=push_null)


def create_binary_op(symbol: str, table: Optional[VersionTable] = None) -> Instruction:
    """The operator ``symbol`` ("+", "*=", ...): BINARY_OP (3.11+) or its BINARY_*/INPLACE_* opcode."""
    table = _table(table)
    if table.fact("binary_ops"):
        return create_instruction("BINARY_OP", argval=symbol)
    from . import table_for
    # The 3.11 operand table names every operator; older versions spell the same
    # names as opcodes (NB_REMAINDER was BINARY_MODULO).
    for nb_name, nb_symbol in table_for((3, 11)).fact("binary_ops"):
        if nb_symbol == symbol:
            stem = nb_name[len("NB_"):].replace("REMAINDER", "MODULO")
            opname = stem if stem.startswith("INPLACE_") else "BINARY_" + stem
            if opname in table:
                return create_instruction(opname)
    raise ValueError(f"no binary operator {symbol!r} on CPython {table.version[0]}.{table.version[1]}")


def create_rot_n(n: int, table: Optional[VersionTable] = None) -> List[Instruction]:
    """Move the top of stack ``n - 1`` slots down (ROT_TWO/THREE/FOUR, ROT_N, or SWAPs)."""
    table = _table(table)
    if n <= 1:
        return []
    if "SWAP" in table:
        return [create_instruction("SWAP", arg=i) for i in range(n, 1, -1)]
    named = {2: "ROT_TWO", 3: "ROT_THREE", 4: "ROT_FOUR"}
    if n in named:
        return [create_instruction(named[n])]
    if "ROT_N" in table:
        return [create_instruction("ROT_N", arg=n)]
    raise ValueError(f"cannot rotate {n} stack items on CPython {table.version[0]}.{table.version[1]}")


def create_call_function(nargs: int, push_null: bool, table: Optional[VersionTable] = None) -> List[Instruction]:
    """Call the callable below ``nargs`` positional arguments.

    ``push_null`` says the callable was pushed without the NULL slot that
    3.11+ call sequences need (e.g. it came from LOAD_FAST); the NULL is then
    pushed and rotated into place.  A callable loaded with
    ``create_load_global(name, push_null=True)`` already has it.
    """
    table = _table(table)
    layout = table.fact("call_null_layout")
    out: List[Instruction] = []
    if push_null and layout is not None:
        out.append(create_instruction("PUSH_NULL"))
        out.extend(create_rot_n(nargs + 2 if layout == "null_first" else nargs + 1, table))
    if layout is None:
        out.append(create_instruction("CALL_FUNCTION", arg=nargs))
        return out
    if table.fact("has_precall"):
        out.append(create_instruction("PRECALL", arg=nargs))
    out.append(create_instruction("CALL", arg=nargs))
    return out


def create_pop_jump_if(value: bool, target: Instruction,
                       table: Optional[VersionTable] = None) -> List[Instruction]:
    """Pop the top of stack and jump to ``target`` if its truth is ``value``.

    Where conditional jumps need an exact bool (TO_BOOL exists), the truth
    test comes first.  The direction is fixed by the assembler where the
    version spells it in the opname.
    """
    table = _table(table)
    suffix = "TRUE" if value else "FALSE"
    out = [create_instruction("TO_BOOL")] if "TO_BOOL" in table else []
    for name in (f"POP_JUMP_IF_{suffix}", f"POP_JUMP_FORWARD_IF_{suffix}"):
        if name in table:
            out.append(create_instruction(name, target=target))
            return out
    raise ValueError(f"no conditional jump on {suffix} in the table of CPython {table.version}")


def body_start(instructions: List[Instruction], table: Optional[VersionTable] = None) -> int:
    """Index of the first instruction after the frame prologue (where inserted code may go)."""
    prologue = _table(table).fact("frame_prologue")
    if not prologue:
        return 0
    for i, inst in enumerate(instructions):
        if inst.opname in prologue:
            return i + 1
    return 0


def create_try_except(body: List[Instruction], handler_body: List[Instruction], after: Instruction,
                      depth: int = 0, table: Optional[VersionTable] = None) -> List[Instruction]:
    """``try: body`` / ``except: handler_body``, both continuing at ``after``.

    ``after`` is an instruction the caller places right after the returned
    list (or anywhere later).  ``depth`` is the number of values on the stack
    under the protected region (used by the 3.11+ exception table).  Neither
    ``body`` nor ``handler_body`` may fall off its end into the other: each
    continues at ``after`` through the jump added here.
    """
    table = _table(table)
    first_handler = create_instruction("POP_TOP")
    out: List[Instruction] = []
    if not table.fact("exception_table"):
        # 3.8-3.10 block stack: the handler is entered with the exception (and
        # the previous one) on the stack; POP_EXCEPT restores the previous one.
        out.append(create_instruction("SETUP_FINALLY", target=first_handler))
        out.extend(body)
        out.append(create_instruction("POP_BLOCK"))
        out.append(create_instruction("JUMP_FORWARD", target=after))
        out.extend([first_handler, create_instruction("POP_TOP"), create_instruction("POP_TOP")])
        out.extend(handler_body)
        out.append(create_instruction("POP_EXCEPT"))
        out.append(create_instruction("JUMP_FORWARD", target=after))
        return out
    # 3.11+: the exception table sends the body's exceptions to PUSH_EXC_INFO;
    # an exception inside the handler goes to a cleanup that restores the
    # previous exception and re-raises (as CPython compiles a bare except).
    push_exc_info = create_instruction("PUSH_EXC_INFO")
    cleanup = create_instruction("COPY", arg=3)
    protect = ExcHandler(target=push_exc_info, depth=depth, lasti=False)
    unwind = ExcHandler(target=cleanup, depth=depth + 1, lasti=True)
    for inst in body:
        if inst.exc is None:
            inst.exc = protect
    out.extend(body)
    out.append(create_instruction("JUMP_FORWARD", target=after))
    handler = [push_exc_info, first_handler] + list(handler_body)
    for inst in handler:
        if inst.exc is None:
            inst.exc = unwind
    out.extend(handler)
    out.append(create_instruction("POP_EXCEPT"))
    out.append(create_instruction("JUMP_FORWARD", target=after))
    out.extend([cleanup, create_instruction("POP_EXCEPT"), create_instruction("RERAISE", arg=1)])
    return out
