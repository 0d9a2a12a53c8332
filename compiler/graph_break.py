"""Graph breaks: from a trace stopped at an unsupported instruction to a cache entry.

Tracing is speculative (compiler.tracer): the first pass records where the
frame's trace failed (for a failure inside an inlined callee, the caller's
call instruction); the second pass stops just before that instruction with
the graph, side effects, stack, locals and blocks of that moment.  This
module turns that moment into

* a *plan*: which stack slots and locals the rest of the frame needs, the
  blocks to re-enter (up to 3.10), where each path continues after the
  breaking instruction (one exit, or two for a data-dependent branch), or
  why the rest must run natively (a break inside a loop, after which the
  state cannot be described);
* the code objects (via ``opcode_tables.resume``): a stub that runs the
  breaking instruction natively and a lazily compiled continuation per exit
  (compiler.resume), both shared through the root function's registry;
* the lines of the cache entry that call the graph, replay side effects,
  rebuild the values and call the stub.

A break the plan cannot express raises ``Unsupported`` (the frame then runs
natively as a whole, with both reasons).
"""
from __future__ import annotations

import dis
import types
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

from opcode_tables import current_table
from opcode_tables.closure_cells import cells_as_free
from opcode_tables.decode import instructions_of
from opcode_tables.instruction import Instruction
from opcode_tables.liveness import live_locals
from opcode_tables.resume import (BorrowedSlot, Origin, ResumeExit, boxed_code, build_resume_code, loop_end,
                                  origin_of, register_origin)
from opcode_tables.spec import VersionTable
from opcode_tables.stackdepth import stack_effect

from . import logs, trace_rules
from .debug import disassemble
from .entry_codegen import OutputCodegen
from .exc import Unsupported
from .resume import Continuation, Registry, Stub, pack
from .sources import param_names
from .tracer import InstructionTranslator
from .variables.base import NULL, VariableTracker
from .variables.functions import LocalFunctionVariable, NestedFunctionVariable, UserFunctionVariable

@dataclass
class BreakContext:
    """What building a break's code needs from the driver (compiler.convert_frame), handed
    in so that this module imports nothing above it."""

    registry: Registry         # the root function's stubs, continuations and callee wrappers
    backend_name: str          # continuations are shared per backend
    # A compiled wrapper for a callee whose inlining failed (it becomes its own frame).
    compile_callee: Callable[[types.FunctionType], Callable]
    # A lazily compiled continuation for (code, globals, qualname).
    make_continuation: Callable[[types.CodeType, dict, str], Continuation]


@dataclass
class Exit:
    branch: int
    resume_index: int                 # index into the original code's instructions
    stack_nulls: Tuple[bool, ...]
    live: Tuple[str, ...]
    blocks: Tuple[Tuple[int, int], ...] = ()   # <=3.10 blocks active on this path
    # Per slot: still borrowed from a live local after the breaking instruction (3.14+):
    # the continuation pushes it from the local, the stub does not pass it.
    borrowed: Tuple[Optional[BorrowedSlot], ...] = ()


@dataclass
class BreakPlan:
    code: types.CodeType              # the original (user) code: stubs and continuations copy it
    qualname: str                     # the original function's qualname
    index: int                        # the breaking instruction, in the original code
    inst: Instruction
    entry_index: int                  # where the stub starts (the call's prefix, if any)
    stack_nulls: Tuple[bool, ...]
    live: Tuple[str, ...]             # locals and cells the stub receives, in this order
    blocks: Tuple[Tuple[int, int], ...]
    exits: List[Exit] = field(default_factory=list)
    native_rest: Optional[str] = None  # why the rest of the frame runs natively in the stub
    # Per stack slot: pushed by the stub from a live local, as the plain frame borrowed it
    # (3.14+, compiler.borrows), instead of passed; None for the slots passed as parameters.
    borrowed: Tuple[Optional[BorrowedSlot], ...] = ()


def _to_original(tx: InstructionTranslator, index: int) -> Tuple[types.CodeType, str, int]:
    """(original code, original qualname, index there) for an index into the traced code."""
    origin = origin_of(tx.code)
    if origin is None:
        return tx.code, tx.fn.__qualname__, index
    mapped = origin.resume_code.original_index(index)
    if mapped is None:
        raise Unsupported("graph break inside a continuation's prologue")
    return origin.code, origin.qualname, mapped


