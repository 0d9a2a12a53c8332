"""Continuation ("resume") functions and break stubs, built from a function's own bytecode.

At a graph break the compiled code runs the breaking instruction natively and
then continues in a *continuation*: a new code object whose body is the
original function's instructions, entered through a prologue that rebuilds
the value stack from parameters (NULL slots re-created the way the running
interpreter's call sequence needs them), re-enters 3.8-3.10 try/with blocks
and jumps to the resume point.  A *stub* is the same thing stopped right after
one instruction: it runs that instruction natively and hands the resulting
stack and live locals to a ``packer`` callable instead of continuing.

Everything per-version comes from the running table's facts
(``frame_prologue``, ``call_null_layout``, ``exception_table``) and from
``dis.haslocal`` / ``dis.hasfree``; there is no version check here.
"""
from __future__ import annotations

import dis
import inspect
import types
import weakref
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from .assemble import assemble
from .decode import decode, decode_cached
from .factories import body_start, create_call_function
from .instruction import ExcHandler, Instruction, create_instruction, point_at_copies
from .identity_map import IdentityWeakMap
from .liveness import live_locals, loads_maybe_unbound, reachable
from .spec import VersionTable

# Every code object built here (stubs and continuations), so that a tracer never treats one as
# a user function: such code runs only as the compiler calls it.
_generated: "weakref.WeakSet[types.CodeType]" = weakref.WeakSet()


def is_generated_code(code: types.CodeType) -> bool:
    """Whether ``code`` was built by this module (a break stub or a continuation)."""
    return code in _generated

__all__ = ["BorrowedSlot", "NullCarrier", "ResumeExit", "ResumeCode", "build_resume_code", "stack_restorable", "Origin",
           "origin_of", "register_origin", "boxed_code", "boxed_variant_of"]

# Opcodes whose argument names a fast local, a cell or a free variable: their
# index changes when the parameters are reordered, so the assembler re-derives it.
_NAMED_SLOT_OPCODES = frozenset(dis.haslocal) | frozenset(dis.hasfree)
# Flags a continuation must not carry: it takes exactly its positional parameters.
_CLEARED_FLAGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR \
    | inspect.CO_ITERABLE_COROUTINE


class NullCarrier:
    """Re-creates a 3.8-3.10 LOAD_METHOD pair [NULL, callable].

    ``LOAD_METHOD value`` on an instance finds a plain slot, not a method, so
    it pushes NULL and the slot's value: exactly the pair LOAD_METHOD pushed
    for a module attribute in the original frame.
    """

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


@dataclass(frozen=True)
class BorrowedSlot:
    """A stack slot the original frame holds as a reference borrowed from the local ``local``
    (the table's ``borrowed_local_load``): the stub pushes it with that load, taking no
    parameter for it, so that the breaking instruction sees the reference count the plain
    frame shows it.  With ``method``, the slot and the NULL above it are the [method, self]
    pair ``LOAD_ATTR method`` made of the borrowed local; the stub runs that load again
    (only for receivers whose method lookup runs no code: the tracer decides)."""

    local: str
    method: Optional[str] = None


@dataclass(frozen=True)
class ResumeExit:
    """One way out of a stub: what ``packer`` receives on that path."""

    branch: int                      # passed as first argument to the packer
    stack_nulls: Tuple[bool, ...]    # stack right after the break instruction, bottom first (True = NULL)
    live: Tuple[str, ...]            # local (or cell) names passed after the stack values
    # Per slot: left on the stack borrowed from a live local (BorrowedSlot without a method):
    # not passed; the continuation pushes it from that local as the plain frame holds it.
    borrowed: Tuple[Optional[BorrowedSlot], ...] = ()


@dataclass
class ResumeCode:
    """A generated continuation or stub and how it maps back to the original code."""

    code: types.CodeType
    params: List[str]
    stack_params: List[str]
    # index into the generated instruction list -> index into the original's; absent = inserted
    _origin: Dict[int, int] = field(default_factory=dict, repr=False)
    # Locals the prologue pushes onto the stack (borrowed slots): read there, whatever follows.
    stack_locals: Tuple[str, ...] = ()

    def original_index(self, index: int) -> Optional[int]:
        """Index into instructions_of(self.code) -> index into instructions_of(original), None if inserted."""
        return self._origin.get(index)


