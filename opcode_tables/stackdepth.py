"""``co_stacksize`` by flow analysis over version-neutral instructions.

Follows what CPython's compiler does: every reachable instruction is visited
with the depth it is entered at; ``dis.stack_effect`` gives the depth after
it when it falls through and (for jumps) when it branches; 3.8-3.10 block
setups are jumps whose branch effect is the handler's entry depth; 3.11+
exception-table handlers are entered at the entry's depth + 1 (+ 1 more when
``lasti`` is pushed).  The result is the deepest depth on any path.
"""
from __future__ import annotations

import dis
from functools import lru_cache
from typing import Dict, List, Optional, Tuple

from .instruction import Instruction
from .spec import VersionTable

# A depth this large means the analysis found a loop that grows the stack:
# the instructions are inconsistent, not merely deep.
_DEPTH_LIMIT = 1 << 20


class StackDepthError(ValueError):
    """The instructions cannot be given a consistent stack depth."""


@lru_cache(maxsize=None)
def _effect(opcode: int, arg: Optional[int], jump: bool) -> int:
    oparg = arg if opcode >= dis.HAVE_ARGUMENT else None
    return dis.stack_effect(opcode, oparg, jump=jump)


def stack_effect(inst: Instruction, table: VersionTable, jump: bool = False) -> int:
    """The stack effect of ``inst`` as sizing counts it (the table's overrides first); for a
    jump, along the branch (``jump``) or the fall-through."""
    overrides: Dict[str, int] = table.fact("stack_effect_overrides")
    if inst.opname in overrides:
        return overrides[inst.opname]
    return _effect(dis.opmap[inst.opname], inst.arg, jump and inst.target is not None)


class _Flow:
    """Per instruction: stack effect when falling through, whether it can, its branch and handler."""

    def __init__(self, instructions: List[Instruction], table: VersionTable,
                 args: Optional[List[Optional[int]]], opnames: Optional[List[str]]) -> None:
        index_of: Dict[int, int] = {id(inst): i for i, inst in enumerate(instructions)}

        def index(target: Instruction, what: str, at: int) -> int:
            found = index_of.get(id(target))
            if found is None:
                raise StackDepthError(
                    f"instruction {at} ({instructions[at].opname}): its {what} is not in the instruction list")
            return found

        # Where dis.stack_effect understates what an instruction leaves on the stack.
        overrides: Dict[str, int] = table.fact("stack_effect_overrides")
        specs, opmap = table.opcodes, dis.opmap
        self.names = opnames if opnames is not None else [inst.opname for inst in instructions]
        self.fall: List[int] = []
        self.stops: List[bool] = []
        self.branch: Dict[int, Tuple[int, int]] = {}    # index -> (target index, depth change)
        self.handler: Dict[int, Tuple[int, int]] = {}   # index -> (handler index, entry depth)
        for i, inst in enumerate(instructions):
            name = self.names[i]
            spec = specs[name]
            arg = args[i] if args is not None else inst.arg
            effect = overrides.get(name)
            self.fall.append(_effect(opmap[name], arg, False) if effect is None else effect)
            self.stops.append(spec.flow != "next")
            if spec.jump is not None:
                if inst.target is None:
                    raise StackDepthError(f"jump instruction {i} ({name}) has no target")
                self.branch[i] = (index(inst.target, "jump target", i), _effect(opmap[name], arg, True))
            if inst.exc is not None:
                self.handler[i] = (index(inst.exc.target, "exception handler", i),
                                   inst.exc.depth + 1 + int(inst.exc.lasti))


def _walk(flow: _Flow) -> Tuple[int, List[int]]:
    """(the deepest depth any path reaches, the depth each instruction is entered at; -1 where
    no path from the start reaches it)."""
    count = len(flow.fall)
    fall, stops, branch, handler = flow.fall, flow.stops, flow.branch, flow.handler
    depth_at: List[int] = [-1] * count
    pending: List[Tuple[int, int]] = [(0, 0)] if count else []
    deepest = 0
    while pending:
        index, depth = pending.pop()
        while index < count and depth_at[index] < depth:
            depth_at[index] = depth
            if index in handler:
                handler_index, entry = handler[index]
                deepest = max(deepest, entry)
                pending.append((handler_index, entry))
            after = depth + fall[index]
            if after > deepest:
                if after > _DEPTH_LIMIT:
                    raise StackDepthError(f"stack grows without bound around instruction {index} "
                                          f"({flow.names[index]})")
                deepest = after
            if index in branch:
                target, change = branch[index]
                deepest = max(deepest, depth + change)
                pending.append((target, depth + change))
            if stops[index]:
                break
            depth = after
            index += 1
    # Underflow is judged on the final (deepest) entry depths only: like CPython,
    # a path that enters an instruction shallower than another path does may dip
    # below zero on the way (3.8's CALL_FINALLY into a finally body that
    # SETUP_FINALLY also enters).
    for index, depth in enumerate(depth_at):
        if depth >= 0 and depth + fall[index] < 0:
            raise StackDepthError(f"stack underflow after instruction {index} ({flow.names[index]}): "
                                  f"entered at depth {depth}, effect {fall[index]}")
    return deepest, depth_at


def stack_size(instructions: List[Instruction], table: VersionTable,
               args: Optional[List[Optional[int]]] = None, opnames: Optional[List[str]] = None) -> int:
    """``co_stacksize`` for these instructions: the deepest stack any path reaches from an empty one.

    ``args`` / ``opnames`` replace the instructions' own (the assembler passes
    the arguments and jump directions it settled on).
    """
    return _walk(_Flow(instructions, table, args, opnames))[0]


def entry_depths(instructions: List[Instruction], table: VersionTable) -> List[int]:
    """The stack depth each instruction is entered at (the deepest over the paths reaching
    it), -1 where none does: what a reader of the bytecode (opcode_tables.decompile) needs
    to name the stack slots a jump hands over."""
    return _walk(_Flow(instructions, table, None, None))[1]