def _layout_after(table: VersionTable, prefix: Sequence[Instruction], inst: Instruction,
                  nulls: Tuple[bool, ...], jump: bool) -> Optional[Tuple[bool, ...]]:
    """The NULL layout of the stack after ``inst`` (run from the start of ``prefix``), or
    None where it cannot be known without knowing what the instruction pushes (the table's
    stack facts on the instruction's row: a call's result is the only value it pushes; an
    instruction that may push a NULL or that moves slots is not modelled)."""
    spec = table.opcodes[inst.opname]
    if spec.may_push_null or spec.permutes_stack or inst.is_method or inst.push_null:
        return None   # pushes a NULL (or a [method, self] pair), or moves slots (NULLs included)
    depth = len(nulls)
    after = depth + sum(stack_effect(p, table) for p in prefix) + stack_effect(inst, table, jump)
    if after < 0:
        return None
    if spec.is_call:
        return nulls[:after - 1] + (False,) if after >= 1 else None
    if inst.target is not None and not spec.block_setup:
        # a conditional jump only pops (or keeps) its condition
        return nulls[:after] if after <= depth else None
    kept = min(depth, after) - 1
    if kept >= 0 and nulls[kept]:
        return None   # a NULL at the edge of what the instruction consumes: ambiguous
    kept = max(kept, 0)
    return nulls[:kept] + (False,) * (after - kept)


def _bound_names(tx: InstructionTranslator) -> List[str]:
    """Locals holding a value at the break, in the code's own order.  Cells are not among
    them: stubs and continuations receive the frame's cell objects in their closure
    (closures made before the break share them)."""
    code = tx.code
    return [name for name in code.co_varnames if name in tx.locals and name not in code.co_cellvars]


def closure_expr(tx: InstructionTranslator, cg: OutputCodegen) -> str:
    """The closure stubs and continuations run with: the frame's own closure, then one cell
    object per cell variable of the frame (made by the entry, shared with any function the
    entry rebuilds)."""
    names = tx.code.co_cellvars
    if not names:
        return "_cl"
    cells = [cg.cell_object(tx.cells.get(name) or tx.cell_for(name)) for name in names]
    return f"((_cl or ()) + ({''.join(c + ', ' for c in cells)}))"


def _with_cells_as_free(code: types.CodeType, original: types.CodeType) -> types.CodeType:
    if not original.co_cellvars:
        return code
    return cells_as_free(code, original.co_cellvars)


def _live(code: types.CodeType, index: int, bound: Sequence[str]) -> Tuple[str, ...]:
    """The locals handed to the stub and the continuation: every bound one, not only those
    read later.  A plain frame holds a dead local's value until the name is rebound or the
    frame ends; dropping it at a break would end its lifetime early (a weak reference dies,
    a finalizer runs too soon).  (Names a continuation's own code adds, its stack slots, are
    not variables of the original code.)"""
    variables = set(code.co_varnames) | set(code.co_cellvars)
    return tuple(n for n in bound if n in variables)


def plan(tx: InstructionTranslator) -> BreakPlan:
    """The break at the translator's current position (it stopped before the instruction)."""
    result = _plan_paths(tx)
    if tx.borrows is not None:
        prefix = instructions_of(result.code)[0][result.entry_index:result.index]
        _borrowed_slots(tx, result, prefix)
    return result