class Origin:
    """Where a generated continuation's code object came from: the original code, its
    ``ResumeCode`` (the index map back to the original), the original function's qualname
    and where it resumes.  The tracer reads it to trace a continuation as part of the
    original frame; a break inside a continuation maps back through it."""

    def __init__(self, code: types.CodeType, resume_code: ResumeCode, qualname: str,
                 resume_index: int = -1) -> None:
        self.code = code                  # the original (user) code object
        self.resume_code = resume_code
        self.qualname = qualname          # the original function's qualname
        self.resume_index = resume_index  # where the continuation resumes, in the original code


# generated code object -> Origin, by identity (code objects compare equal by value: another
# function's equal continuation has an Origin of its own); weak: a dropped continuation frees
# its code
_ORIGINS: "IdentityWeakMap[types.CodeType, Origin]" = IdentityWeakMap()


def origin_of(code: types.CodeType) -> Optional[Origin]:
    """The Origin of a generated continuation's code; None for any other code object."""
    return _ORIGINS.get(code)


def register_origin(code: types.CodeType, origin: Origin) -> None:
    _ORIGINS[code] = origin


def _current_table() -> VersionTable:
    from . import current_table
    return current_table()


def _fresh_name(stem: str, taken: Set[str]) -> str:
    name = stem
    while name in taken:
        name = "_" + name
    taken.add(name)
    return name


def _copy_body(original: List[Instruction]) -> List[Instruction]:
    """Fresh copies with jump targets and handlers pointing at the copies (the cached decode stays intact)."""
    copies = [inst.copy() for inst in original]
    point_at_copies(copies, {id(inst): copy for inst, copy in zip(original, copies)})
    for copy in copies:
        if dis.opmap[copy.opname] in _NAMED_SLOT_OPCODES:
            copy.arg = None
    return copies


def _check_unpassed_loads(body: List[Instruction], unpassed: Set[str], start: int, params: Sequence[str],
                          table: VersionTable) -> None:
    """Loads of names the continuation may read but was not given become checked loads, where
    a path from ``start`` (entered with ``params`` bound) may reach them unbound.

    CPython 3.12+ emits an unchecked LOAD_FAST where the original frame had the
    name bound on every path; entered mid-way without it, that load would push
    NULL (a crash) instead of raising UnboundLocalError.  Where every path from the
    entry binds the name first, the original load stays: from 3.14 it may be a
    borrowed one (LOAD_FAST_BORROW), and a checked load would take a reference of its
    own that native code at the call it feeds can count.
    """
    if not unpassed or "LOAD_FAST_CHECK" not in table:
        return
    unchecked = table.fact("unchecked_local_loads")
    candidates = frozenset(unpassed)
    risky = loads_maybe_unbound(body, start, frozenset(params), candidates, table)
    for i, inst in enumerate(body):
        if i in risky and inst.opname in unchecked:
            inst.opname = "LOAD_FAST_CHECK"


def _zero_argument_super_after(code: types.CodeType, instructions: List[Instruction], index: int) -> bool:
    """Whether ``super()`` without arguments may run from ``index`` on: it takes ``self`` from local 0."""
    if not ("super" in code.co_names and "__class__" in code.co_freevars and code.co_argcount > 0):
        return False
    return any(instructions[i].argval == "super" and dis.opmap[instructions[i].opname] in dis.hasname
               for i in reachable(code, index))


def _check_zero_argument_super(code: types.CodeType, instructions: List[Instruction], index: int,
                               params: List[str]) -> None:
    first = code.co_varnames[0] if code.co_argcount else None
    if (not params or params[0] != first) and _zero_argument_super_after(code, instructions, index):
        raise ValueError(
            f"{code.co_name} calls super() without arguments, which takes self from the first local; "
            f"the continuation's first parameter would be {params[0] if params else 'nothing'!s}, not {first!r}. "
            f"Resume with an empty stack and {first!r} first among the live names, or run the rest natively")


def _check_index(what: str, index: int, count: int) -> None:
    if not 0 <= index < count:
        raise ValueError(f"{what}={index} is outside the {count} instructions of the code "
                         "(indexes are into opcode_tables.decode.instructions_of(code))")


def _load_local(name: str, cells: Set[str], table: VersionTable) -> Instruction:
    """Push a live variable; where LOAD_FAST trusts the compiler, use the checking form."""
    if name in cells:
        return create_instruction("LOAD_DEREF", argval=name)
    opname = "LOAD_FAST_CHECK" if "LOAD_FAST_CHECK" in table else "LOAD_FAST"
    return create_instruction(opname, argval=name)


