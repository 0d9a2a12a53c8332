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
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from .instruction import Instruction
from .spec import VersionTable

# A depth this large means the analysis found a loop that grows the stack:
# the instructions are inconsistent, not merely deep.
_DEPTH_LIMIT = 1 << 20


class FlowNode(NamedTuple):
    """One instruction as the analysis sees it."""

    opname: str
    arg: Optional[int]
    target: Optional[int]                      # index of the jump target
    handler: Optional[Tuple[int, int, bool]]   # (handler index, depth, lasti), 3.11+


class StackDepthError(ValueError):
    """The instructions cannot be given a consistent stack depth."""


@lru_cache(maxsize=None)
def _effect(opcode: int, arg: Optional[int], jump: bool) -> int:
    oparg = arg if opcode >= dis.HAVE_ARGUMENT else None
    return dis.stack_effect(opcode, oparg, jump=jump)


def _fall_effects(nodes: Sequence[FlowNode], table: VersionTable) -> List[int]:
    # Where dis.stack_effect understates what an instruction leaves on the stack.
    overrides: Dict[str, int] = table.fact("stack_effect_overrides")
    opmap = dis.opmap
    effects = []
    for node in nodes:
        effect = overrides.get(node.opname)
        effects.append(_effect(opmap[node.opname], node.arg, False) if effect is None else effect)
    return effects


def max_stack_depth(nodes: Sequence[FlowNode], table: VersionTable) -> int:
    """The deepest stack any path through ``nodes`` reaches, starting empty at index 0."""
    if not nodes:
        return 0
    specs = table.opcodes
    fall = _fall_effects(nodes, table)
    count = len(nodes)
    depth_at: List[int] = [-1] * count
    pending: List[Tuple[int, int]] = [(0, 0)]
    deepest = 0
    while pending:
        index, depth = pending.pop()
        while index < count and depth_at[index] < depth:
            depth_at[index] = depth
            node = nodes[index]
            if node.handler is not None:
                handler_index, handler_depth, lasti = node.handler
                entry = handler_depth + 1 + int(lasti)
                if entry > deepest:
                    deepest = entry
                pending.append((handler_index, entry))
            after = depth + fall[index]
            if after > deepest:
                if after > _DEPTH_LIMIT:
                    raise StackDepthError(f"stack grows without bound around instruction {index} ({node.opname})")
                deepest = after
            spec = specs[node.opname]
            if spec.jump is not None:
                if node.target is None:
                    raise StackDepthError(f"jump instruction {index} ({node.opname}) has no target")
                branched = depth + _effect(dis.opmap[node.opname], node.arg, True)
                if branched > deepest:
                    deepest = branched
                pending.append((node.target, branched))
            if spec.flow != "next":
                break
            depth = after
            index += 1
    # Underflow is judged on the final (deepest) entry depths only: like CPython,
    # a path that enters an instruction shallower than another path does may dip
    # below zero on the way (3.8's CALL_FINALLY into a finally body that
    # SETUP_FINALLY also enters).
    for index, depth in enumerate(depth_at):
        if depth >= 0 and depth + fall[index] < 0:
            raise StackDepthError(f"stack underflow after instruction {index} ({nodes[index].opname}): "
                                  f"entered at depth {depth}, effect {fall[index]}")
    return deepest


def nodes_from_instructions(instructions: List[Instruction],
                            args: Optional[List[Optional[int]]] = None,
                            opnames: Optional[List[str]] = None) -> List[FlowNode]:
    """FlowNodes for decoded or assembled instructions (``args``/``opnames`` override the instructions')."""
    index_of: Dict[int, int] = {id(inst): i for i, inst in enumerate(instructions)}

    def index(target: Instruction, what: str, at: int) -> int:
        try:
            return index_of[id(target)]
        except KeyError:
            raise StackDepthError(
                f"instruction {at} ({instructions[at].opname}): its {what} is not in the instruction list") from None

    nodes = []
    for i, inst in enumerate(instructions):
        target = index(inst.target, "jump target", i) if inst.target is not None else None
        handler = None
        if inst.exc is not None:
            handler = (index(inst.exc.target, "exception handler", i), inst.exc.depth, inst.exc.lasti)
        arg = args[i] if args is not None else inst.arg
        nodes.append(FlowNode(opnames[i] if opnames is not None else inst.opname, arg, target, handler))
    return nodes


def stack_size(instructions: List[Instruction], table: VersionTable,
               args: Optional[List[Optional[int]]] = None) -> int:
    """``co_stacksize`` for these instructions."""
    return max_stack_depth(nodes_from_instructions(instructions, args), table)