def _plan_paths(tx: InstructionTranslator) -> BreakPlan:
    """The plan's stack, locals, blocks and exits (or why the rest runs natively)."""
    table = tx.table
    if tx.in_exception_handler():
        raise Unsupported("graph break inside an except or finally handler (the handled exception "
                          "cannot be handed to a continuation)")
    code, qualname, index = _to_original(tx, tx.ip)
    instructions, _ = instructions_of(code)
    position = {id(inst): i for i, inst in enumerate(instructions)}
    inst = instructions[index]
    traced_index = tx._index

    blocks = []
    for _kind, target, depth in tx.block_stack:
        _c, _q, target_index = _to_original(tx, traced_index[id(target)])
        blocks.append((target_index, depth))

    entry = index
    prefix_names = table.fact("call_prefix")
    while entry > 0 and instructions[entry - 1].opname in prefix_names:
        entry -= 1
    prefix = instructions[entry:index]

    nulls = tuple(value is NULL for value in tx.stack)
    bound = _bound_names(tx)
    result = BreakPlan(code=code, qualname=qualname, index=index, inst=inst, entry_index=entry,
                       stack_nulls=nulls, live=_live(code, entry, bound), blocks=tuple(blocks))

    spec = table.opcodes[inst.opname]
    # A break inside a loop resumes there too: its continuation runs the rest of the body and
    # breaks again at the loop's FOR_ITER (the iterator reaches it as an opaque value), whose
    # two exits resume at the body's start and after the loop, every stage compiled and
    # cached (compiler.variables.lazy keeps per-iteration values out of their guards).
    if spec.steps_loop:
        return _plan_loop_step(table, result, instructions, bound)
    if spec.flow in ("return", "raise") or spec.jump is not None and not spec.conditional and \
            not spec.block_setup:
        return result   # nothing follows the instruction in this frame: the stub finishes it
    if not spec.resumable_after or \
            inst.opname in prefix_names or inst.opname in table.fact("block_stack_ops"):
        # A loop's FOR_ITER, half a call sequence, or a change to the 3.8-3.10 block stack.
        result.native_rest = (f"the frame cannot be resumed right after {inst.opname}: the rest of the "
                              "frame runs natively")
        return result
    after = _bound_after(inst, bound, tx.code.co_cellvars, nulls)
    exit_blocks = result.blocks
    if spec.block_setup:
        # SETUP_WITH / SETUP_FINALLY run natively push a block at the level of the stack
        # after the context manager is replaced by its __exit__ (or unchanged).
        exit_blocks = exit_blocks + ((position[id(inst.target)], len(nulls)),)
    paths = [(False, index + 1)]
    if spec.conditional and spec.jump is not None and not spec.block_setup:
        paths.append((True, position[id(inst.target)]))
    for branch, (jump, resume_index) in enumerate(paths):
        layout = _layout_after(table, prefix, inst, nulls, jump)
        if layout is None:
            result.native_rest = (f"the stack after {inst.opname} cannot be described: the rest of "
                                  "the frame runs natively")
            result.exits = []
            return result
        result.exits.append(Exit(branch, resume_index, layout, _live(code, resume_index, after), exit_blocks))
    return result


def _borrowed_slots(tx: InstructionTranslator, p: BreakPlan, prefix: Sequence[Instruction]) -> None:
    """The stack slots the stub pushes from a local as the plain frame borrowed them
    (compiler.borrows).  A method pair the stub rebuilds as the plain frame's [method, self]
    is a [method, NULL] pair in the exits' layouts: kept only where the breaking instruction
    consumes it (a call of it or above it), or where no exit follows."""
    spec = tx.table.opcodes[p.inst.opname]
    # (A condition the entry converts to an exact bool stays a parameter: break_tail.)
    borrowed = tx.borrows.at_break(tx, p.live, keep_top=spec.pops_exact_bool)
    if p.exits:
        untouched = _untouched_below(tx.table, p, prefix)
        consumed_from = untouched if spec.is_call else len(borrowed)
        borrowed = tuple(None if b is not None and b.method is not None and slot < consumed_from else b
                         for slot, b in enumerate(borrowed))
        # What the instruction leaves alone stays borrowed: the continuation pushes it again.
        stored = p.inst.argval if dis.opmap.get(p.inst.opname) in dis.haslocal else None
        for e in p.exits:
            e.borrowed = tuple(b if b is not None and b.method is None and slot < untouched
                               and b.local in e.live and b.local != stored else None
                               for slot, b in enumerate(borrowed[:len(e.stack_nulls)]))
    p.borrowed = borrowed


def _untouched_below(table: VersionTable, p: BreakPlan, prefix: Sequence[Instruction]) -> int:
    """How many slots at the bottom of the stack the breaking instruction leaves as they are,
    on every path: below a call's callable and arguments, below a loop's iterator, below
    what any other instruction pops (counted from its stack effect as if it pushed one)."""
    spec = table.opcodes[p.inst.opname]
    depth = len(p.stack_nulls) + sum(stack_effect(i, table) for i in prefix)
    if spec.steps_loop:
        return max(depth - table.fact("iterator_slots"), 0)
    jumps = (False, True) if p.inst.target is not None else (False,)
    after = min(depth + stack_effect(p.inst, table, jump) for jump in jumps)
    if spec.is_call:
        return max(after - 1, 0)
    return max(min(depth, after) - 1, 0)


def _plan_loop_step(table: VersionTable, result: BreakPlan, instructions: Sequence[Instruction],
                    bound: Sequence[str]) -> BreakPlan:
    """FOR_ITER run natively: the next item resumes at the loop body with the item pushed,
    exhaustion after the loop's cleanup with the iterator popped."""
    nulls, slots = result.stack_nulls, table.fact("iterator_slots")
    try:
        end = loop_end(instructions, result.inst, table)
    except ValueError as e:
        result.native_rest = f"the loop's end cannot be found ({e}): the rest of the frame runs natively"
        return result
    if len(nulls) < slots or nulls[len(nulls) - slots]:
        result.native_rest = "the stack below FOR_ITER holds no iterator: the rest of the frame runs natively"
        return result
    live = _live(result.code, result.index, bound)
    result.exits = [Exit(0, result.index + 1, nulls + (False,), live, result.blocks),
                    Exit(1, end, nulls[:len(nulls) - slots], live, result.blocks)]
    return result