def stack_restorable(stack_nulls: Sequence[bool], table: VersionTable) -> bool:
    """Whether a continuation or stub can push back a stack of this NULL layout: always where
    the interpreter has PUSH_NULL; before, only NULLs directly below a callable (the pair
    LOAD_METHOD pushes) can be re-created (see _restore_stack)."""
    if "PUSH_NULL" in table:
        return True
    slot = 0
    while slot < len(stack_nulls):
        if stack_nulls[slot]:
            if slot + 1 >= len(stack_nulls) or stack_nulls[slot + 1]:
                return False
            slot += 1
        slot += 1
    return True


def _restore_stack(stack_nulls: Sequence[bool], stack_params: List[str],
                   blocks: Sequence[Tuple[int, int]], body: List[Instruction],
                   table: VersionTable, borrowed: Sequence[Optional[BorrowedSlot]] = ()) -> List[Instruction]:
    """Push the saved stack back, bottom first, re-entering each block at its depth; a
    borrowed slot (``borrowed``, by slot) is pushed from its local as the original frame
    pushed it, not from a parameter."""
    has_push_null = "PUSH_NULL" in table
    pending_blocks = sorted(blocks, key=lambda b: b[1])
    if [b[1] for b in pending_blocks] != [b[1] for b in blocks]:
        raise ValueError(f"blocks must be given outermost first (non-decreasing depth), got {list(blocks)}")
    out: List[Instruction] = []
    depth = 0
    params = iter(stack_params)

    def enter_blocks() -> None:
        while pending_blocks and pending_blocks[0][1] == depth:
            handler, _ = pending_blocks.pop(0)
            out.append(create_instruction("SETUP_FINALLY", target=body[handler]))

    slot = 0
    while slot < len(stack_nulls):
        enter_blocks()
        borrow = borrowed[slot] if slot < len(borrowed) else None
        if borrow is not None:
            out.append(create_instruction(table.fact("borrowed_local_load"), argval=borrow.local))
            if borrow.method is None:
                slot, depth = slot + 1, depth + 1
                continue
            out.append(create_instruction("LOAD_ATTR", argval=borrow.method, is_method=True))
            slot, depth = slot + 2, depth + 2
        elif not stack_nulls[slot]:
            out.append(create_instruction("LOAD_FAST", argval=next(params)))
            slot, depth = slot + 1, depth + 1
        elif has_push_null:
            out.append(create_instruction("PUSH_NULL"))
            slot, depth = slot + 1, depth + 1
        else:
            # No PUSH_NULL: the only NULL is LOAD_METHOD's, directly below its callable.
            if slot + 1 >= len(stack_nulls) or stack_nulls[slot + 1]:
                raise ValueError(
                    f"stack slot {slot} is NULL but is not followed by a non-NULL slot (layout "
                    f"{list(stack_nulls)}); on CPython {table.version[0]}.{table.version[1]} a NULL can only "
                    "be rebuilt as the [NULL, callable] pair of LOAD_METHOD")
            if any(b[1] == depth + 1 for b in pending_blocks):
                raise ValueError(f"a block starts between the NULL slot {slot} and its callable; "
                                 "cannot re-enter it there")
            out.extend([
                create_instruction("LOAD_CONST", argval=NullCarrier),
                create_instruction("LOAD_FAST", argval=next(params)),
                create_instruction("CALL_FUNCTION", arg=1),
                create_instruction("LOAD_METHOD", argval="value"),
            ])
            slot, depth = slot + 2, depth + 2
    enter_blocks()
    if pending_blocks:
        raise ValueError(f"blocks {pending_blocks} are deeper than the restored stack "
                         f"({len(stack_nulls)} slots)")
    return out


