"""Which stack slots the plain frame holds as references borrowed from its locals.

From 3.14 (the table fact ``borrowed_local_load``) CPython pushes a local with
LOAD_FAST_BORROW where the local keeps the value alive until the slot is
consumed: the slot adds nothing to the object's reference count.  A break stub
restores its stack from parameters, each an owned reference, so a native
instruction at a break would see one reference more than the plain frame
shows it (``ndarray.resize``'s check refuses then).  The translator therefore
follows, instruction by instruction, the slots a borrowed load made, and the
break's stub pushes those from the local again (opcode_tables.resume.BorrowedSlot);
so does the continuation, for those the breaking instruction leaves on the stack
(compiler.graph_break).

The same holds one level up, for the frame's parameters: a caller that keeps its
argument in a local pushes it borrowed, and the plain frame's parameter holds no
reference of its own.  A parameter (``pinned_parameters``) therefore never goes
through the compiler's lists: the compiled function's wrapper hands it, pushed
from its own parameter, to the stages of the frame (compiler.resume.pinned_runner)
-- kept and lent to every stage where the code never rebinds it, moved on
(``moved_parameters``) where it may, so that the rebinding frees what the plain
frame owned.

A slot stays borrowed while the instructions leave it alone: any instruction
that pops it (the translator's pops say how deep each one went) ends it,
except the few that move a reference as it is (COPY, SWAP, and a method load,
which moves its operand into the self slot of its [method, self] pair).
"""
from __future__ import annotations

from dataclasses import dataclass
import types
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

import numpy as np

import opcode_tables
from opcode_tables.instruction import Instruction
from opcode_tables.liveness import reads_frame, written_locals
from opcode_tables.resume import BorrowedSlot

from .variables.array import ArrayMethodVariable
from .variables.base import NULL, VariableTracker
from .variables.lazy import LazyArgument

if TYPE_CHECKING:
    from .tracer import InstructionTranslatorBase


@dataclass(frozen=True)
class _Borrow:
    local: str
    value: VariableTracker          # the local's tracker when the slot was pushed
    method: Optional[str] = None    # the slot is the method of a [method, NULL] pair on value


def _method_pair_of(value: VariableTracker, owner: VariableTracker) -> bool:
    """Whether ``value`` (pushed with a NULL above it) is a method the plain frame's LOAD_ATTR
    found on the type of ``owner`` without running code, so that running that load again in
    a stub pushes the same [method, self] pair: a method of a plain ndarray (only those are
    traced; its type's attribute lookup is NumPy's C code)."""
    # (A loop's continuation holds its argument lazily: the method is the realized one's.)
    receiver = owner.realized_tracker if isinstance(owner, LazyArgument) else owner
    return (isinstance(value, ArrayMethodVariable) and receiver is not None and value.array is receiver
            and value.array.python_type() is np.ndarray)


class BorrowedSlots:
    """The borrowed slots of one translator's stack, by slot index (bottom = 0)."""

    def __init__(self, load_op: str) -> None:
        self.load_op = load_op
        self.slots: Dict[int, _Borrow] = {}

    def after(self, tx: "InstructionTranslatorBase", inst: Instruction, depth: int, low: int) -> None:
        """Update for ``inst``, which ran from a stack of ``depth`` slots and popped down to
        ``low`` at its lowest."""
        stack = tx.stack
        before = self.slots
        kept = {i: b for i, b in before.items() if i < min(low, len(stack))}
        opname = inst.opname
        if opname == self.load_op:
            value = stack[-1]
            if tx.locals.get(inst.argval) is value:
                kept[len(stack) - 1] = _Borrow(inst.argval, value)
        elif opname == "COPY" and len(stack) == depth + 1 and depth - inst.argval in kept:
            kept[depth] = kept[depth - inst.argval]
        elif opname == "SWAP" and len(stack) == depth:
            top, other = depth - 1, depth - inst.argval
            moved = {i: kept.pop(j) for i, j in ((top, other), (other, top)) if j in kept}
            kept.update(moved)
        elif opname == "LOAD_ATTR" and inst.is_method and len(stack) == depth + 1 and depth - 1 in before:
            owner = before[depth - 1]
            method, self_slot = stack[depth - 1], stack[depth]
            if self_slot is owner.value:
                kept[depth] = owner
            elif self_slot is NULL and _method_pair_of(method, owner.value):
                kept[depth - 1] = _Borrow(owner.local, owner.value, inst.argval)
        self.slots = kept

    def drop_from(self, depth: int) -> None:
        """The stack was cut to ``depth`` slots outside an instruction (an exception's unwind)."""
        self.slots = {i: b for i, b in self.slots.items() if i < depth}

    def at_break(self, tx: "InstructionTranslatorBase", live: Tuple[str, ...],
                 keep_top: bool) -> Tuple[Optional[BorrowedSlot], ...]:
        """Per slot of the stack at a break, how the stub pushes it where the plain frame
        borrowed it (None: from a parameter).  Only slots whose local still holds the value
        and is handed to the stub qualify; ``keep_top`` leaves the top slot a parameter."""
        stack = tx.stack
        out: List[Optional[BorrowedSlot]] = [None] * len(stack)
        for i, borrow in self.slots.items():
            if i >= len(stack) or (keep_top and i == len(stack) - 1):
                continue
            if borrow.local not in live or tx.locals.get(borrow.local) is not borrow.value:
                continue
            if borrow.method is None and stack[i] is borrow.value:
                out[i] = BorrowedSlot(borrow.local)
            elif borrow.method is not None and i + 1 < len(stack) and stack[i + 1] is NULL \
                    and _method_pair_of(stack[i], borrow.value):
                out[i] = BorrowedSlot(borrow.local, borrow.method)
        return tuple(out)


# Code flags of functions whose frames outlive the call (generators, coroutines: a frame that
# moves to the heap owns its locals, so the plain frame borrows nothing either).
_NOT_PINNABLE_FLAGS = 0x20 | 0x80 | 0x100 | 0x200


def pinned_parameters(fn: types.FunctionType) -> Tuple[str, ...]:
    """The parameters of ``fn`` its compiled wrapper hands to each stage itself (see the
    module doc): from 3.14 (``borrowed_local_load``), for a function whose frame does not
    read its locals wholesale, the positional and keyword-only parameters (``*args`` and
    ``**kwargs`` come packed in a new tuple and dict, owned as in the plain frame) that are
    not cells
    and that no instruction rebinds, deletes or clears -- and, where the table can move a
    reference (``moving_local_load``), those it does rebind too (``moved_parameters``).
    Empty elsewhere."""
    code = fn.__code__
    table = opcode_tables.current_table()
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    if table.fact("borrowed_local_load") is None or code.co_flags & _NOT_PINNABLE_FLAGS \
            or reads_frame(code) or not all(name.isidentifier() for name in names[code.co_argcount:]):
        return ()   # (a keyword-only name that is no identifier cannot be passed as a keyword)
    written = written_locals(code)
    can_move = table.fact("moving_local_load") is not None
    return tuple(name for name in names
                 if name not in code.co_cellvars and (can_move or name not in written))


def moved_parameters(fn: types.FunctionType) -> Tuple[str, ...]:
    """Those of ``pinned_parameters(fn)`` that some instruction of ``fn`` rebinds, deletes or
    clears.  The wrapper cannot keep such a parameter while the stages run (the plain
    frame's rebinding frees it): it moves its reference into the stage runner, which lends
    it to the stages that cannot rebind it and moves it into the first one that may
    (compiler.resume.pinned_runner)."""
    written = written_locals(fn.__code__)
    return tuple(name for name in pinned_parameters(fn) if name in written)