def _bound_after(inst: Instruction, bound: Sequence[str], cellvars: Sequence[str],
                 nulls: Tuple[bool, ...]) -> List[str]:
    """The locals holding a value once the breaking instruction ran natively: it may store
    one (a break at STORE_FAST; storing a NULL, as a 3.12+ comprehension restoring an unbound
    name does, unbinds it) or clear one."""
    if dis.opmap.get(inst.opname) not in dis.haslocal or inst.argval in cellvars:
        return list(bound)
    name = inst.argval
    if inst.opname.startswith("STORE") and nulls and nulls[-1]:
        return [n for n in bound if n != name]
    if inst.opname.startswith("STORE"):
        return list(bound) + ([name] if name not in bound else [])
    if inst.opname.startswith("DELETE") or inst.opname.endswith("AND_CLEAR"):
        return [n for n in bound if n != name]
    return list(bound)


# -- building -------------------------------------------------------------------

def break_reason(p: BreakPlan, error: Unsupported) -> str:
    """The reason explain lists: where this frame breaks, and why (for a call to a function
    whose own trace failed, where that happened)."""
    where = f"{p.code.co_filename}:{p.inst.line if p.inst.line is not None else p.code.co_firstlineno}"
    callee = getattr(error, "inlined_callee", None)
    if callee is not None:
        name = getattr(error, "inlined_callee_name", callee.co_name)
        text = (f"call to {name}, which cannot be inlined: {error} (the call runs natively; a "
                "function that can be compiled becomes its own frame)")
    else:
        text = error.reason
    reason = f"{text} (at {where})"
    if p.native_rest:
        reason += f"; {p.native_rest}"
    return reason


def _offset_label(inst: Instruction, index: int) -> int:
    return inst.offset if inst.offset is not None else index


def stub_for(p: BreakPlan, f_globals: dict, registry: Registry) -> Stub:
    """The stub that runs the breaking instruction natively (made once per break point and
    layout, shared through the registry)."""
    exits = tuple(ResumeExit(e.branch, e.stack_nulls, e.live, e.borrowed) for e in p.exits)
    key = ("stub", p.code, p.index, p.entry_index, p.stack_nulls, p.live, p.blocks, exits, p.borrowed,
           id(f_globals))
    stub = registry.get(key)
    if stub is None:
        label = f"__break_at_{_offset_label(p.inst, p.index)}"
        qualname = f"{p.qualname}.{label}"
        try:
            try:
                rc = build_resume_code(p.code, resume_index=p.entry_index, stack_nulls=p.stack_nulls,
                                       live=p.live, blocks=p.blocks, **_code_names(p.code),
                                       break_index=p.index, exits=exits, packer=pack, borrowed=p.borrowed)
            except ValueError as e:
                if not exits:
                    raise
                # The paths after the instruction cannot be handed over: finish natively.
                p.exits = []
                p.native_rest = f"the frame cannot be resumed after {p.inst.opname} ({e}): the rest " \
                                "of the frame runs natively"
                return stub_for(p, f_globals, registry)
            code = _with_cells_as_free(rc.code, p.code)
            _prepare_native_calls(code)
        except ValueError as e:
            raise Unsupported(f"cannot build the code that runs {p.inst.opname} natively: {e}") from None
        stub = registry.put(key, Stub(code, f_globals, qualname), qualname)
        _log_code(qualname, code)
    return stub


def continuation_for(p: BreakPlan, e: Exit, f_globals: dict, ctx: BreakContext) -> Continuation:
    """The continuation of one exit (made once per resume point, layout and backend, shared
    through the registry)."""
    registry = ctx.registry
    key = ("resume", p.code, e.resume_index, e.stack_nulls, e.live, e.blocks, e.borrowed, ctx.backend_name,
           id(f_globals))
    cont = registry.get(key)
    if cont is None:
        instructions, _ = instructions_of(p.code)
        label = f"__resume_at_{_offset_label(instructions[e.resume_index], e.resume_index)}"
        qualname = f"{p.qualname}.{label}"
        try:
            rc = build_resume_code(p.code, resume_index=e.resume_index, stack_nulls=e.stack_nulls,
                                   live=e.live, blocks=e.blocks, **_code_names(p.code), borrowed=e.borrowed)
            code = _with_cells_as_free(rc.code, p.code)
            _prepare_native_calls(code)
        except ValueError as err:
            raise Unsupported(f"cannot build the continuation {label}: {err}") from None
        register_origin(code, Origin(p.code, rc, p.qualname, e.resume_index))
        cont = registry.put(key, ctx.make_continuation(code, f_globals, qualname), qualname)
        _log_code(qualname, code)
    return cont