def _exit_code(exit: ResumeExit, temps: List[str], block_count: int, packer: Any,
               cells: Set[str], table: VersionTable, handler: Optional[ExcHandler] = None,
               saved: Tuple[str, str] = ("", "")) -> List[Instruction]:
    """Save the stack, leave the blocks, ``return packer(branch, *stack, *live)``.

    ``handler`` (3.11+) is the exception handler covering the point where the exit's path goes
    on in the original code.  It also covers the packer call: an exception raised there (an
    interrupt the breaking instruction left pending, which the interpreter raises at the
    next call: CPython 3.15's test_with.InterruptDuringEnter, where a with block's __exit__
    must still run) meets the handlers the plain frame has at that point, through a landing
    that puts back the stack the handler expects (``saved``: two free local names)."""
    out: List[Instruction] = []
    count = len(exit.stack_nulls)
    for slot in reversed(range(count)):
        out.append(create_instruction("STORE_FAST", argval=temps[slot]))
    # Up to 3.10 the blocks stay entered across the packer call, over the stack they were set up
    # on (pushed back, then popped once the call returned), for the same reason.  A NULL slot
    # cannot be pushed back there (no PUSH_NULL): the blocks are left before the call.
    blocks_across_call = block_count and not table.fact("exception_table") and not any(exit.stack_nulls)
    if blocks_across_call:
        out.extend(_load_local(temps[slot], cells, table) for slot in range(count))
    else:
        out.extend(create_instruction("POP_BLOCK") for _ in range(block_count))
    out.append(create_instruction("LOAD_CONST", argval=packer))
    out.append(create_instruction("LOAD_CONST", argval=exit.branch))
    values = [temps[slot] for slot in range(count) if not exit.stack_nulls[slot]
              and (slot >= len(exit.borrowed) or exit.borrowed[slot] is None)]
    # Checked loads: a slot wrongly declared non-NULL raises instead of pushing NULL.
    out.extend(_load_local(name, cells, table) for name in values)
    out.extend(_load_local(name, cells, table) for name in exit.live)
    call = create_call_function(1 + len(values) + len(exit.live), push_null=True, table=table)
    out.extend(call)
    if blocks_across_call:
        out.append(create_instruction("STORE_FAST", argval=saved[0]))
        out.extend(create_instruction("POP_TOP") for _ in range(count))
        out.extend(create_instruction("POP_BLOCK") for _ in range(block_count))
        out.append(create_instruction("LOAD_FAST", argval=saved[0]))
    out.append(create_instruction("RETURN_VALUE"))
    if handler is not None and handler.depth <= count:
        landing = _handler_landing(exit.stack_nulls, temps, handler, saved, cells, table)
        cover = ExcHandler(target=landing[0], depth=0, lasti=handler.lasti)
        for inst in call:
            inst.exc = cover
        out.extend(landing)
    return out


def _handler_landing(stack_nulls: Sequence[bool], temps: List[str], handler: ExcHandler,
                     saved: Tuple[str, str], cells: Set[str], table: VersionTable) -> List[Instruction]:
    """Where an exception raised by an exit's packer call lands (the stack is empty there, so
    the interpreter pushed only [lasti,] exc): push back the bottom ``handler.depth`` stack
    slots the exit saved, then [lasti,] exc, and jump to ``handler``'s code.  The saved
    exception is deleted before the jump: a local holding it would hold the frame through
    its traceback (a cycle)."""
    exc_name, lasti_name = saved
    out = [create_instruction("STORE_FAST", argval=exc_name)]
    if handler.lasti:
        out.append(create_instruction("STORE_FAST", argval=lasti_name))
    for slot in range(handler.depth):
        out.append(create_instruction("PUSH_NULL") if stack_nulls[slot] else _load_local(temps[slot], cells, table))
    if handler.lasti:
        out.append(create_instruction("LOAD_FAST", argval=lasti_name))
        out.append(create_instruction("DELETE_FAST", argval=lasti_name))
    out.append(create_instruction("LOAD_FAST", argval=exc_name))
    out.append(create_instruction("DELETE_FAST", argval=exc_name))
    out.append(create_instruction("JUMP_FORWARD", target=handler.target))
    return out


def _validate(code: types.CodeType, count: int, resume_index: int, live: Sequence[str],
              blocks: Sequence[Tuple[int, int]], break_index: Optional[int], exits: Sequence[ResumeExit],
              packer: Any, table: VersionTable) -> None:
    """Refuse requests that cannot describe a frame of ``code``, saying what is wrong."""
    if code.co_flags & _GENERATOR_FLAGS:
        raise ValueError(f"{code.co_name}: continuations of generator/coroutine code are not supported "
                         "(the frame cannot be re-entered mid-way)")
    _check_index("resume_index", resume_index, count)
    if blocks and table.fact("exception_table"):
        raise ValueError("blocks are a 3.8-3.10 notion; on this interpreter exception handling follows "
                         "the instructions' exception table, pass blocks=()")
    for handler, _depth in blocks:
        _check_index("block handler index", handler, count)
    if break_index is None:
        if exits:
            raise ValueError("exits need break_index (they describe what follows the break instruction)")
    else:
        _check_index("break_index", break_index, count)
        if break_index < resume_index:
            raise ValueError(f"break_index={break_index} comes before resume_index={resume_index}")
        if exits and packer is None:
            raise ValueError("exits need a packer to call")
    freevars = set(code.co_freevars)
    known = set(code.co_varnames) | set(code.co_cellvars)
    for local in live:
        if local in freevars:
            raise ValueError(f"live name {local!r} is a free variable: it comes from the closure, "
                             "not from a parameter")
        if local not in known:
            raise ValueError(f"live name {local!r} is neither a local nor a cell of {code.co_name}")
    if len(set(live)) != len(live):
        raise ValueError(f"live names repeat: {list(live)}")
    for exit in exits:
        unknown = [n for n in exit.live if n not in known and n not in freevars]
        if unknown:
            raise ValueError(f"exit {exit.branch}: live names {unknown} are not variables of {code.co_name}")
        _check_borrowed(exit.borrowed, exit.stack_nulls, exit.live, table)
        if any(b is not None and b.method is not None for b in exit.borrowed):
            raise ValueError(f"exit {exit.branch}: a method pair cannot be handed on (its layout is "
                             "the interpreter's [method, self], not the exit's)")


