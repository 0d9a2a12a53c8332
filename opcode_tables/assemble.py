"""Version-neutral ``Instruction`` list -> code object of the running interpreter.

Instructions that came from ``decode`` keep their ``arg`` and are encoded as
they were, so an unmodified round trip reproduces ``co_code``, the exception
table, ``co_lines()`` and ``co_positions()``.  Instructions made or edited by
hand leave ``arg`` None; their argument is derived from ``argval`` (constant,
name, local, free variable, comparison) or ``target`` (jumps), growing
``co_consts`` / ``co_names`` / ``co_varnames`` where needed.  Every per-version
choice comes from the running interpreter's table.
"""
from __future__ import annotations

import dis
from types import CodeType
from typing import Any, Dict, List, Optional, Tuple

from .exceptiontable import ExceptionEntry, encode_exception_table
from .instruction import Instruction, Positions
from .linetable import CODE_UNIT, NO_POSITIONS, TABLE_FIELD, LineSpan, encode_line_table
from .spec import VersionTable
from .stackdepth import stack_size

_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
_MAX_ARG = (1 << 32) - 1
# Opcodes that use their argument (dis.hasarg where the interpreter lists them).
_TAKES_ARG = frozenset(getattr(dis, "hasarg", range(dis.HAVE_ARGUMENT, 256)))


class AssemblyError(ValueError):
    """The instruction list cannot be encoded; the message says which instruction and why."""


def _current_table() -> VersionTable:
    from . import current_table
    return current_table()


def _prefixes_needed(arg: int) -> int:
    count = 0
    while arg > 0xFF:
        arg >>= 8
        count += 1
    return count


# -- constant pool ------------------------------------------------------------

def _const_key(value: Any) -> Any:
    """A key under which two constants are interchangeable (0, False and 0.0 are not)."""
    kind = type(value)
    if kind in (tuple, list):
        return (kind, tuple(_const_key(v) for v in value))
    if kind is frozenset:
        return (kind, frozenset(_const_key(v) for v in value))
    if kind in (float, complex):
        return (kind, repr(value))  # tells -0.0 from 0.0 and keeps nan equal to itself
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return (kind, value)


class _Pools:
    """co_consts / co_names / co_varnames / cells / frees, grown on demand."""

    def __init__(self, template: CodeType, overrides: Dict[str, Any], table: VersionTable) -> None:
        def pick(field: str) -> List[Any]:
            return list(overrides[field] if field in overrides else getattr(template, field))

        self.consts = pick("co_consts")
        self.names = pick("co_names")
        self.varnames = pick("co_varnames")
        self.original_nlocals = len(self.varnames)
        self.cellvars = pick("co_cellvars")
        self.freevars = pick("co_freevars")
        self.deref_index = table.fact("deref_index")
        self._const_ids = {id(c): i for i, c in reversed(list(enumerate(self.consts)))}
        self._const_keys = {_const_key(c): i for i, c in reversed(list(enumerate(self.consts)))}

    def const(self, value: Any) -> int:
        index = self._const_ids.get(id(value))
        if index is not None and self.consts[index] is value:
            return index
        key = _const_key(value)
        index = self._const_keys.get(key)
        if index is None:
            index = len(self.consts)
            self.consts.append(value)
            self._const_keys[key] = index
            self._const_ids[id(value)] = index
        return index

    def name(self, value: str) -> int:
        if value not in self.names:
            self.names.append(value)
        return self.names.index(value)

    def local(self, value: str) -> int:
        if self.deref_index == "localsplus":
            return self.localsplus(value, create=True)
        if value not in self.varnames:
            self.varnames.append(value)
        return self.varnames.index(value)

    def localsplus(self, value: str, create: bool = False) -> int:
        names = self.varnames + [c for c in self.cellvars if c not in self.varnames] + self.freevars
        if value in names:
            return names.index(value)
        if not create:
            raise AssemblyError(f"{value!r} is neither a local, a cell nor a free variable of this code")
        self.varnames.append(value)
        return len(self.varnames) - 1

    def free(self, value: str) -> int:
        if self.deref_index == "localsplus":
            return self.localsplus(value)
        names = self.cellvars + self.freevars
        if value not in names:
            raise AssemblyError(f"{value!r} is neither a cell nor a free variable of this code; "
                                "add it to co_cellvars/co_freevars through code_overrides")
        return names.index(value)

    @property
    def locals_grew(self) -> bool:
        return len(self.varnames) != self.original_nlocals


