"""The symbolic interpreter: steps a frame's decoded instructions over trackers.

``InstructionTranslator`` traces the compiled frame itself;
``InliningTranslator`` traces a user function called from it (one nested
translator per inlined frame, sharing the OutputGraph).  Each instruction is
dispatched through the running interpreter's opcode table
(``table.handlers[opname]``, filled by ``compiler.handlers`` at import); no
handler knows which Python version it runs on.

Tracing is speculative by design: a handler that meets something it cannot
model raises ``Unsupported`` with the instruction recorded (``where``).  The
compiled frame's translator then knows which of *its* instructions was
running (``break_index``; for a failure inside an inlined callee, the call);
a second translator with ``break_at`` set stops right before that
instruction, with the state compiler.graph_break turns into a graph break.
"""
from __future__ import annotations

import dis
import types
from collections import Counter
from typing import Any, Dict, List, NoReturn, Optional, Sequence, Tuple

import opcode_tables
from opcode_tables.decode import instructions_of
from opcode_tables.instruction import Instruction
from opcode_tables.liveness import in_loop, live_locals
from opcode_tables.resume import origin_of, within_for_loop

from . import config
from .borrows import BorrowedSlots
from .exc import InternalCompilerError, Unsupported
from .output_graph import OutputGraph
from .side_effects import DELETED
from .trace_time import WarningTrapped, call_quietly, depends_on_int_digit_limit
from .sources import (BuiltinSource, ClosureSource, GlobalSource, ItemSource, LocalSource, Source,
                      has_instance_dict, local_param_name)
from .variables import builder
from .variables.base import VariableTracker, current_serial
from .variables.builtins import ExceptionVariable
from .variables.constant import ConstantVariable
from .variables.containers import BaseListVariable, DictVariable
from .variables.iterators import GeneratorIterator
from .variables.lazy import LazyArgument, realized
from .variables.functions import BaseUserFunctionVariable, CellVariable
from .variables.resume_prologue import OpaqueValueVariable
from .variables.user_objects import TracedObjectVariable


def _callable_name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__