def _check_borrowed(borrowed: Sequence[Optional[BorrowedSlot]], stack_nulls: Sequence[bool],
                    live: Sequence[str], table: VersionTable) -> None:
    """Refuse borrowed slots the prologue cannot push as described."""
    if not any(b is not None for b in borrowed):
        return
    if table.fact("borrowed_local_load") is None:
        raise ValueError("borrowed slots need a borrowed load (the table fact borrowed_local_load)")
    if len(borrowed) > len(stack_nulls):
        raise ValueError(f"{len(borrowed)} borrowed entries for {len(stack_nulls)} stack slots")
    for slot, borrow in enumerate(borrowed):
        if borrow is None:
            continue
        if stack_nulls[slot]:
            raise ValueError(f"stack slot {slot} is NULL; it cannot be borrowed")
        if borrow.local not in live:
            raise ValueError(f"stack slot {slot} borrows {borrow.local!r}, which is not a live local")
        if borrow.method is not None and not (slot + 1 < len(stack_nulls) and stack_nulls[slot + 1]):
            raise ValueError(f"stack slot {slot} is a method pair but no NULL slot follows it")


def build_resume_code(code: types.CodeType, *,
                      resume_index: int,
                      stack_nulls: Sequence[bool],
                      live: Sequence[str],
                      blocks: Sequence[Tuple[int, int]] = (),
                      name: str,
                      qualname: str,
                      break_index: Optional[int] = None,
                      exits: Sequence[ResumeExit] = (),
                      packer: Any = None,
                      borrowed: Sequence[Optional[BorrowedSlot]] = ()) -> ResumeCode:
    """A continuation of ``code`` at ``resume_index`` (or, with ``break_index``, a stub).

    Parameters are one per non-NULL slot of ``stack_nulls`` (bottom first)
    followed by ``live``.  ``blocks`` (3.8-3.10 only) are the active
    SETUP_FINALLY/SETUP_WITH blocks as (handler index, block stack level),
    outermost first.  In stub mode the instruction at ``break_index`` runs
    natively; then each exit returns ``packer(branch, *stack values, *live)``
    (``exits[0]`` on fall-through, ``exits[1]`` when a conditional jump is
    taken); with no exits the rest of the function runs natively.  ``borrowed``
    (by slot, None for most) names the slots pushed from a live local instead
    of a parameter (``BorrowedSlot``).
    """
    table = _current_table()
    original = decode_cached(code).split_instructions()
    _validate(code, len(original), resume_index, live, blocks, break_index, exits, packer, table)
    cellvars, freevars = list(code.co_cellvars), list(code.co_freevars)
    known = set(code.co_varnames) | set(cellvars)
    taken = known | set(freevars) | set(code.co_names)
    _check_borrowed(borrowed, stack_nulls, live, table)
    passed = sum(1 for slot, null in enumerate(stack_nulls)
                 if not null and (slot >= len(borrowed) or borrowed[slot] is None))
    stack_params = [_fresh_name(f"___stack{i}", taken) for i in range(passed)]
    params = stack_params + list(live)
    _check_zero_argument_super(code, original, resume_index, params)
    varnames = params + [v for v in code.co_varnames if v not in params]

    body = _copy_body(original)
    _check_unpassed_loads(body, set(live_locals(code, resume_index)) - set(params), resume_index, params, table)
    origin_of = {id(inst): i for i, inst in enumerate(body)}
    start = body_start(body, table)
    prologue = body[:start]
    for inst in prologue:
        inst.exc = None
    main = body[start:]
    resume_at = body[resume_index]
    if resume_index < start:
        raise ValueError(f"resume_index={resume_index} lies inside the frame prologue (ends at {start})")

    entry = _restore_stack(stack_nulls, stack_params, blocks, body, table, borrowed)
    # Once on the stack, the stack parameters go: locals() must not show them (they are ours,
    # not the user's), and a value must live only as long as its stack slot (an exception the
    # frame is handling, kept in a local, would hold the frame through its traceback: a cycle).
    entry.extend(create_instruction("DELETE_FAST", argval=p) for p in stack_params)
    if break_index is not None and exits:
        # The stub runs copies of the instructions from the resume point to the break, then the
        # exit code; the body stays as it was.  A path that reaches the break again natively (a
        # loop going on after an exception the frame handled natively) runs on as the plain
        # frame does: the exit code assumes the stack as the prologue built it, and a native
        # path can hold another layout there (3.14's LOAD_SPECIAL pushes [function, self] where
        # the trace kept [bound method, NULL]: the self was dropped, CPython's test_itertools).
        # (A span that jumps -- a stub run natively from further back, as tests capture values
        # with -- cannot be copied: its exit code goes inline, right after the break.)
        head = _copies_up_to_break(body, resume_index, break_index, start, origin_of)
        if head is None:
            entry.append(create_instruction("JUMP_FORWARD", target=resume_at))
        else:
            entry.extend(head)
        paths, main = _exit_paths(main, head[-1] if head else None, body[break_index], exits, len(blocks),
                                  packer, cellvars, freevars, taken, varnames, table)
        entry.extend(paths)
    else:
        entry.append(create_instruction("JUMP_FORWARD", target=resume_at))

    instructions = prologue + entry + main
    overrides: Dict[str, Any] = {
        "co_argcount": len(params),
        "co_posonlyargcount": 0,
        "co_kwonlyargcount": 0,
        "co_varnames": tuple(varnames),
        "co_flags": code.co_flags & ~_CLEARED_FLAGS,
        "co_name": name,
    }
    fields = set(table.fact("code_fields"))
    if "co_qualname" in fields:
        overrides["co_qualname"] = qualname
    overrides = {k: v for k, v in overrides.items() if k in fields}
    new_code = assemble(instructions, code, **overrides)
    origin = {i: origin_of[id(inst)] for i, inst in enumerate(instructions) if id(inst) in origin_of}
    _generated.add(new_code)
    return ResumeCode(code=new_code, params=params, stack_params=stack_params, _origin=origin,
                      stack_locals=tuple(b.local for b in borrowed if b is not None))