def _prepare_native_calls(code: types.CodeType) -> None:
    """Where a call keeps its arguments on the caller's stack until it returns (the table's
    fact ``calls_move_arguments`` is false), a stage run natively would share its values with
    the caller that passed them: a ``del x`` in it would not free x, as it does in the plain
    frame.  There the stage also gets a variant that takes its values in a list it empties
    (compiler.resume runs it)."""
    if not current_table().fact("calls_move_arguments"):
        boxed_code(code)


def _code_names(code: types.CodeType) -> dict:
    """Stubs and continuations are code objects named as the original (co_name, co_qualname):
    tracebacks, frame.f_code.co_name and warnings show the function the user wrote.  The
    function objects and the compiler's labels say ``__break_at_<offset>`` /
    ``__resume_at_<offset>`` (compiler.resume, compiler.debug)."""
    return {"name": code.co_name, "qualname": getattr(code, "co_qualname", code.co_name)}


def _log_code(label: str, code: types.CodeType) -> None:
    if logs.get("bytecode").isEnabledFor(20):
        logs.log("bytecode", "-", "%s:\n%s", label, disassemble(code))


def stub_arguments(tx: InstructionTranslator, p: BreakPlan, cg: OutputCodegen, callee: Optional[types.CodeType],
                   ctx: BreakContext) -> List[str]:
    """Expressions for the stub's parameters: non-NULL stack slots (but those the stub pushes
    from a local, ``p.borrowed``), then the live names.  A callee whose trace failed is
    passed compiled, so it becomes its own frame."""
    exprs = []
    for slot, value in enumerate(tx.stack):
        if value is NULL or (slot < len(p.borrowed) and p.borrowed[slot] is not None):
            continue
        compiled = _compiled_callee(value, callee, cg, ctx)
        exprs.append(compiled if compiled is not None else value.reconstruct(cg))
    exprs += [tx.locals[name].reconstruct(cg) for name in p.live]
    return exprs


def _compiled_callee(value: VariableTracker, callee_code: Optional[types.CodeType], cg: OutputCodegen,
                     ctx: BreakContext) -> Optional[str]:
    """The callable of the breaking call, compiled, when it is the function whose inlining
    failed: a function from outside (its compiled wrapper, made once), or one made in the
    trace (rebuilt, then compiled when the entry runs; its frames share one cache)."""
    code = getattr(value, "code", None)
    if callee_code is None or code is not callee_code or code.co_flags & 0x2A0:
        return None  # generators and coroutines run natively anyway
    if isinstance(value, LocalFunctionVariable):
        if value.source is None:
            return None
        return f"{cg.const(ctx.compile_callee)}({value.reconstruct(cg)})"
    if isinstance(value, UserFunctionVariable):
        fn = value.fn
        if value.source is None or trace_rules.is_disabled(fn):
            return None
        key = ("callee", fn, ctx.backend_name)
        wrapper = ctx.registry.get(key)
        if wrapper is None:
            wrapper = ctx.registry.remember(key, ctx.compile_callee(fn))
        return cg.const(wrapper)
    if isinstance(value, NestedFunctionVariable):
        if not all(name.isidentifier() for name in param_names(code)):
            # A comprehension (its hidden ".0" iterator argument is not traced): native.
            return None
        return f"{cg.const(ctx.compile_callee)}({value.reconstruct(cg)})"
    return None


def break_tail(p: BreakPlan, stub_expr: str, args_name: str, conts_expr: Optional[str],
               table: VersionTable) -> List[str]:
    """The entry's last lines: call the stub, then the continuation of the exit it reached."""
    lines = []
    if table.opcodes[p.inst.opname].pops_exact_bool:
        # Where conditional jumps take exact bools, the compare before this one converted its
        # result natively (the trace kept the NumPy bool); converted after the side effects,
        # so that an ambiguous array truth raises where the plain function raises.
        top = sum(not null for null in p.stack_nulls) - sum(b is not None for b in p.borrowed) - 1
        lines.append(f"{args_name} = {args_name}[:{top}] + (bool({args_name}[{top}]),) + {args_name}[{top + 1}:]")
    # The entry returns before the stub runs (compiler.resume.Handoff): its frame holds none
    # of the frame's values while the rest of the frame runs.
    return lines + [f"return _Handoff({stub_expr}, {conts_expr if p.exits else 'None'}, _cl2, list({args_name}))"]
