"""Which locals a continuation needs: backward liveness over a code object's instructions.

A name is live at an instruction when some path from it may read the name
before writing it.  Paths include exception edges: every instruction inside a
protected range may go to its handler (3.11+: ``inst.exc``; 3.8-3.10: the
handlers of the SETUP_* blocks active there).  Which opcodes read or write a
local comes from ``dis.haslocal`` / ``dis.hasfree`` and the opname's verb, so
new variants (LOAD_FAST_CHECK, LOAD_FAST_AND_CLEAR, STORE_FAST_MAYBE_NULL,
split 3.13 superinstructions) need no list here.  When unsure, a name is live.
"""
from __future__ import annotations

import dis
import types
import weakref
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from .decode import decode_cached
from .instruction import Instruction
from .spec import VersionTable

__all__ = ["live_locals", "loads_maybe_unbound", "reachable", "reads_frame", "written_from", "written_locals"]

_SLOT_OPCODES = frozenset(dis.haslocal) | frozenset(dis.hasfree)
# Builtins that read the whole frame: a function calling one of them keeps every local live.
_FRAME_READERS = frozenset({"locals", "vars", "eval", "exec", "dir"})
# 3.8's finally bodies return (through END_FINALLY / POP_FINALLY) to the
# instruction after any CALL_FINALLY that entered them.
_FINALLY_CALL = "CALL_FINALLY"
_FINALLY_RETURNS = frozenset({"END_FINALLY", "POP_FINALLY"})


def _current_table() -> VersionTable:
    from . import current_table
    return current_table()


def _uses_defs(inst: Instruction) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """(names read, names written) by one instruction; a delete both needs the name bound and unbinds it."""
    if dis.opmap[inst.opname] not in _SLOT_OPCODES or not isinstance(inst.argval, str):
        return (), ()
    verb = inst.opname.split("_", 1)[0]
    if verb == "STORE":
        return (), (inst.argval,)
    if verb == "DELETE":
        return (inst.argval,), (inst.argval,)
    if verb == "MAKE":   # MAKE_CELL wraps the local's current value
        return (inst.argval,), (inst.argval,)
    return (inst.argval,), ()


def _block_handlers(instructions: List[Instruction], table: VersionTable) -> Dict[int, Set[int]]:
    """3.8-3.10: per instruction, the handlers of every block that may be active there."""
    index_of = {id(inst): i for i, inst in enumerate(instructions)}
    active: Dict[int, Set[int]] = {}
    seen: Set[Tuple[int, Tuple[int, ...]]] = set()
    pending: List[Tuple[int, Tuple[int, ...]]] = [(0, ())]
    while pending:
        index, stack = pending.pop()
        while index < len(instructions) and (index, stack) not in seen:
            seen.add((index, stack))
            inst = instructions[index]
            spec = table[inst.opname]
            active.setdefault(index, set()).update(stack)
            after = stack
            if spec.block_setup:
                handler = index_of[id(inst.target)]
                pending.append((handler, stack))  # the block is popped when its handler starts
                after = stack + (handler,)
            elif inst.opname == "POP_BLOCK":
                after = stack[:-1]
            elif spec.jump is not None:
                pending.append((index_of[id(inst.target)], stack))
            if spec.flow != "next":
                break
            index, stack = index + 1, after
    return active