def _copies_up_to_break(body: List[Instruction], resume_index: int, break_index: int,
                        body_start_index: int, origin_of: Dict[int, int]) -> Optional[List[Instruction]]:
    """Copies of ``body[resume_index:break_index + 1]`` (a call's prefix, then the breaking
    instruction), with the originals' handlers, lines and origins; None where that span
    jumps (it cannot run as a straight copy)."""
    if break_index < resume_index:
        raise ValueError(f"break_index={break_index} lies before resume_index={resume_index}")
    originals = body[resume_index:break_index + 1]
    if any(inst.target is not None for inst in originals[:-1]):
        return None
    copies = [inst.copy() for inst in originals]
    for inst, copy in zip(originals, copies):
        origin_of[id(copy)] = origin_of[id(inst)]
    # The copies keep what precedes them in the body: the interpreter looks at the code unit
    # before an instruction (3.15 does not raise a pending interrupt after a CALL that follows
    # LOAD_SPECIAL: a with block's __enter__, so that __exit__ always runs), and from 3.13 an
    # exception raised in a callee is looked up at the offset before the CALL that made the
    # call.  So a copy of the body's previous instruction, never run (jumped over), stands
    # before them under the first copy's handler; at the body's start a NOP does.
    if resume_index > 0 and body_start_index <= resume_index - 1:
        lead = body[resume_index - 1].copy()
        jump = [create_instruction("JUMP_FORWARD", target=copies[0])]
    else:
        lead, jump = create_instruction("NOP", line=originals[0].line), []
        lead.positions = originals[0].positions
    lead.exc = originals[0].exc
    return jump + [lead] + copies


