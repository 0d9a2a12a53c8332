"""Code object -> version-neutral ``Instruction`` list.

The binary layout (EXTENDED_ARG prefixes, inline CACHE units, jump units and
directions, flag bits, the exception table) is read with the facts of the
running interpreter's table; ``dis.get_instructions`` supplies ``argval`` and
``argrepr`` exactly as ``dis`` shows them.  Nothing here checks the Python
version: what differs between versions comes from the table.
"""
from __future__ import annotations

import bisect
import dis
import weakref
from dataclasses import dataclass, field
from types import CodeType
from typing import Dict, List, NamedTuple, Optional, Tuple

from .exceptiontable import parse_exception_table
from .instruction import ExcHandler, Instruction, point_at_copies
from .identity_map import IdentityWeakMap
from .linetable import CODE_UNIT, read_line_info
from .spec import VersionTable

# Flag bits (table fact "arg_flags") that Instruction exposes as booleans;
# others (3.12 LOAD_SUPER_ATTR's two_arg) stay packed in ``arg`` only.
_FLAG_FIELDS = ("push_null", "is_method")


class DecodeError(ValueError):
    """The code object does not match the running interpreter's table."""


class ExceptionRange(NamedTuple):
    """A 3.11+ exception-table entry in instruction terms (``end`` inclusive)."""

    start: Instruction
    end: Instruction
    target: Instruction
    depth: int
    lasti: bool


@dataclass
class Decoded:
    """The decoded form of one code object."""

    code: CodeType
    instructions: List[Instruction]
    table: VersionTable
    _split: Optional[List[Instruction]] = field(default=None, repr=False, compare=False)

    @property
    def exception_entries(self) -> List[ExceptionRange]:
        """Runs of consecutive instructions sharing one handler (3.11+; empty before)."""
        return exception_ranges(self.instructions)

    def split_instructions(self) -> List[Instruction]:
        """``split_superinstructions(self.instructions)``, computed once (what the tracer steps through)."""
        if self._split is None:
            self._split = split_superinstructions(self.instructions, self.table)
        return self._split


def exception_ranges(instructions: List[Instruction]) -> List[ExceptionRange]:
    """Group consecutive instructions by the handler object covering them."""
    ranges: List[ExceptionRange] = []
    run_start: Optional[int] = None
    for i, inst in enumerate(instructions):
        previous = instructions[i - 1].exc if i else None
        if inst.exc is not previous:
            if previous is not None and run_start is not None:
                ranges.append(ExceptionRange(instructions[run_start], instructions[i - 1],
                                             previous.target, previous.depth, previous.lasti))
            run_start = i
    last = instructions[-1].exc if instructions else None
    if last is not None and run_start is not None:
        ranges.append(ExceptionRange(instructions[run_start], instructions[-1],
                                     last.target, last.depth, last.lasti))
    return ranges


def _current_table() -> VersionTable:
    from . import current_table  # the package imports this module's users, not the reverse
    return current_table()


def _jump_target_offset(inst: Instruction, spec_jump: str, caches: int, unit: int) -> int:
    if spec_jump == "abs":
        return inst.arg * unit
    after = inst.offset + CODE_UNIT * (1 + caches)
    return after + inst.arg * unit if spec_jump == "rel" else after - inst.arg * unit