def _successors(instructions: List[Instruction],
                table: VersionTable) -> Tuple[List[Set[int]], List[Set[int]]]:
    """Per instruction: normal successors, and handlers an exception inside it may reach."""
    index_of = {id(inst): i for i, inst in enumerate(instructions)}
    count = len(instructions)
    normal: List[Set[int]] = [set() for _ in range(count)]
    raising: List[Set[int]] = [set() for _ in range(count)]
    finally_returns = [i + 1 for i, inst in enumerate(instructions)
                       if inst.opname == _FINALLY_CALL and i + 1 < count]
    blocks = {} if table.fact("exception_table") else _block_handlers(instructions, table)
    for i, inst in enumerate(instructions):
        spec = table[inst.opname]
        if spec.flow == "next" and i + 1 < count:
            normal[i].add(i + 1)
        if spec.jump is not None and inst.target is not None:
            normal[i].add(index_of[id(inst.target)])
        if inst.opname in _FINALLY_RETURNS:
            normal[i].update(finally_returns)
        if inst.exc is not None:
            raising[i].add(index_of[id(inst.exc.target)])
        raising[i].update(blocks.get(i, ()))
    return normal, raising


def reads_frame(code: types.CodeType) -> bool:
    """Whether ``code`` may look at its locals wholesale (``locals()``, ``vars()``, ``eval`` ...)."""
    return bool(_FRAME_READERS & set(code.co_names))


def _writes(inst: Instruction) -> Tuple[str, ...]:
    """Names one instruction binds, unbinds or clears (3.12's LOAD_FAST_AND_CLEAR, saving a
    local around an inlined comprehension, clears it)."""
    writes = _uses_defs(inst)[1]
    if not writes and inst.opname == "LOAD_FAST_AND_CLEAR":
        writes = (inst.argval,)
    return writes


def written_locals(code: types.CodeType) -> FrozenSet[str]:
    """Names of fast locals / cells some instruction of ``code`` binds, unbinds or clears."""
    written: Set[str] = set()
    for inst in decode_cached(code).split_instructions():
        written.update(_writes(inst))
    return frozenset(written)


def written_from(code: types.CodeType, index: int = 0) -> FrozenSet[str]:
    """Names of fast locals / cells that some path from instructions_of(code)[index]
    (exception edges included) may bind, unbind or clear: for a break's stub, entered at
    its first instruction, what the native code it runs may rebind."""
    instructions = decode_cached(code).split_instructions()
    written: Set[str] = set()
    for i in reachable(code, index):
        written.update(_writes(instructions[i]))
    return frozenset(written)


def loads_maybe_unbound(instructions: List[Instruction], start: int, bound: FrozenSet[str],
                        names: FrozenSet[str], table: VersionTable) -> FrozenSet[int]:
    """Indexes of instructions, among those reachable from ``start``, that load one of
    ``names`` where some path from ``start`` -- entered with ``bound`` bound -- reaches them
    with the name unbound (never stored since, or deleted or cleared).  A forward "definitely
    bound" analysis over the same edges as liveness (an instruction that raises has not
    written yet).  A continuation entered part-way keeps CPython's unchecked loads elsewhere:
    a checked load takes a reference of its own where the plain frame's was borrowed."""
    if not names:
        return frozenset()
    normal, raising = _successors(instructions, table)
    # A name an inlined comprehension saves (LOAD_FAST_AND_CLEAR) is restored by a store that
    # may put NULL back: no store of it counts as binding it.
    saved = frozenset(inst.argval for inst in instructions if inst.opname == "LOAD_FAST_AND_CLEAR")
    state: Dict[int, FrozenSet[str]] = {start: frozenset(bound) & names}
    pending = [start]
    while pending:
        i = pending.pop()
        before = state[i]
        inst = instructions[i]
        writes = _writes(inst)
        after = before
        if writes:
            stores = dis.opmap[inst.opname] in _SLOT_OPCODES and inst.opname.split("_", 1)[0] == "STORE"
            after = (before | (frozenset(writes) & names - saved)) if stores else before - frozenset(writes)
        for successors, value in ((normal[i], after), (raising[i], before)):
            for j in successors:
                known = state.get(j)
                merged = value if known is None else known & value
                if merged != known:
                    state[j] = merged
                    pending.append(j)
    return frozenset(i for i, inst in enumerate(instructions)
                     if i in state and inst.argval in names and dis.opmap[inst.opname] in _SLOT_OPCODES
                     and inst.opname.startswith("LOAD_FAST") and inst.argval not in state[i])