def _exit_paths(main: List[Instruction], copy: Optional[Instruction], breaker: Instruction,
                exits: Sequence[ResumeExit], block_count: int, packer: Any, cellvars: List[str],
                freevars: List[str], taken: Set[str], varnames: List[str],
                table: VersionTable) -> Tuple[List[Instruction], List[Instruction]]:
    """The exit code, its paths routed there: falling through to the first exit, a taken jump
    to the second.  With ``copy`` (of ``breaker``, which stays in ``main`` untouched) the
    exit code follows the copy: (that code, main).  Without, it goes into ``main`` right
    after ``breaker``: ([], the new main)."""
    spec = table[breaker.opname]
    if len(exits) > 2:
        raise ValueError(f"at most two exits (fall-through, jump taken), got {len(exits)}")
    if spec.flow != "next":
        raise ValueError(f"{breaker.opname} never falls through ({spec.flow}); it cannot have exits")
    if len(exits) == 2 and not (spec.jump is not None and spec.conditional and not spec.block_setup):
        raise ValueError(f"{breaker.opname} is not a conditional jump; give one exit (its fall-through)")
    if spec.block_setup:
        block_count += 1  # the break instruction (SETUP_WITH, ...) pushed a block of its own
    cells = set(cellvars) | set(freevars)
    width = max(len(e.stack_nulls) for e in exits)
    temps = [_fresh_name(f"___exit{i}", taken) for i in range(width)]
    saved = (_fresh_name("___exit_exc", taken), _fresh_name("___exit_lasti", taken))
    varnames.extend(t for t in temps + list(saved) if t not in varnames)
    # Where each exit's path goes on in the original: the next instruction, or (jump taken) the
    # target; a loop's exhaustion goes on after its cleanup.  Their handlers cover the exits'
    # packer calls (_exit_code).
    at = next(i for i, inst in enumerate(main) if inst is breaker)
    goes_on = [main[at + 1] if at + 1 < len(main) else None]
    end = None
    if len(exits) == 2:
        end = loop_end(main, breaker, table) if spec.steps_loop else None
        goes_on.append(breaker.target if end is None else main[end] if end < len(main) else None)
    handlers = [inst.exc if inst is not None else None for inst in goes_on]
    codes = [_exit_code(e, temps, block_count, packer, cells, table, handler, saved)
             for e, handler in zip(exits, handlers)]
    if end is not None and end >= len(main):
        raise ValueError(f"the loop stepped by {breaker.opname} has no instruction after it")
    if copy is None:
        if end is not None:
            return [], _insert_loop_exits(main, breaker, codes, end)
        if len(codes) == 2:
            breaker.target = codes[1][0]
        return [], main[:at + 1] + [inst for code in codes for inst in code] + main[at + 1:]
    out = list(codes[0])
    if end is not None:
        # A for loop's step: the copy's exhaustion jumps to a copy of the loop's cleanup, which
        # falls through to the exit code (see _insert_loop_exits).
        cleanup = [inst.copy() for inst in main[main.index(breaker.target):end]]
        copy.target = cleanup[0] if cleanup else codes[1][0]
        out.extend(cleanup)
    elif len(codes) == 2:
        copy.target = codes[1][0]
    if len(codes) == 2:
        out.extend(codes[1])
    return out, main


def _insert_loop_exits(main: List[Instruction], for_iter: Instruction, codes: List[List[Instruction]],
                       end: int) -> List[Instruction]:
    """A for loop's step run natively: the next item leaves right after FOR_ITER, exhaustion
    after the loop's cleanup (``main[end]`` is the first instruction past it).  An exhausted
    FOR_ITER skips part of that cleanup (3.12+: its jump lands past END_FOR), so its target
    stays where it is and the exit code goes after the cleanup, reached by falling through
    it; where there is no cleanup (up to 3.11) the target is the exit code itself."""
    if for_iter.target is main[end]:
        for_iter.target = codes[1][0]
    at = next(i for i, inst in enumerate(main) if inst is for_iter)
    return main[:at + 1] + codes[0] + main[at + 1:end] + codes[1] + main[end:]


# generated code object -> its boxed variant, by identity (weak: dies with the code it was
# made from)
_BOXED: "IdentityWeakMap[types.CodeType, types.CodeType]" = IdentityWeakMap()


