"""OutputGraph: what one trace of a frame produces, shared by the frame's
translator and every inlined callee's.

It owns the graph being built, the guards, the namespace of constants the
cache entry's generated code refers to, and the mapping from sources to the
trackers wrapped from them (reading ``L['x']`` twice yields one tracker, so
aliasing in the trace matches the program).

Trackers make their children through it (``tx.output.wrap(value, source)``,
``tx.output.wrap_constant_result(value)``): the tracker builder
(compiler.variables.builder, which knows every tracker class) is handed in by
the tracer, so that the tracker modules import neither the builder nor each
other in a circle.
"""
from __future__ import annotations

import builtins
import types
import weakref
from collections import Counter
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import numpy as np

from .exc import Unsupported
from .graph import Graph, Node
from .guards import GuardSet, Namespace
from .side_effects import SideEffects
from .sources import LocalSource, Source, has_instance_dict
from .symbolic_shapes import ShapeEnv
from .variables.base import FixedObjectVariable, VariableTracker


# builder.wrap(output, value, source) and builder.wrap_constant_result(value)
WrapFn = Callable[["OutputGraph", Any, Optional[Source]], VariableTracker]
WrapConstantFn = Callable[[Any], VariableTracker]


class OutputGraph:
    def __init__(self, code: types.CodeType, f_globals: dict, closure: Optional[tuple], *,
                 wrap: WrapFn, wrap_constant: WrapConstantFn) -> None:
        self._build = wrap
        self._build_constant = wrap_constant
        self.code = code
        self.f_globals = f_globals
        b = f_globals.get("__builtins__", builtins)
        self.f_builtins: dict = b if isinstance(b, dict) else vars(b)
        self.closure = closure
        # The frame's arguments under their generated names (L_x), for evaluating sources.
        self.argument_values: Dict[str, Any] = {}
        self._scope: Dict[str, Any] = {}
        self._scope_of: Tuple[int, Optional[Dict[str, Any]]] = (-1, None)
        self.inline_compiled = True   # see InstructionTranslator
        # Names of the sources whose Python int / float values are graph inputs, not constants
        # (compiler.variables.scalars; the frame's cache collects them on recompiles).
        self.dynamic_scalars: FrozenSet[str] = frozenset()
        self.graph = Graph()
        self.ns = Namespace()
        self.guards = GuardSet(self.ns)
        # The symbols of dynamic dimensions; their use records guards into self.guards.
        self.shape_env = ShapeEnv(self.guards)
        self._wrapped: Dict[Source, VariableTracker] = {}
        # Mutable outside objects by identity (value kept alive so ids stay unique): one
        # tracker per object, whatever the number of sources it is reached through.
        self._by_id: Dict[int, Tuple[Any, VariableTracker]] = {}
        # Containers whose items the builder is wrapping now (cycles, nesting depth).
        self.building: Set[int] = set()
        self.side_effects = SideEffects()
        # Input arrays in placeholder order, with the source each one is read from.
        self.graph_inputs: List[Source] = []
        # Generators are traced eagerly (all items at creation); that is exact only while no
        # mutation interleaves with their lazy execution.  See note_mutation.
        self.generator_starts: List[int] = []
        self.pending_generators: List[Tuple[Any, Set[int]]] = []
        # Per generator body being traced (innermost last): the objects from outside the trace
        # it changed, which the trace first met inside the body (serial -> tracker).
        self.generator_body_changes: List[Dict[int, VariableTracker]] = []
        # ir_count by Dynamo's rule, opcode by opcode: every translator of this trace (the
        # frame and the functions it inlines) adds the segment it ran at each taken jump, and
        # the frame adds its last segment at its return (InstructionTranslatorBase.jump_to).
        self.ir_opcodes: Counter = Counter()
        # opname -> count over every inlined frame of this trace, counted or not (coverage)
        self.inlined_opcodes: Counter = Counter()
        # Outside objects a local of the trace let go of (del, rebinding); see note_dropped_local.
        self.dropped_outside: List[Source] = []
        # Instructions stepped by every translator of this trace (config.max_trace_instructions).
        self.traced_steps = 0

    def note_mutation(self, var: VariableTracker, what: str) -> None:
        """Refuse mutations that would make eager generator tracing differ from Python's
        lazy generators: a generator body changing an object from outside it, or anything
        an unfinished generator can reach changing before the generator is exhausted."""
        if self.generator_starts and var.serial < self.generator_starts[-1]:
            raise Unsupported(f"{what} inside a generator body, on an object from outside it "
                              "(generators are traced eagerly)")
        if self.generator_starts and var.source is not None:
            # From outside the trace, first met inside the body: allowed while nothing else
            # touches it before the generator is exhausted (check_generator_reads).
            for changes in self.generator_body_changes:
                changes[var.serial] = var
        for iterator, reachable in self.pending_generators:
            if not iterator.exhausted and var.serial in reachable:
                raise Unsupported(f"{what} on an object an unfinished generator reads or changes "
                                  "(generators are traced eagerly)")

    def check_generator_reads(self, var: VariableTracker) -> None:
        """Outside the generator bodies, ``var`` is read: refused while an unfinished generator's
        body (run ahead) changed it."""
        if self.generator_starts:
            return
        for iterator, _reachable in self.pending_generators:
            if not iterator.exhausted and var.serial in iterator.body_changes:
                raise Unsupported(f"reading {var.describe()}, which an unfinished generator changes "
                                  "(generators are traced eagerly)")

    def check_unfinished_generators(self) -> None:
        """At the end of the trace: a generator never run to its end must not have changed
        anything from outside after its last step (its body ran to the end eagerly; plain
        Python never ran that part)."""
        for iterator, _reachable in self.pending_generators:
            if not iterator.exhausted and iterator.body_changes:
                raise Unsupported("a generator that changes objects from outside the trace is left "
                                  "unfinished (generators are traced eagerly)")

    def wrap(self, value: Any, source: Optional[Source]) -> VariableTracker:
        """The tracker for ``value`` read from ``source`` (guards installed), one per source and
        per mutable object; with no source, a tracker with no guards."""
        wrap = self._build
        if source is None:
            return wrap(self, value, None)
        existing = self._wrapped.get(source)
        if existing is not None and self.pending_generators:
            self.check_generator_reads(existing)
        if existing is None:
            alias = self._by_id.get(id(value)) if _one_tracker_per_object(value) else None
            if alias is not None and alias[0] is value:
                existing = alias[1]
                self.guards.add(f"{source.name()} is {existing.source.name()}",
                                f"{source.expr(self.ns.const)} is {existing.source.expr(self.ns.const)}")
            else:
                existing = wrap(self, value, source)
                if _one_tracker_per_object(value):
                    self._by_id[id(value)] = (value, existing)
            self._wrapped[source] = existing
        return existing

    def parameters_by_object(self) -> Dict[int, Tuple[Any, Source]]:
        """id(object) -> (object, the frame's parameter that held it when the trace read it):
        generated code names such an object through the parameter rather than keeping a
        reference of the cache's own (compiler.entry_codegen.OutputCodegen.const)."""
        found: Dict[int, Tuple[Any, Source]] = {}
        for source, var in self._wrapped.items():
            if type(source) is LocalSource:
                obj = _object_of(var)
                if obj is not None:
                    found.setdefault(id(obj), (obj, source))
        return found

    def adopt(self, value: Any, source: Optional[Source], var: VariableTracker) -> None:
        """Register ``var`` as the tracker of ``value`` before its items are wrapped (the
        builder calls this), so that an item reached again through the container itself (a
        list holding itself, two references to one list) is the same tracker."""
        if source is not None:
            self._wrapped[source] = var
            if _one_tracker_per_object(value):
                self._by_id[id(value)] = (value, var)

    def wrap_constant_result(self, value: Any, inputs: Sequence[VariableTracker] = ()) -> VariableTracker:
        """A tracker for a value computed at trace time: constants and containers of constants.

        ``inputs``: the trackers the value was computed from.  A computation that returns one
        of its inputs' objects itself (``bytes(b)``, ``str(s)``, ``s.strip()`` with nothing to
        strip, ``t + ()``, ``format(s, "")``) gives that input's tracker: the entry then hands
        on the object the caller passed, as the plain function does (its identity on every
        later call, and no reference of the cache's own to it), not the trace's."""
        for var in inputs:
            # A container's constant is rebuilt from its items: never the input's own object.
            if var.source is not None and not hasattr(var, "items") and var.is_python_constant() \
                    and var.as_python_constant() is value:
                return var
        return self._build_constant(value)

    def finalize_array_write_guards(self) -> None:
        """Input arrays written in place must not share memory with the other input arrays
        (the graph reads those before the replayed write): refused now if they do, guarded
        for later calls."""
        inputs = [v for v in self._wrapped.values() if getattr(v, "example", None) is not None]
        for var in self.side_effects.mutated_arrays:
            for other in inputs:
                if other is var:
                    continue
                share = self.ns.const(np.may_share_memory, "f")
                if np.may_share_memory(var.example, other.example):
                    # The native entry this leads to is only for calls that alias the same way.
                    self.guards.add(f"{var.source.name()} shares memory with {other.source.name()}",
                                    f"{share}({var.source.expr(self.ns.const)}, "
                                    f"{other.source.expr(self.ns.const)})")
                    raise Unsupported(f"in-place write to {var.source.name()}, which shares memory "
                                      f"with {other.source.name()}")
                self.guards.add(f"{var.source.name()} shares no memory with {other.source.name()}",
                                f"not {share}({var.source.expr(self.ns.const)}, "
                                f"{other.source.expr(self.ns.const)})")

    def note_dropped_local(self, var: VariableTracker, frame_values: Callable[[], List[Any]]) -> None:
        """A local let go of ``var`` (``del x``, or ``x`` rebound); ``frame_values()``: what the
        translators' locals and stacks still hold (asked only when ``var`` is, or holds, an
        argument of the frame: most dropped values are the trace's own).

        Plain Python frees an object at the instruction that drops its last reference: its
        weak references' callbacks and its ``__del__`` run there, in order with the code
        around it, and what they change the rest of the frame sees.  A compiled region drops
        its references when its entry returns, after the region's replayed side effects, and
        the trace has already read whatever those callbacks would change.  An object from
        outside the trace that has weak references or a finalizer therefore ends the graph
        here, so the deletion runs natively; one without them is guarded to have none on later
        calls.  (Objects the trace made itself have no weak references: making one breaks.)"""
        # Only the frame's own argument slots can hold an outside object's last reference (a
        # caller moves its arguments in); what is read from a container, an attribute or a
        # global stays held there.
        arguments = [v for v in _outside_values_in(var) if type(v.source) is LocalSource]
        if not arguments:
            return
        held = frame_values()
        for argument in arguments:
            if not any(v is argument for v in held):
                self._check_released(argument, [0])

    def _check_released(self, var: VariableTracker, count: List[int]) -> None:
        """``var`` (from outside) may go now, and with it what only it holds: the items of a
        container the trace tracked item by item, checked the same way."""
        source = var.source
        count[0] += 1
        if count[0] > _MAX_RELEASE_CHECKS:
            raise Unsupported(f"dropping a reference to {source.name()}, a container of more than "
                              f"{_MAX_RELEASE_CHECKS} objects that could each have finalizers")
        try:
            value = eval(source.expr(self.ns.const), self.eval_scope())  # noqa: S307 - our own text
        except Exception:  # a source that cannot be read back here: the guard cannot be made
            raise Unsupported(f"dropping a reference to {source.name()}, whose weak references "
                              "cannot be checked") from None
        kind = type(value)
        if getattr(kind, "__del__", None) is not None:
            raise Unsupported(f"dropping a reference to {source.name()}, a {kind.__name__} with "
                              "__del__: it must run where the plain frame lets the object go")
        if kind.__weakrefoffset__:
            if weakref.getweakrefcount(value):
                raise Unsupported(f"dropping a reference to {source.name()}, which has weak references: "
                                  "their callbacks must run where the plain frame lets it go")
            if not any(s == source for s in self.dropped_outside):
                self.dropped_outside.append(source)
        items = getattr(var, "items", None)
        children = items.values() if type(items) is dict else items if type(items) is list else ()
        for child in children:
            if isinstance(child, VariableTracker) and child.source is not None:
                self._check_released(child, count)

    def finalize_dropped_guards(self) -> None:
        """Guards for note_dropped_local: the objects still have no weak references."""
        for source in self.dropped_outside:
            self.guards.no_weak_references(source)

    def finalize_alias_guards(self) -> None:
        """Outside objects the trace mutated must stay distinct from the other outside objects
        of their type on later calls (the replay assumes exactly this aliasing)."""
        self._refuse_instance_dicts_seen_twice()
        mutated = [v for v in self.side_effects.mutated_containers] + \
            [v for _, v in self._by_id.values() if id(getattr(v, "value", None)) in
             self.side_effects.attr_owner_ids()]
        for var in mutated:
            for value, other in self._by_id.values():
                if other is var or other.source is None or type(value) is not var.python_type():
                    continue
                self.guards.add(f"{var.source.name()} is not {other.source.name()}",
                                f"{var.source.expr(self.ns.const)} is not {other.source.expr(self.ns.const)}")

    def _refuse_instance_dicts_seen_twice(self) -> None:
        """An outside dict that is an outside object's ``__dict__`` is that object's attributes:
        traced as a dict of its own and as attributes, a change made through one is not seen
        through the other and the replays undo each other.  Refused (the frame runs natively)
        where either side changed; guarded distinct for later calls otherwise."""
        attr_owners = self.side_effects.attr_owner_ids()
        mutated_ids = {id(v) for v in self.side_effects.mutated_containers}
        objects = [(value, var) for value, var in self._by_id.values()
                   if var.source is not None and has_instance_dict(type(value)) and type(value) is not dict]
        for d, dvar in self._by_id.values():
            if type(d) is not dict or dvar.source is None:
                continue
            for obj, ovar in objects:
                if id(dvar) not in mutated_ids and id(obj) not in attr_owners:
                    continue
                d_expr, o_expr = dvar.source.expr(self.ns.const), ovar.source.expr(self.ns.const)
                if getattr(obj, "__dict__", None) is d:
                    self.guards.add(f"{dvar.source.name()} is {ovar.source.name()}.__dict__",
                                    f"{d_expr} is {o_expr}.__dict__")
                    raise Unsupported(f"{dvar.source.name()} is the __dict__ of {ovar.source.name()}, "
                                      "changed both as a dict and as attributes")
                self.guards.add(f"{dvar.source.name()} is not {ovar.source.name()}.__dict__",
                                f"{d_expr} is not getattr({o_expr}, '__dict__', None)")

    def wrap_cell_contents(self, source: Source) -> VariableTracker:
        value = eval(source.expr(self.ns.const), self.eval_scope())  # noqa: S307 - our own generated text
        return self.wrap(value, source)

    def eval_scope(self) -> Dict[str, Any]:
        """The names a source expression refers to, as the entry will have them.  Rebuilt only
        when the namespace changed: a loop reading a closure cell on every step would otherwise
        copy the whole namespace each time (CPython's test_statistics: minutes of tracing)."""
        version, arguments = self._scope_of
        if version != self.ns.version or arguments is not self.argument_values:
            scope = dict(self.ns.values)
            scope.update(self.argument_values)
            scope.update({"_G": self.f_globals, "_B": self.f_builtins, "_cl": self.closure})
            self._scope, self._scope_of = scope, (self.ns.version, self.argument_values)
        return self._scope

    def placeholder_for(self, var: VariableTracker) -> Node:
        """The graph input for an array that came from outside (made on first use)."""
        source = var.source
        node = self.graph.placeholder(_placeholder_name(source), var.meta)
        self.graph_inputs.append(source)
        return node