def decode(code: CodeType, table: Optional[VersionTable] = None) -> Decoded:
    """Decode ``code`` (of the running interpreter) into version-neutral instructions."""
    table = table or _current_table()
    specs = table.opcodes
    lines, positions, entry_starts = read_line_info(code, table.fact("linetable"))
    flag_bits = {name: [(bit, flag) for bit, flag in enumerate(flags) if flag in _FLAG_FIELDS]
                 for name, flags in table.fact("arg_flags").items()}

    instructions: List[Instruction] = []
    starts: List[int] = []          # first byte of each instruction, EXTENDED_ARG prefixes included
    by_offset: Dict[int, Instruction] = {}
    jumps: List[Instruction] = []
    raw = code.co_code
    prefixes = prefix_start = prefix_arg = 0
    # dis walks co_code (EXTENDED_ARG folded into the next arg, CACHE units
    # skipped) and decodes argval/argrepr exactly as it shows them.
    for ref in dis.get_instructions(code):
        name, offset = ref.opname, ref.offset
        if name == "EXTENDED_ARG":
            if not prefixes:
                prefix_start = offset
            prefixes += 1
            prefix_arg = ref.arg
            continue
        spec = specs.get(name)
        if spec is None:
            raise DecodeError(f"opcode {name} at offset {offset} of {getattr(code, 'co_qualname', code.co_name)} "
                              f"is not in the table of CPython {table.version[0]}.{table.version[1]}; "
                              "add a row to opcode_tables")
        start = prefix_start if prefixes else offset
        unit = offset // CODE_UNIT
        arg = ref.arg
        if arg is None:
            # dis hides the argument byte of opcodes that ignore it, but CPython
            # sometimes leaves one there (3.10's ROT_THREE 3): keep it for co_code.
            arg = raw[offset + 1] | ((prefix_arg << 8) if prefixes else 0) or None
        inst = Instruction(
            opname=name, arg=arg, argval=ref.argval, argrepr=ref.argrepr, offset=offset,
            line=lines[unit], positions=positions[unit] if positions is not None else None,
            ext_hint=prefixes, starts_line_entry=start in entry_starts or offset in entry_starts,
        )
        if prefixes and lines[start // CODE_UNIT] != inst.line:
            inst.ext_line = lines[start // CODE_UNIT]
        for bit, flag in flag_bits.get(name, ()):
            setattr(inst, flag, bool((arg >> bit) & 1))
        if spec.jump is not None:
            jumps.append(inst)
        instructions.append(inst)
        starts.append(start)
        by_offset[start] = inst
        by_offset.setdefault(offset, inst)
        prefixes = 0

    unit = table.fact("jump_unit")
    for inst in jumps:
        spec = specs[inst.opname]
        where = _jump_target_offset(inst, spec.jump, spec.caches, unit)
        target = by_offset.get(where)
        if target is None:
            raise DecodeError(f"{getattr(code, 'co_qualname', code.co_name)}: "
                              f"{inst.opname} at {inst.offset} jumps to {where}, which starts no instruction")
        if isinstance(inst.argval, int) and inst.argval != where:
            raise DecodeError(f"table row {inst.opname} of {table.version} disagrees with dis about the "
                              f"jump target at offset {inst.offset}: {where} vs {inst.argval}")
        inst.target = target

    if table.fact("exception_table"):
        _attach_exception_handlers(code, starts, instructions, by_offset)
    return Decoded(code=code, instructions=instructions, table=table)


def _attach_exception_handlers(code: CodeType, starts: List[int],
                               instructions: List[Instruction], by_offset: Dict[int, Instruction]) -> None:
    for entry in parse_exception_table(code.co_exceptiontable):
        target = by_offset.get(entry.target)
        if target is None:
            raise DecodeError(f"{code.co_name}: exception handler at {entry.target} starts no instruction")
        handler = ExcHandler(target=target, depth=entry.depth, lasti=entry.lasti)
        first = bisect.bisect_left(starts, entry.start)
        last = bisect.bisect_left(starts, entry.end)
        for inst in instructions[first:last]:
            inst.exc = handler


def split_superinstructions(instructions: List[Instruction],
                            table: Optional[VersionTable] = None) -> List[Instruction]:
    """Split 3.13's fused LOAD_FAST_LOAD_FAST & co into their two halves.

    Returns the same list when nothing is fused.  Otherwise every instruction
    is copied (the input stays untouched, e.g. a cached decode): jumps and
    handlers that reached a fused instruction reach its first half; the
    second half shares line, positions and handler and has ``offset`` None.
    """
    table = table or _current_table()
    fused: Dict[str, Tuple[str, str]] = table.fact("superinstructions")
    if not any(inst.opname in fused for inst in instructions):
        return instructions
    copies: Dict[int, Instruction] = {}
    out: List[Instruction] = []
    for inst in instructions:
        first = inst.copy()
        copies[id(inst)] = first
        out.append(first)
        if inst.opname in fused:
            first_name, second_name = fused[inst.opname]
            names = inst.argval if isinstance(inst.argval, tuple) else (None, None)
            arg = inst.arg or 0
            first.opname, first.arg, first.argval, first.argrepr = first_name, arg >> 4, names[0], str(names[0])
            second = first.copy()
            second.opname, second.arg, second.argval, second.argrepr = second_name, arg & 15, names[1], str(names[1])
            second.offset, second.ext_hint, second.starts_line_entry, second.target = None, 0, False, None
            out.append(second)
    point_at_copies(out, copies)
    return out


_cache: Dict[int, Tuple["weakref.ref[CodeType]", Decoded]] = {}


def decode_cached(code: CodeType) -> Decoded:
    """``decode(code)``, memoised per code object for the tracer.  Treat the result as read-only."""
    key = id(code)
    hit = _cache.get(key)
    if hit is not None and hit[0]() is code:
        return hit[1]
    decoded = decode(code)
    # The callback holds the dict itself: module globals are gone at interpreter exit.
    _cache[key] = (weakref.ref(code, lambda _ref, key=key, cache=_cache: cache.pop(key, None)), decoded)
    return decoded


# By identity: the index is by instruction identity, and an equal code object (code compares
# by value) has instructions of its own (decode_cached).  Weak: fresh functions (and their
# code) must be collectable after they are gone.
_indexed: "IdentityWeakMap[CodeType, Tuple[List[Instruction], Dict[int, int]]]" = IdentityWeakMap()


def instructions_of(code: CodeType) -> Tuple[List[Instruction], Dict[int, int]]:
    """The instructions the tracer steps through (decoded, superinstructions split) and an
    index by instruction identity, memoised per code object.  Indexes into this list are
    what the tracer, ``liveness`` and ``resume`` exchange."""
    cached = _indexed.get(code)
    if cached is None:
        instructions = split_superinstructions(decode_cached(code).instructions)
        cached = (instructions, {id(inst): i for i, inst in enumerate(instructions)})
        _indexed[code] = cached
    return cached