def boxed_code(code: types.CodeType) -> types.CodeType:
    """``code`` (a stub or continuation taking only positional parameters) as a function of one
    list, ``f(box)``: a prologue moves the box's items into the parameters' locals and empties
    it.  A caller that keeps its arguments on its own stack for the whole call (CPython up to
    3.10: the table's fact ``calls_move_arguments`` is false) then holds nothing but an empty
    list, so the callee alone holds the values, as the plain frame did: its ``del x`` frees x.
    Made once per code object (``boxed_variant_of`` finds it again)."""
    known = _BOXED.get(code)
    if known is not None:
        return known
    if code.co_kwonlyargcount or code.co_flags & _CLEARED_FLAGS:
        raise ValueError(f"{code.co_name}: only positional parameters can come from a box")
    table = _current_table()
    params = list(code.co_varnames[:code.co_argcount])
    taken = set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars) | set(code.co_names)
    box = _fresh_name("___box", taken)
    body = _copy_body(decode(code, table).split_instructions())
    start = body_start(body, table)
    prologue: List[Instruction] = [create_instruction("LOAD_FAST", argval=box)]
    if params:
        # UNPACK_SEQUENCE leaves the first item on top: stored first, into the first parameter.
        prologue.append(create_instruction("UNPACK_SEQUENCE", arg=len(params)))
        # A parameter that is also a cell is stored into its cell: the frame no longer makes
        # the cell from an argument (3.8-3.10) / MAKE_CELL already made it empty (3.11+).
        prologue.extend(create_instruction("STORE_DEREF" if p in code.co_cellvars else "STORE_FAST",
                                           argval=p) for p in params)
        prologue.append(create_instruction("LOAD_CONST", argval=list.clear))
        prologue.append(create_instruction("LOAD_FAST", argval=box))
        prologue.extend(create_call_function(1, push_null=True, table=table))
    prologue.append(create_instruction("POP_TOP"))
    # The box is the compiler's, not the user's: locals() must not show it.
    prologue.append(create_instruction("DELETE_FAST", argval=box))
    overrides: Dict[str, Any] = {"co_argcount": 1, "co_varnames": (box,) + tuple(code.co_varnames)}
    fields = set(table.fact("code_fields"))
    boxed = assemble(body[:start] + prologue + body[start:], code,
                     **{k: v for k, v in overrides.items() if k in fields})
    _generated.add(boxed)
    _BOXED[code] = boxed
    return boxed


def boxed_variant_of(code: types.CodeType) -> Optional[types.CodeType]:
    """The variant ``boxed_code`` made of ``code``, if one was made."""
    return _BOXED.get(code)


# code -> its all-positional variant, by identity (weak: dies with the code it was made from)
_ALL_POSITIONAL: "IdentityWeakMap[types.CodeType, types.CodeType]" = IdentityWeakMap()


def all_positional_variant(code: types.CodeType) -> types.CodeType:
    """``code`` taking every parameter positionally, in the order of its locals: positional,
    keyword-only, then the ``*args`` tuple and the ``**kwargs`` dict as they are.  A caller
    that holds the values already bound calls it with a plain CALL, each argument moved
    into the frame as it is (``f(*args, **kwargs)`` is a CALL_FUNCTION_EX, whose packing
    makes every argument an owned reference).  The frame's locals and instructions are the
    function's own.  Made once per code object; ``code`` itself where it has no packed
    parameters."""
    if not code.co_flags & _CLEARED_FLAGS:
        return code
    known = _ALL_POSITIONAL.get(code)
    if known is not None:
        return known
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    variant = code.replace(co_argcount=count, co_posonlyargcount=0, co_kwonlyargcount=0,
                           co_flags=code.co_flags & ~_CLEARED_FLAGS)
    _generated.add(variant)
    _ALL_POSITIONAL[code] = variant
    return variant


def all_positional_variant_of(code: types.CodeType) -> Optional[types.CodeType]:
    """The variant ``all_positional_variant`` made of ``code``, if one was made (``code``
    itself where it has no packed parameters)."""
    if not code.co_flags & _CLEARED_FLAGS:
        return code
    return _ALL_POSITIONAL.get(code)


def loop_end(instructions: Sequence[Instruction], for_iter: Instruction, table: VersionTable) -> int:
    """The index of the first instruction after the loop that ``for_iter`` steps: its target
    past the loop's cleanup (the table fact ``loop_end_cleanup``)."""
    at = next(i for i, inst in enumerate(instructions) if inst is for_iter.target)
    for opname in table.fact("loop_end_cleanup"):
        if at >= len(instructions) or instructions[at].opname != opname:
            raise ValueError(f"the loop stepped by {for_iter.opname} does not end in "
                             f"{table.fact('loop_end_cleanup')} (found {instructions[at].opname})")
        at += 1
    return at


def within_for_loop(instructions: Sequence[Instruction], index: int, table: VersionTable) -> bool:
    """Whether the instruction at ``index`` lies between a for loop's FOR_ITER and the loop's
    end: its body, or the way out of it a ``break`` takes (which pops the loop's iterator)."""
    for i, inst in enumerate(instructions[:index]):
        if table[inst.opname].steps_loop and inst.target is not None:
            try:
                end = loop_end(instructions, inst, table)
            except ValueError:
                continue
            if index < end:
                return True
    return False