# Objects checked when one local lets go of a container of them: past this, a break.
_MAX_RELEASE_CHECKS = 64


def _outside_values_in(var: VariableTracker, seen: Optional[Set[int]] = None) -> List[VariableTracker]:
    """``var`` itself if it came from outside, else the outside values a container the trace
    made holds (through nested ones): dropping the container drops them."""
    if var.source is not None:
        return [var]
    seen = set() if seen is None else seen
    if id(var) in seen:
        return []
    seen.add(id(var))
    found: List[VariableTracker] = []
    items = getattr(var, "items", None)
    children = items.values() if type(items) is dict else items if type(items) is list else ()
    for child in children:
        if isinstance(child, VariableTracker):
            found += _outside_values_in(child, seen)
    return found


def _placeholder_name(source: Source) -> str:
    # L['x'] -> L_x, G['w'] -> G_w, L['xs'][0] -> L_xs_0 (Graph makes it an identifier).
    return source.name().replace("['", "_").replace("']", "").replace("[", "_").replace("]", "").replace(".", "_")


def _object_of(var: VariableTracker) -> Any:
    """The object a tracker of an outside value stands for (None for values built by the trace)."""
    if isinstance(var, FixedObjectVariable):
        return var.fixed_object()
    return getattr(var, "value", None)


def _one_tracker_per_object(value: Any) -> bool:
    """Values reached through several sources that must stay one tracker (guarded with
    ``is``): mutable objects, and arrays, whose in-place writes every alias sees."""
    return type(value) is np.ndarray or _is_mutable_object(value)


def _is_mutable_object(value: Any) -> bool:
    # Asked of the type, never the object: isinstance() reads an object's __class__, which
    # runs a class's own __getattribute__ (a lazy module loads) at trace time.
    tp = type(value)
    if issubclass(tp, (list, dict, set, bytearray)):
        return True
    return has_instance_dict(tp) and tp.__module__ != "builtins" and not issubclass(
        tp, (type, types.ModuleType, types.FunctionType, np.ndarray, np.generic))