# -- arguments ----------------------------------------------------------------

_compare_probe: Dict[str, int] = {}


def _derive_arg(inst: Instruction, pools: _Pools, table: VersionTable) -> int:
    """The numeric argument for an instruction built or edited by hand."""
    opcode = dis.opmap[inst.opname]
    value = inst.argval
    fused = table.fact("superinstructions")
    if inst.opname in fused:
        if not (isinstance(value, tuple) and len(value) == 2):
            raise AssemblyError(f"{inst!r}: argval must be a pair of local names")
        first, second = (pools.local(v) for v in value)
        if first > 15 or second > 15:
            raise AssemblyError(f"{inst!r}: locals beyond index 15 cannot be fused; use two instructions")
        return (first << 4) | second
    flags: Tuple[str, ...] = table.fact("arg_flags").get(inst.opname, ())
    if opcode in dis.hasconst:
        index = pools.const(value)
    elif opcode in dis.hasname:
        if not isinstance(value, str):
            raise AssemblyError(f"{inst!r}: argval must be a name (str), got {type(value).__name__}")
        index = pools.name(value)
    elif opcode in dis.haslocal:
        index = pools.local(value)
    elif opcode in dis.hasfree:
        index = pools.free(value)
    elif opcode in dis.hascompare:
        index = _compare_arg(value, table)
    elif isinstance(value, str) and inst.opname in _SYMBOLIC_OPERANDS:
        index = _symbolic_arg(inst.opname, value, table)
    elif isinstance(value, int) and not isinstance(value, bool):
        index = value
    elif opcode not in _TAKES_ARG:
        index = 0
    else:
        raise AssemblyError(f"{inst!r}: cannot derive the argument of {inst.opname} from argval {value!r}; "
                            "set arg explicitly")
    packed = index << len(flags)
    for bit, flag in enumerate(flags):
        if getattr(inst, flag, False):
            packed |= 1 << bit
    return packed


# Opcodes whose operand indexes a table fact; argval may name the entry instead.
_SYMBOLIC_OPERANDS = {"BINARY_OP": "binary_ops", "CALL_INTRINSIC_1": "intrinsics_1",
                      "CALL_INTRINSIC_2": "intrinsics_2"}


def _symbolic_arg(opname: str, value: str, table: VersionTable) -> int:
    # binary_ops rows are (NB_NAME, symbol); intrinsics are plain names.
    for index, entry in enumerate(table.fact(_SYMBOLIC_OPERANDS[opname])):
        if value == entry or (isinstance(entry, tuple) and value in entry):
            return index
    raise AssemblyError(f"{opname} has no operand {value!r} on CPython {table.version[0]}.{table.version[1]}")


def _compare_arg(symbol: Any, table: VersionTable) -> int:
    cmp_op = table.fact("cmp_op")
    if symbol not in cmp_op:
        raise AssemblyError(f"COMPARE_OP argval {symbol!r} is not one of {cmp_op}")
    index = cmp_op.index(symbol)
    return (index << table.fact("compare_op_shift")) | table.fact("compare_op_masks").get(symbol, 0)


# -- jumps --------------------------------------------------------------------

def _directed(opname: str, backward: bool, table: VersionTable) -> str:
    """The opname of the same jump in the direction actually needed."""
    kind = table[opname].jump
    if kind == "abs" or (kind == "rel") != backward:
        return opname
    if backward:
        candidates = [opname.replace("FORWARD", "BACKWARD")]
        if opname == "JUMP_FORWARD":
            candidates.append("JUMP_ABSOLUTE")
    else:
        candidates = [opname.replace("BACKWARD", "FORWARD")]
        if opname.startswith("JUMP_BACKWARD"):
            candidates.append("JUMP_FORWARD")
    for name in candidates:
        if name != opname and name in table and table[name].jump in ("abs", "rel_back" if backward else "rel"):
            return name
    direction = "backward" if backward else "forward"
    raise AssemblyError(f"{opname} cannot jump {direction} on CPython {table.version[0]}.{table.version[1]} "
                        f"and has no {direction} form; route it through an unconditional jump")