class TracedException(Exception):
    """A Python exception raised by the traced program itself (not by the tracer)."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(repr(exc))
        self.exc = exc


class BreakReached(Exception):
    """Internal: the second pass reached the instruction the frame breaks at."""


class _Return(Exception):
    """Internal: the frame returned ``value``."""

    def __init__(self, value: VariableTracker) -> None:
        self.value = value


def _where(code: types.CodeType, inst: Optional[Instruction]) -> str:
    line = inst.line if inst is not None and inst.line is not None else code.co_firstlineno
    return f"{code.co_filename}:{line}"


class InstructionTranslatorBase:
    def __init__(self, output: OutputGraph, code: types.CodeType, f_globals: dict,
                 globals_source: Optional[Source], depth: int) -> None:
        self.output = output
        self.code = code
        self.f_globals = f_globals
        self.globals_source = globals_source
        self.depth = depth
        self.table = opcode_tables.current_table()
        self.instructions, self._index = instructions_of(code)
        self.stack: List[VariableTracker] = []
        # Slots the plain frame would hold borrowed from a local (3.14+), for a break's stub.
        borrowed_load = self.table.fact("borrowed_local_load")
        self.borrows = BorrowedSlots(borrowed_load) if borrowed_load is not None else None
        self._low_water = 0   # the lowest the stack went during the current instruction
        self.locals: Dict[str, VariableTracker] = {}
        self.cells: Dict[str, CellVariable] = {}
        self.block_stack: List[Tuple[str, Instruction, int]] = []
        self.ip = 0
        self.current: Optional[Instruction] = None
        self.kw_names: Optional[tuple] = None
        self.yielded: Optional[List[VariableTracker]] = None
        # Exceptions being handled (innermost last), as sys.exc_info() would report them.
        self.exc_info: List[VariableTracker] = []
        # Opcodes run since this translator's last taken jump (Dynamo's start_point to
        # instruction_pointer): added to output.ir_opcodes at the next taken jump; dropped
        # where the segment ends otherwise (an inlined return, a graph break).
        self._segment: List[str] = []

    # -- stack helpers ----------------------------------------------------
    def push(self, value: VariableTracker) -> None:
        self.stack.append(value)

    # pop / popn / peek hand out values the instruction uses (a lazy argument is realized:
    # compiler.variables.lazy); the *_raw forms are for instructions that only move values
    # between the stack and locals.
    def pop(self) -> VariableTracker:
        return realized(self.pop_raw(), self)

    def pop_raw(self) -> VariableTracker:
        if not self.stack:
            raise InternalCompilerError(f"stack underflow at {self.current}")
        value = self.stack.pop()
        self._low_water = min(self._low_water, len(self.stack))
        return value

    def popn(self, n: int) -> List[VariableTracker]:
        return [realized(value, self) for value in self.popn_raw(n)]

    def popn_raw(self, n: int) -> List[VariableTracker]:
        if n == 0:
            return []
        if len(self.stack) < n:
            raise InternalCompilerError(f"stack underflow at {self.current}")
        values = self.stack[-n:]
        del self.stack[-n:]
        self._low_water = min(self._low_water, len(self.stack))
        return values

    def peek(self, depth: int = 1) -> VariableTracker:
        return realized(self.stack[-depth], self)

    def peek_raw(self, depth: int = 1) -> VariableTracker:
        return self.stack[-depth]

    def is_live(self, var: VariableTracker) -> bool:
        """Whether the traced program can still reach ``var``: from the stack, locals, cells,
        handled exceptions or yielded values of this frame and the frames it is inlined in,
        from the inputs, or from the side effects recorded (stores to globals and objects),
        through any tracker that holds others (containers, objects, iterators, closures)."""
        roots: List[Any] = [self.output.side_effects, list(self.output._wrapped.values())]
        frame: Optional[InstructionTranslatorBase] = self
        while frame is not None:
            roots += [frame.stack, frame.locals, frame.cells, frame.exc_info, frame.yielded]
            frame = getattr(frame, "parent", None)
        return reaches(roots, var)

    def enter_errstate(self, modes: Dict[str, str]) -> None:
        """A ``with np.errstate(**modes)`` block entered by the trace (compiler.variables.errstate)."""
        raise self.unsupported("np.errstate entered inside an inlined function (traced only in the "
                               "compiled frame itself)")

    def exit_errstate(self) -> None:
        raise self.unsupported("np.errstate left inside an inlined function")

    def in_exception_handler(self) -> bool:
        """Whether an except or finally handler is running here: a graph break here cannot be
        resumed (the handled exception cannot be handed to a continuation)."""
        return bool(self.exc_info) or any(kind not in ("finally", "with") for kind, _t, _d in self.block_stack)

    # -- control ----------------------------------------------------------
    def jump_to(self, target: Instruction) -> None:
        """A taken jump (a branch, a loop's end, an exception handler): the segment that ends
        here counts towards ir_count, in the frame and in inlined functions alike."""
        self.flush_segment()
        self.ip = self._index[id(target)]

    def flush_segment(self) -> None:
        self.output.ir_opcodes.update(self._segment)
        self._segment = []

    def drop_segment(self) -> None:
        """The running segment ends uncounted (an inlined generator's yield)."""
        self._segment = []

    def where(self) -> str:
        return _where(self.code, self.current)

    def unsupported(self, reason: str) -> "Unsupported":
        return Unsupported(reason, where=self.where())

    def raise_python_exception(self, exc: BaseException) -> NoReturn:
        raise TracedException(exc)

    def run_constant(self, fn: Any, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
        """Evaluate a pure function at trace time; its exceptions are the program's.
        A call that would warn or signal a floating-point error is not evaluated here: the
        effect belongs to every call at its place in the program, under the caller's error
        state, so the instruction runs natively (a graph break), see compiler.trace_time."""
        if depends_on_int_digit_limit(fn, args, kwargs):
            raise self.unsupported(f"{_callable_name(fn)} on constants may convert an int of more than "
                                   "640 digits to or from a string, which depends on "
                                   "sys.get_int_max_str_digits() when it runs; it runs natively")
        try:
            return call_quietly(fn, args, kwargs, fp="raise")
        except WarningTrapped as trapped:
            raise self.unsupported(f"{_callable_name(fn)} on constants would issue a warning "
                                   f"({trapped}); it runs natively") from None
        except FloatingPointError as e:
            raise self.unsupported(f"{_callable_name(fn)} on constants signals a floating-point "
                                   f"error ({e}); it runs natively under the caller's error "
                                   "state") from None
        except Exception as e:  # the traced program raises here
            raise TracedException(e) from None

    def speculate_getattr(self, var: VariableTracker, name: str) -> VariableTracker:
        """``getattr`` for hasattr/getattr-with-default: AttributeError is an answer."""
        try:
            return var.getattr(self, name)
        except TracedException as e:
            if isinstance(e.exc, AttributeError):
                raise AttributeError(name) from None
            raise

    # -- names ------------------------------------------------------------
    def load_global(self, name: str) -> VariableTracker:
        stored = self.output.side_effects.lookup("global", self.f_globals, name)
        if stored is not None and stored.value is not DELETED:
            return stored.value
        if stored is None and name in self.f_globals:
            source: Source = (GlobalSource(name) if self.globals_source is None
                              else ItemSource(self.globals_source, name))
            return self.output.wrap(self.f_globals[name], source)
        b = self.f_globals.get("__builtins__", self.output.f_builtins)
        bdict = b if isinstance(b, dict) else vars(b)
        if name in bdict:
            return self.output.wrap(bdict[name], BuiltinSource(name))
        self.raise_python_exception(NameError(f"name {name!r} is not defined"))

    def store_global(self, name: str, value: Optional[VariableTracker]) -> None:
        """STORE_GLOBAL (value) / DELETE_GLOBAL (None): applied by the entry after the graph."""
        if self.output.generator_starts:
            # The body runs eagerly: the caller would see the store before the next() that makes it.
            raise Unsupported(f"{'store into' if value is not None else 'delete of'} global {name!r} inside "
                              "a generator body (generators are traced eagerly)")
        effects = self.output.side_effects
        stored = effects.lookup("global", self.f_globals, name)
        exists_now = (stored.value is not DELETED) if stored is not None else name in self.f_globals
        if value is None and not exists_now:
            self.raise_python_exception(NameError(f"name {name!r} is not defined"))
        if stored is None:
            existed = name in self.f_globals
            base = "_G" if self.globals_source is None else self.globals_source.expr(self.output.ns.const)
            where = "G" if self.globals_source is None else self.globals_source.name()
            self.output.guards.add(f"{name!r} {'in' if existed else 'not in'} {where}",
                                   f"({name!r} in {base}) is {existed}")
        effects.store("global", self.f_globals, self.globals_source, name,
                      name in self.f_globals if stored is None else stored.existed,
                      DELETED if value is None else value)

    def cell_for(self, name: str) -> CellVariable:
        cell = self.cells.get(name)
        if cell is None:
            cell = self.cells[name] = CellVariable(name=name)
        return cell

    def deref_name(self, inst: Instruction) -> str:
        return inst.argval

    # -- calls --------------------------------------------------------------
    def call_function(self, fn: VariableTracker, args: List[VariableTracker],
                      kwargs: Dict[str, VariableTracker]) -> VariableTracker:
        return fn.call(self, args, kwargs)

    def inline_call(self, fn: BaseUserFunctionVariable, bound: Dict[str, VariableTracker]) -> VariableTracker:
        if self.depth + 1 > config.max_inline_depth:
            raise self.unsupported(f"inlining depth above {config.max_inline_depth} "
                                   f"(recursion of {fn.describe()} is not static)")
        code = fn.code
        if code.co_flags & (inspect_CO_COROUTINE | inspect_CO_ASYNC_GENERATOR | inspect_CO_ITERABLE_COROUTINE):
            raise self.unsupported(f"{fn.describe()} is a coroutine or async generator")
        sub = InliningTranslator(self, fn, bound)
        if not code.co_flags & inspect_CO_GENERATOR:
            try:
                return sub.run_inlined()
            except Unsupported as e:
                if self.depth == 0 and getattr(e, "inlined_callee", None) is None and \
                        not getattr(e, "frame_sensitive", False):
                    # The compiled frame breaks at this call; the callee becomes its own frame.
                    e.inlined_callee = fn.code
                    e.inlined_callee_name = getattr(fn, "qualname", None) or fn.code.co_name
                raise
        starts = self.output.generator_starts
        starts.append(current_serial())
        self.output.generator_body_changes.append({})
        try:
            returned = sub.run_inlined()
        finally:
            starts.pop()
            changes = self.output.generator_body_changes.pop()
        iterator = GeneratorIterator(sub.yielded or [], returned, body_changes=set(changes))
        reachable = _reachable(list(bound.values()) + list(sub.cells.values())) | set(changes)
        self.output.pending_generators.append((iterator, reachable))
        return iterator

    # -- the loop -----------------------------------------------------------
    def step(self) -> None:
        inst = self.instructions[self.ip]
        self.current = inst
        self.ip += 1
        self.output.traced_steps += 1
        self.count_instruction(inst)
        handler = self.table.handlers.get(inst.opname)
        if handler is None:
            spec = self.table.opcodes.get(inst.opname)
            why = spec.unsupported if spec is not None and spec.unsupported else "no handler yet"
            raise self.unsupported(f"opcode {inst.opname}: {why}")
        depth = self._low_water = len(self.stack)
        handler(self, inst)
        if config.debug_checks:
            self.check_stack_effect(inst, depth)
        if self.borrows is not None:
            self.borrows.after(self, inst, depth, self._low_water)

    def count_instruction(self, inst: Instruction) -> None:
        """Add ``inst`` to the running segment, as many times as Dynamo's cleaned copy of
        the bytecode has instructions for it (the table's dynamo_counts_as, and the two
        instructions of its explicit ``super(__class__, self)``)."""
        spec = self.table.opcodes.get(inst.opname)
        weight = spec.dynamo_counts_as if spec is not None else 1
        if inst.opname == "LOAD_GLOBAL" and inst.argval == "super" and self._calls_super_bare():
            weight += 2
        self._segment.extend([inst.opname] * weight)

    def _calls_super_bare(self) -> bool:
        """The LOAD_GLOBAL super just counted is a zero-argument ``super()`` Dynamo rewrites."""
        call = self.table.fact("dynamo_super_call")
        following = self.instructions[self.ip] if self.ip < len(self.instructions) else None
        return (call is not None and following is not None and following.opname == call
                and not following.arg and bool(self.code.co_varnames))

    def check_stack_effect(self, inst: Instruction, before: int) -> None:
        exempt = getattr(self.table.handlers.get(inst.opname), "stack_effect_exempt", False)
        if exempt or self.ip == 0:
            return
        opcode = dis.opmap.get(inst.opname)
        if opcode is None:
            return
        jumped = inst.target is not None and self.instructions[self.ip - 1] is not inst and \
            self.ip == self._index.get(id(inst.target), -1)
        arg = (inst.arg or 0) if opcode >= dis.HAVE_ARGUMENT else None
        try:
            expected = dis.stack_effect(opcode, arg, jump=jumped) if inst.target is not None else \
                dis.stack_effect(opcode, arg)
        except ValueError:
            return
        shared = self.table.opcodes[inst.opname].stack_effect_shared_with
        if shared is not None:
            # e.g. 3.11's dis.stack_effect books a CALL's argument pops on its PRECALL (exempt).
            expected += dis.stack_effect(dis.opmap[shared], arg)
        actual = len(self.stack) - before
        if actual != expected:
            raise InternalCompilerError(
                f"handler for {inst.opname} changed the stack by {actual}, dis.stack_effect says "
                f"{expected} (at {self.where()})")

    def run_loop(self) -> VariableTracker:
        try:
            while True:
                # One budget for the frame and every function it inlines: a loop calling a
                # function per step (sum(map(f, a generator of 100,000 items))) is bounded as
                # a whole.  Past it the instruction breaks the graph; its continuation gets a
                # budget of its own.
                if self.output.traced_steps > config.max_trace_instructions:
                    raise self.unsupported(f"more than {config.max_trace_instructions} instructions "
                                           "traced in this frame and the functions it inlines "
                                           "(a loop that does not end at trace time?)")
                try:
                    self.step()
                except TracedException as e:
                    self.handle_exception(e)
        except _Return as r:
            return r.value

    def locate(self, e: Unsupported) -> Unsupported:
        """Give an Unsupported raised below a handler the innermost file:line, as a traceback would."""
        if e.where is None:
            e.where = self.where()
            e.args = (str(e),)
        return e

    def run_located(self) -> VariableTracker:
        # A size specialized without a named reason is named by where it is used.
        env = self.output.shape_env
        outer, env.site = env.site, self.site
        try:
            return self.run_loop()
        except Unsupported as e:
            raise self.locate(e)
        finally:
            env.site = outer

    def site(self) -> str:
        """Where the trace is (for guard names)."""
        inst = self.current
        line = inst.line if inst is not None and inst.line is not None else self.code.co_firstlineno
        return f"{self.code.co_name}, line {line}"  # (no opname: guard names read alike on every version)

    def handle_exception(self, e: TracedException) -> None:
        """A Python exception raised by the program: jump to the handler that catches it in
        this frame, or let it leave the frame."""
        exc_var = ExceptionVariable(e.exc)
        if self.table.fact("exception_table"):
            handler = self.current.exc if self.current is not None else None
            if handler is None:
                return self.propagate(e)
            if self._opaque_with_cleanup(handler.target, handler.depth):
                # The with block's __exit__ is not modelled (a context manager entered natively,
                # such as pytest.raises): its cleanup cannot be traced, nor can a break happen
                # inside it, so the raising instruction itself runs natively (a graph break).
                raise self.unsupported(f"{type(e.exc).__name__} raised inside a with block whose __exit__ "
                                       "is not modelled: the raising instruction runs natively")
            del self.stack[handler.depth:]
            if self.borrows is not None:
                self.borrows.drop_from(handler.depth)
            if handler.lasti:
                self.push(ConstantVariable(self.current.offset or 0))
            self.push(exc_var)
            self.jump_to(handler.target)
            return
        while self.block_stack:
            kind, target, depth = self.block_stack.pop()
            if kind == "except_handler":
                # Leaving an active handler: its saved exception state goes with it.
                del self.stack[depth:]
                if self.exc_info:
                    self.exc_info.pop()
                continue
            if self._opaque_with_cleanup(target, depth):
                raise self.unsupported(f"{type(e.exc).__name__} raised inside a with block whose __exit__ "
                                       "is not modelled: the raising instruction runs natively")
            del self.stack[depth:]
            self.block_stack.append(("except_handler", None, len(self.stack)))
            previous = self.exc_info[-1] if self.exc_info else None
            none = ConstantVariable(None)
            # previous exception (traceback, value, type), then the new one, type on top
            self.stack += [none, previous or none,
                           ConstantVariable(previous.python_type()) if previous is not None else none]
            self.stack += [none, exc_var, ConstantVariable(type(e.exc))]
            self.exc_info.append(exc_var)
            self.jump_to(target)
            return
        self.propagate(e)

    def propagate(self, e: TracedException) -> None:
        raise e

    def _opaque_with_cleanup(self, target: Any, depth: int) -> bool:
        """Whether the handler at ``target`` is a with block's cleanup (an opcode the table marks
        ``exits_with_exception`` among its first instructions) with no traced with statement's __exit__ (handlers.exceptions'
        ``_ExitFunction``, marked ``models_with_exit``) among the values the handler keeps
        (below ``depth``): the __exit__ it would call is a continuation's stack value, the
        context manager entered natively."""
        index = self._index.get(id(target)) if target is not None else None
        if index is None or depth < 1 or depth > len(self.stack):
            return False
        specs = self.table.opcodes
        cleanup = any(specs[inst.opname].exits_with_exception for inst in self.instructions[index:index + 3])
        return cleanup and not any(getattr(v, "models_with_exit", False) for v in self.stack[:depth])

    def do_return(self, value: VariableTracker) -> None:
        raise _Return(value)


# Objects a liveness walk does not enter: the graph (its nodes hold no trackers), and values
# from outside the trace (arrays, functions, modules...).
_WALKED_CONTAINERS = (list, tuple, set, frozenset)


def reaches(roots: List[Any], target: VariableTracker) -> bool:
    """Whether ``target`` is reachable from ``roots`` through trackers (any attribute of a
    tracker or of the compiler's own bookkeeping objects) and the containers holding them."""
    seen = set()
    pending = list(roots)
    while pending:
        obj = pending.pop()
        if obj is target:
            return True
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, _WALKED_CONTAINERS):
            pending.extend(obj)
        elif isinstance(obj, dict):
            pending.extend(obj.keys())
            pending.extend(obj.values())
        elif isinstance(obj, VariableTracker) or type(obj).__module__ == "compiler.side_effects":
            fields = getattr(obj, "__dict__", None)
            if fields is not None:
                skipped = getattr(type(obj), "bookkeeping_fields", ())
                pending.extend(value for name, value in fields.items() if name not in skipped)
            for slot in getattr(type(obj), "__slots__", ()):
                pending.append(getattr(obj, slot, None))
    return False


def _reachable(roots: List[VariableTracker], depth: int = 3) -> set:
    """Serials of the trackers a generator frame can reach from its arguments and cells."""
    seen: set = set()
    frontier = list(roots)
    for _ in range(depth):
        following: List[VariableTracker] = []
        for var in frontier:
            if var.serial in seen:
                continue
            seen.add(var.serial)
            if isinstance(var, CellVariable) and var.contents is not None:
                following.append(var.contents)
            elif isinstance(var, BaseListVariable):
                following.extend(var.items)
            elif isinstance(var, DictVariable):
                following.extend(var.items.values())
            elif isinstance(var, TracedObjectVariable):
                following.extend(var.attrs.values())
        frontier = following
    return seen


inspect_CO_GENERATOR = 0x20
inspect_CO_COROUTINE = 0x80
inspect_CO_ITERABLE_COROUTINE = 0x100
inspect_CO_ASYNC_GENERATOR = 0x200


_C_BOUND_METHOD_TYPES = (types.BuiltinMethodType, type(object().__str__))


def _carried_opaquely(value: Any, entered_next: bool) -> bool:
    """Continuation stack values the tracer carries without modelling them: C bound methods
    (``log.append`` waiting for its argument), methods of objects without a __dict__ (a
    with block's __exit__ such as np.errstate's) and the context
    manager a with block is about to enter (``entered_next``): new objects on every call,
    whose only use here is a call or a with block, both run natively."""
    tp = type(value)  # not isinstance(): it would read value.__class__ (a lazy module loads)
    if issubclass(tp, (types.MethodDescriptorType, types.WrapperDescriptorType)):
        return True  # 3.14's with block keeps its __exit__ unbound (LOAD_SPECIAL), self beside it
    if issubclass(tp, _C_BOUND_METHOD_TYPES):
        return not isinstance(getattr(value, "__self__", None), types.ModuleType)
    if issubclass(tp, types.MethodType) and not has_instance_dict(type(value.__self__)):
        return True  # its object could only be guarded by identity (np.errstate's __exit__)
    return entered_next


# The instructions by which a Dynamo resume function's prologue differs from a continuation's
# (see InstructionTranslator.run).
DYNAMO_RESUME_PROLOGUE_FLAG = ("LOAD_CONST", "STORE_FAST", "LOAD_CONST", "STORE_FAST")


class InstructionTranslator(InstructionTranslatorBase):
    """Traces the compiled frame, counting ir_count the way Dynamo does."""

    def __init__(self, fn: types.FunctionType, arg_values: Dict[str, Any],
                 break_at: Optional[int] = None, inline_compiled: bool = True,
                 dynamic_scalars: frozenset = frozenset()) -> None:
        code = fn.__code__
        output = OutputGraph(code, fn.__globals__, fn.__closure__, wrap=builder.wrap,
                             wrap_constant=builder.wrap_constant_result)
        # Sources whose Python int / float values changed between calls: graph inputs.
        output.dynamic_scalars = dynamic_scalars
        # A compiled function this frame calls: inlined (its original traced here), or, for an
        # unobserved compilation (config option "observed"), called as it is.
        output.inline_compiled = inline_compiled
        super().__init__(output, code, fn.__globals__, None, depth=0)
        self.fn = fn
        self._stack_params: frozenset = frozenset()  # a continuation's (set by bind_arguments)
        # ``with np.errstate`` blocks the trace entered: the modes of each (for the graph's
        # error state) and the with statements still open (where a break moves to).
        self.errstate_overrides: List[Dict[str, str]] = []
        self.open_errstates: List[int] = []
        if code.co_flags & (inspect_CO_GENERATOR | inspect_CO_COROUTINE | inspect_CO_ASYNC_GENERATOR):
            raise Unsupported("generator and coroutine functions are not compiled (they run natively)",
                              where=_where(code, None))
        self.arg_values = arg_values
        output.argument_values = {local_param_name(n): v for n, v in arg_values.items()}
        self.break_at = break_at
        for index, name in enumerate(code.co_freevars):
            self.cells[name] = CellVariable(source=ClosureSource(name, index), external=True, name=name)

    def bind_arguments(self) -> None:
        """Wrap the frame's arguments (installing their guards)."""
        origin = origin_of(self.code)
        stack_params = list(origin.resume_code.stack_params) if origin is not None else []
        self._stack_params = frozenset(stack_params)
        entering = origin is not None and origin.resume_index >= 0 and \
            self.table.opcodes[instructions_of(origin.code)[0][origin.resume_index].opname].enters_with
        # Locals a continuation receives only to keep their values alive (bound but not read
        # again before being rebound, compiler.graph_break._live) are carried unguarded.
        unread = set()
        lazy = False
        if origin is not None and origin.resume_index >= 0:
            read = live_locals(origin.code, origin.resume_index) | set(origin.resume_code.stack_locals)
            unread = {n for n in self.arg_values if n not in stack_params and n not in read
                      and n not in self.code.co_cellvars}
            # A stage of a loop (it runs once per iteration, or leaves a for loop by a break):
            # arguments are wrapped when used, and the loop's iterator is carried along.
            original = instructions_of(origin.code)[0]
            lazy = in_loop(origin.code, original, origin.resume_index) is not None or \
                within_for_loop(original, origin.resume_index, self.table)
        for name, value in self.arg_values.items():
            if name in unread:
                self.locals[name] = OpaqueValueVariable(type(value), LocalSource(name))
                continue
            opaque = name in stack_params and _carried_opaquely(value, entering and name == stack_params[-1])
            if not opaque and lazy and name not in self.code.co_cellvars:
                self.locals[name] = LazyArgument(value, LocalSource(name))
                continue
            if not opaque:
                try:
                    self.locals[name] = self.output.wrap(value, LocalSource(name))
                    continue
                except Unsupported:
                    if name not in stack_params or not isinstance(value, types.MethodType):
                        raise
            # An object on a continuation's stack that the tracer does not model as a value
            # (a with block's __exit__, ``log.append`` waiting for its argument, a context
            # manager about to be entered): often a new object on every call, so carried
            # along unguarded; any use of it breaks the graph (it runs natively).
            self.locals[name] = OpaqueValueVariable(type(value), LocalSource(name))
        # Arguments that are also cells: CPython moves them into their cells at frame entry
        # (table fact "cell_creation"; where MAKE_CELL makes them instead, its handler finds
        # the value in the local slot).
        for name in self.code.co_cellvars:
            cell = self.cells[name] = CellVariable(name=name)
            if name in self.locals and self.table.fact("cell_creation") == "frame_entry":
                cell.contents = self.locals[name]

    def step(self) -> None:
        if self.ip == self.break_at:
            raise BreakReached()
        forced = config.force_break
        if forced is not None and self.break_at is None and forced(self.code, self.ip):
            self.current = self.instructions[self.ip]
            raise self.unsupported(f"forced graph break at instruction {self.ip} (config.force_break)")
        super().step()

    def break_index(self) -> Optional[int]:
        """The instruction of this frame that was running when the trace failed; inside a
        traced ``with np.errstate`` block, the with statement's (its stub enters the block
        natively: the graph break cannot run the failing instruction under the block's
        error state otherwise)."""
        if self.open_errstates:
            return self.open_errstates[0]
        if self.current is None:
            return None
        return self._index.get(id(self.current))

    def enter_errstate(self, modes: Dict[str, str]) -> None:
        self.open_errstates.append(self._index[id(self.current)])
        self.errstate_overrides.append(modes)

    def exit_errstate(self) -> None:
        self.open_errstates.pop()

    def count_instruction(self, inst: Instruction) -> None:
        if inst.opname == "DELETE_FAST" and inst.argval in self._stack_params:
            # The continuation's prologue drops its stack parameters once they are on the stack
            # (lifetimes, opcode_tables.resume): bookkeeping of ours that Dynamo's resume
            # functions do not have, so not part of the count.
            return
        super().count_instruction(inst)

    def propagate(self, e: TracedException) -> None:
        exc = e.exc
        raise self.unsupported(f"the traced code raises {type(exc).__name__}: {exc} "
                               "(an exception leaving the frame: it runs natively)")

    @property
    def ir_opcodes(self) -> Counter:
        return self.output.ir_opcodes

    @property
    def ir_count(self) -> int:
        return sum(self.ir_opcodes.values())

    def run(self) -> VariableTracker:
        try:
            self.bind_arguments()
        except Unsupported as e:
            raise self.locate(e)
        if origin_of(self.code) is not None:
            # ir_count: Dynamo's resume functions set and clear a flag around their prologue
            # (``__is_tracing_resume_prologue = True ... = False``, torch 2.6+): four
            # instructions of the first segment that our continuations do without.
            self._segment.extend(DYNAMO_RESUME_PROLOGUE_FLAG)
        return self.run_located()


class InliningTranslator(InstructionTranslatorBase):
    def __init__(self, parent: InstructionTranslatorBase, fn: BaseUserFunctionVariable,
                 bound: Dict[str, VariableTracker]) -> None:
        super().__init__(parent.output, fn.code, fn.globals_dict(), fn.globals_source(parent),
                         parent.depth + 1)
        self.parent = parent
        self.fn = fn
        code = fn.code
        self.locals.update(bound)
        for name, cell in zip(code.co_freevars, fn.closure_cells(parent)):
            self.cells[name] = cell
        for name in code.co_cellvars:
            cell = self.cells[name] = CellVariable(name=name)
            if name in self.locals and self.table.fact("cell_creation") == "frame_entry":
                cell.contents = self.locals[name]
        if code.co_flags & inspect_CO_GENERATOR:
            self.yielded = []

    def count_instruction(self, inst: Instruction) -> None:
        # Counted by Dynamo's rule up to this function's last taken jump; its last segment
        # (up to its return) is not, as in Dynamo's inlining translator.
        super().count_instruction(inst)
        self.output.inlined_opcodes[inst.opname] += 1

    def run_inlined(self) -> VariableTracker:
        return self.run_located()