def _all_names(code: types.CodeType) -> FrozenSet[str]:
    return frozenset(code.co_varnames) | frozenset(code.co_cellvars)


def live_locals(code: types.CodeType, index: int) -> FrozenSet[str]:
    """Names of fast locals / cells that some path from instructions_of(code)[index] may read before writing them.

    Free variables are never included (they come from the closure).  If the
    code may read its frame wholesale (``locals()``, ``eval`` ...), every
    local and cell is live.
    """
    instructions = decode_cached(code).split_instructions()
    if not 0 <= index < len(instructions):
        raise ValueError(f"index={index} is outside the {len(instructions)} instructions of {code.co_name} "
                         "(indexes are into opcode_tables.decode.instructions_of(code))")
    if reads_frame(code):
        return _all_names(code)
    cached = _LIVE.get(code)
    if cached is None:
        cached = _live_in(code, instructions)
        _LIVE[code] = cached
    return cached[index]


# Weak: continuations are generated code objects that must stay collectable.
_LIVE: "weakref.WeakKeyDictionary[types.CodeType, List[FrozenSet[str]]]" = weakref.WeakKeyDictionary()


def reachable(code: types.CodeType, index: int) -> FrozenSet[int]:
    """Indexes of instructions_of(code) that some path from ``index`` may execute (exception edges included)."""
    instructions = decode_cached(code).split_instructions()
    normal, raising = _successors(instructions, _current_table())
    seen = {index}
    pending = [index]
    while pending:
        i = pending.pop()
        for s in normal[i] | raising[i]:
            if s not in seen:
                seen.add(s)
                pending.append(s)
    return frozenset(seen)


def _live_in(code: types.CodeType, instructions: List[Instruction]) -> List[FrozenSet[str]]:
    table = _current_table()
    normal, raising = _successors(instructions, table)
    frees = frozenset(code.co_freevars) - frozenset(code.co_cellvars)
    # Zero-argument super() reads the first argument from the frame, unseen by any LOAD.
    implicit_self = code.co_varnames[0] if "super" in code.co_names and "__class__" in code.co_freevars \
        and code.co_argcount else None
    effects = []
    for inst in instructions:
        uses, defs = _uses_defs(inst)
        if implicit_self is not None and inst.argval == "super" and dis.opmap[inst.opname] in dis.hasname:
            uses += (implicit_self,)
        effects.append((frozenset(uses) - frees, frozenset(defs)))
    live: List[FrozenSet[str]] = [frozenset()] * len(instructions)
    changed = True
    while changed:  # round-robin backwards: converges in a few passes for structured code
        changed = False
        for i in range(len(instructions) - 1, -1, -1):
            uses, defs = effects[i]
            out: Set[str] = set()
            for s in normal[i]:
                out |= live[s]
            new = set(uses) | (out - defs)
            # An instruction that raises has not written yet: the handler sees the old binding.
            for s in raising[i]:
                new |= live[s]
            frozen = frozenset(new)
            if frozen != live[i]:
                live[i] = frozen
                changed = True
    return live


def in_loop(code: types.CodeType, instructions: Sequence[Instruction], index: int) -> Optional[Instruction]:
    """The backward jump of a loop the instruction at ``index`` is on, if any: a jump back to
    at or before ``index`` that ``index`` can reach, from a target that reaches ``index``
    (3.12+ places exception cleanup after the code and jumps back from it: not a loop)."""
    position = {id(inst): i for i, inst in enumerate(instructions)}
    ahead = None
    for j in range(index, len(instructions)):
        target = instructions[j].target
        t = position.get(id(target), j + 1) if target is not None else j + 1
        if t > index:
            continue
        if ahead is None:
            ahead = reachable(code, index)
        if j in ahead and index in reachable(code, t):
            return instructions[j]
    return None