def _jump_arg(kind: str, start: int, end: int, target: int, unit: int) -> int:
    if kind == "abs":
        return target // unit
    distance = target - end if kind == "rel" else end - target
    if distance < 0:
        raise AssemblyError(f"relative jump of kind {kind} cannot reach offset {target} from {end}")
    return distance // unit


# -- assembly -----------------------------------------------------------------

def assemble(instructions: List[Instruction], template: CodeType, **code_overrides: Any) -> CodeType:
    """A code object running ``instructions``, with every other field from ``template``.

    ``code_overrides`` are ``CodeType.replace`` keywords (as the table's
    ``code_fields`` lists them): pools given there are the ones arguments are
    looked up in; ``co_stacksize`` given there replaces the flow analysis.
    """
    table = _current_table()
    fields = set(table.fact("code_fields"))
    unknown = sorted(set(code_overrides) - fields)
    if unknown:
        raise AssemblyError(f"unknown code fields {unknown} for CPython {table.version[0]}.{table.version[1]}; "
                            f"expected some of {sorted(fields)}")
    if not instructions:
        raise AssemblyError("cannot assemble an empty instruction list")
    index_of = {id(inst): i for i, inst in enumerate(instructions)}
    pools = _Pools(template, code_overrides, table)

    specs = table.opcodes
    opmap = dis.opmap
    opnames: List[str] = []
    args: List[Optional[int]] = []
    for i, inst in enumerate(instructions):
        opname = inst.opname
        spec = specs.get(opname)
        if spec is None or opname not in opmap:
            raise AssemblyError(f"instruction {i}: {opname} is not an opcode of CPython "
                                f"{table.version[0]}.{table.version[1]}")
        if spec.jump is not None:
            if inst.target is None or id(inst.target) not in index_of:
                raise AssemblyError(f"instruction {i} ({inst!r}): jump target missing from the list")
            opname = _directed(opname, index_of[id(inst.target)] <= i, table)
        if inst.exc is not None and id(inst.exc.target) not in index_of:
            raise AssemblyError(f"instruction {i} ({inst!r}): exception handler missing from the list")
        opnames.append(opname)
        args.append(inst.arg if inst.arg is not None or spec.jump is not None else _derive_arg(inst, pools, table))
    if pools.locals_grew and pools.deref_index == "localsplus":
        # New locals shift every cell and free index of the unified space.
        for i, inst in enumerate(instructions):
            opcode = dis.opmap[inst.opname]
            if opcode in dis.hasfree or opcode in dis.haslocal:
                args[i] = _derive_arg(inst, pools, table)

    layout = _layout(instructions, opnames, args, index_of, table)
    starts, sizes, prefixes = layout
    code_bytes = _emit(opnames, args, prefixes, table)

    firstlineno = code_overrides.get("co_firstlineno", template.co_firstlineno)
    fmt = table.fact("linetable")
    spans = _line_spans(instructions, starts, sizes, firstlineno, fmt)
    replace: Dict[str, Any] = {
        "co_code": code_bytes,
        "co_consts": tuple(pools.consts),
        "co_names": tuple(pools.names),
        "co_varnames": tuple(pools.varnames),
        "co_nlocals": len(pools.varnames),
        TABLE_FIELD[fmt]: encode_line_table(fmt, spans, firstlineno),
    }
    if table.fact("exception_table"):
        replace["co_exceptiontable"] = encode_exception_table(_exception_entries(instructions, starts, sizes, index_of))
    elif any(inst.exc is not None for inst in instructions):
        raise AssemblyError("instructions carry 3.11+ exception handlers (exc) but this interpreter uses "
                            "SETUP_* blocks; build the try region with opcode_tables.factories")
    if "co_stacksize" not in code_overrides:
        replace["co_stacksize"] = stack_size(instructions, table, args, opnames)
    replace.update({k: v for k, v in code_overrides.items() if k not in ("co_consts", "co_names", "co_varnames")})
    return template.replace(**{k: v for k, v in replace.items() if k in fields})


