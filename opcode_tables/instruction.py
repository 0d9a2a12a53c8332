"""Version-neutral instructions: what every layer above the decoder sees.

Handlers never see raw bit-packed args, CACHE units or EXTENDED_ARG: a jump's
destination is another ``Instruction`` (``target``), flag bits that some
versions pack into ``arg`` are exposed as named booleans, and 3.11+ exception
handling is attached to each covered instruction (``exc``).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

Positions = Tuple[Optional[int], Optional[int], Optional[int], Optional[int]]
"""(lineno, end_lineno, col_offset, end_col_offset), as ``co_positions()`` yields."""

_UNSET: Any = object()
_ids = itertools.count()


@dataclass(eq=False)
class ExcHandler:
    """The 3.11+ exception-table entry covering an instruction."""

    target: "Instruction"
    depth: int
    lasti: bool

    def key(self) -> Tuple[int, int, bool]:
        return (id(self.target), self.depth, self.lasti)


@dataclass(eq=False)
class Instruction:
    """One instruction of a code object, independent of its binary encoding.

    ``arg`` is the numeric argument after EXTENDED_ARG folding, with flag bits
    still packed (kept so that an unmodified round trip is exact).  Code that
    edits instructions sets ``argval`` (or ``target`` for jumps) and leaves
    ``arg`` as None; the assembler then derives ``arg`` from them.
    """

    opname: str
    arg: Optional[int] = None
    argval: Any = None
    argrepr: str = ""
    # Jump destination, for every instruction whose table row has a jump kind.
    target: Optional["Instruction"] = None
    # Where the instruction came from; None for instructions made by editing.
    offset: Optional[int] = None
    line: Optional[int] = None
    # 3.11+ source positions; None on older versions or for synthetic code.
    positions: Optional[Positions] = None
    # 3.11+: the exception handler covering this instruction, if any.
    exc: Optional[ExcHandler] = None
    # 3.11+ LOAD_GLOBAL (and 3.12+ LOAD_SUPER_ATTR): also pushes NULL.
    push_null: bool = False
    # 3.12+ LOAD_ATTR / LOAD_SUPER_ATTR: the method form (pushes a callable pair).
    is_method: bool = False
    # Decoder hint: EXTENDED_ARG prefixes the original carried, so that an
    # unmodified round trip reproduces co_code even where CPython kept a
    # longer prefix than needed.  Never affects semantics.
    ext_hint: int = 0
    # 3.8-3.10 line tables can start a new entry for the same line; the decoder
    # records where CPython did so that co_lines() survives a round trip.
    starts_line_entry: bool = False
    # Decoder hint: the line CPython's table gave this instruction's EXTENDED_ARG
    # prefix where it differs from the instruction's own (seen in 3.9 lnotabs);
    # None otherwise.  Never affects semantics.
    ext_line: Optional[int] = None
    uid: int = field(default_factory=lambda: next(_ids), repr=False)

    def __repr__(self) -> str:
        tgt = f" -> @{self.target.offset if self.target.offset is not None else '?'}" if self.target else ""
        where = f"@{self.offset}" if self.offset is not None else "@new"
        return f"<{self.opname} {self.argrepr or self.argval!r}{tgt} {where} line={self.line}>"

    def copy(self) -> "Instruction":
        """A shallow copy with a fresh identity (jump targets still point at the originals)."""
        return Instruction(
            opname=self.opname, arg=self.arg, argval=self.argval, argrepr=self.argrepr,
            target=self.target, offset=self.offset, line=self.line, positions=self.positions,
            exc=self.exc, push_null=self.push_null, is_method=self.is_method,
            ext_hint=self.ext_hint, starts_line_entry=self.starts_line_entry, ext_line=self.ext_line,
        )


def create_instruction(opname: str, *, argval: Any = _UNSET, arg: Optional[int] = None,
                       target: Optional[Instruction] = None, line: Optional[int] = None,
                       push_null: bool = False, is_method: bool = False) -> Instruction:
    """A new instruction for edited code; the assembler derives ``arg`` from ``argval``."""
    inst = Instruction(opname=opname, arg=arg, target=target, line=line,
                       push_null=push_null, is_method=is_method)
    if argval is not _UNSET:
        inst.argval = argval
        inst.argrepr = repr(argval)
    elif arg is not None:
        inst.argval = arg
    return inst


def point_at_copies(instructions: List[Instruction], copies: Dict[int, Instruction]) -> None:
    """Make jump targets and exception handlers refer to the copies (``id(original) -> copy``)
    of the instructions they referred to; handlers shared by several instructions stay shared."""
    handlers: Dict[int, ExcHandler] = {}
    for inst in instructions:
        if inst.target is not None:
            inst.target = copies[id(inst.target)]
        if inst.exc is not None:
            old = inst.exc
            if id(old) not in handlers:
                handlers[id(old)] = ExcHandler(copies[id(old.target)], old.depth, old.lasti)
            inst.exc = handlers[id(old)]


def iter_targets(instructions: List[Instruction]):
    """Every instruction referenced as a jump target or exception handler."""
    for inst in instructions:
        if inst.target is not None:
            yield inst.target
        if inst.exc is not None:
            yield inst.exc.target