def _layout(instructions: List[Instruction], opnames: List[str], args: List[Optional[int]],
            index_of: Dict[int, int], table: VersionTable) -> Tuple[List[int], List[int], List[int]]:
    """Byte offsets, sizes and EXTENDED_ARG counts, with jump args filled in ``args``.

    Prefix counts only grow between rounds, so the fix-point is reached.
    """
    unit = table.fact("jump_unit")
    specs = table.opcodes
    prefixes = [inst.ext_hint if arg is None or arg <= 0xFF else max(inst.ext_hint, _prefixes_needed(arg))
                for inst, arg in zip(instructions, args)]
    caches = [specs[name].caches for name in opnames]
    kinds = [(i, specs[name].jump) for i, name in enumerate(opnames) if specs[name].jump is not None]
    targets = [index_of[id(instructions[i].target)] for i, _ in kinds]
    while True:
        starts, sizes = [], []
        offset = 0
        for count, cache in zip(prefixes, caches):
            starts.append(offset)
            size = CODE_UNIT * (1 + count + cache)
            sizes.append(size)
            offset += size
        changed = False
        for (i, kind), target_index in zip(kinds, targets):
            end = starts[i] + sizes[i]
            arg = _jump_arg(kind, starts[i], end, starts[target_index], unit)
            args[i] = arg
            needed = _prefixes_needed(arg)
            if needed > prefixes[i]:
                prefixes[i] = needed
                changed = True
        if not changed:
            return starts, sizes, prefixes


def _emit(opnames: List[str], args: List[Optional[int]], prefixes: List[int], table: VersionTable) -> bytes:
    out = bytearray()
    opmap, specs = dis.opmap, table.opcodes
    for name, arg, count in zip(opnames, args, prefixes):
        arg = arg or 0
        if not 0 <= arg <= _MAX_ARG:
            raise AssemblyError(f"{name}: argument {arg} out of range 0..2**32-1")
        for shift in range(count, 0, -1):
            out += bytes((_EXTENDED_ARG, (arg >> (8 * shift)) & 0xFF))
        out.append(opmap[name])
        out.append(arg & 0xFF)
        caches = specs[name].caches
        if caches:
            out += bytes(CODE_UNIT * caches)
    return bytes(out)


def _line_spans(instructions: List[Instruction], starts: List[int], sizes: List[int],
                firstlineno: int, fmt: str) -> List[LineSpan]:
    """Effective line/positions per instruction: made-up instructions inherit their predecessor's."""
    spans = []
    line: Optional[int] = None
    positions: Positions = NO_POSITIONS
    for inst, start, size in zip(instructions, starts, sizes):
        synthetic = inst.offset is None
        if inst.positions is not None and inst.positions[0] == inst.line:
            positions, line = inst.positions, inst.line
        elif inst.line is not None:
            line, positions = inst.line, (inst.line, inst.line, None, None)
        elif not synthetic:
            line, positions = None, NO_POSITIONS
        if fmt == "lnotab" and line is None:
            line = firstlineno
        if inst.ext_line is not None and inst.ext_line != line and inst.ext_hint:
            # Keep a prefix line that differs from the instruction's (decoded quirk).
            prefix_size = CODE_UNIT * inst.ext_hint
            spans.append(LineSpan(start, prefix_size, inst.ext_line, positions, True))
            start, size = start + prefix_size, size - prefix_size
        spans.append(LineSpan(start, size, line, positions, inst.starts_line_entry))
    return spans


def _exception_entries(instructions: List[Instruction], starts: List[int], sizes: List[int],
                       index_of: Dict[int, int]) -> List[ExceptionEntry]:
    """Consecutive instructions with the same handler key form one entry (as CPython's assembler)."""
    entries: List[ExceptionEntry] = []
    current = None
    run_start = 0
    for i, inst in enumerate(instructions + [None]):  # type: ignore[operator]
        key = inst.exc.key() if inst is not None and inst.exc is not None else None
        if key != (current.key() if current is not None else None):
            if current is not None:
                entries.append(ExceptionEntry(starts[run_start], starts[i - 1] + sizes[i - 1],
                                              starts[index_of[id(current.target)]], current.depth, current.lasti))
            current = inst.exc if inst is not None else None
            run_start = i
    return entries
