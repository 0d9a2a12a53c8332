"""Per-code-object caches of compiled entries, and compiling a frame on a miss.

A ``FrameCache`` holds the entries of one code object (with one globals
dict), newest first.  Each entry is one generated function (guards + graph
call + output rebuild) returning ``MISS`` when its guards fail.  On a miss
the frame is traced again; the newest entry's first failing guard is the
recompile reason.  After ``config.cache_limit`` entries the frame runs
natively from then on, with a warning.
"""
from __future__ import annotations

import time
import traceback
import types
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

from opcode_tables.resume import origin_of

from . import config, events, logs
from .entry_codegen import (MISS, OutputCodegen, build_entry_source, compile_entry, entry_params,
                            graph_break_body, graph_call_body, native_call_body, native_scope)
from .events import CompilationEvent
from .exc import InternalCompilerError, Unsupported
from .guards import Guard, Namespace, first_failing
from .ops import may_fail_at_run_time
from .sources import param_names


class CacheEntry:
    def __init__(self, fn, guards: List[Guard], ns: Namespace, params: List[str], source: str,
                 event: CompilationEvent, graph=None, compiled_graph=None, native: bool = False) -> None:
        self.fn = fn
        self.guards = guards
        self.ns = ns
        self.params = params
        self.source = source
        self.event = event
        self.graph = graph
        self.compiled_graph = compiled_graph
        self.native = native

    def first_failing_guard(self, values: Sequence[Any], closure) -> Optional[Guard]:
        return first_failing(self.guards, self.params, self.ns, [closure, *values])


class FrameCache:
    def __init__(self, code: types.CodeType) -> None:
        self.code = code
        self.entries: List[Any] = []          # the generated entry functions, newest first
        self.cache_entries: List[CacheEntry] = []
        self.native = False                   # run natively from now on
        self.native_reason: Optional[str] = None
        self.frame_id: Optional[int] = None
        self.compiles = 0
        # Stubs and continuations of this function's graph breaks (a continuation's own
        # cache points at its root function's registry).
        from .resume import Registry
        self.registry = Registry()

    def clear(self) -> None:
        self.registry.clear()
        self.entries.clear()
        self.cache_entries.clear()
        self.native = False
        self.native_reason = None
        self.frame_id = None
        self.compiles = 0


_caches: Dict[Tuple[types.CodeType, int], FrameCache] = {}
_frame_ids = [0]
# Every cache entry made, in order (compiler.explain collects the graphs of one call from it).
_made_entries: List[CacheEntry] = []


def entries_made() -> int:
    return len(_made_entries)


def entries_since(start: int) -> List[CacheEntry]:
    return _made_entries[start:]


def cache_for(fn: types.FunctionType) -> FrameCache:
    key = (fn.__code__, id(fn.__globals__))
    cache = _caches.get(key)
    if cache is None:
        cache = _caches[key] = FrameCache(fn.__code__)
    return cache


def reset() -> None:
    """Empty every cache (wrappers keep their FrameCache object, now empty) and forget them."""
    for cache in _caches.values():
        cache.clear()
    _caches.clear()
    _made_entries.clear()
    _frame_ids[0] = 0


def _frame_name(fn: types.FunctionType) -> str:
    code = fn.__code__
    if origin_of(code) is not None:
        return fn.__qualname__  # a continuation: "<function's qualname>.__resume_at_<offset>"
    return getattr(code, "co_qualname", code.co_name)


def compile_frame(fn: types.FunctionType, cache: FrameCache, values: Sequence[Any], backend,
                  fullgraph: bool, limit: int) -> Any:
    """Trace ``fn`` for these argument values, install a new entry, and run it.
    Returns the call's result."""
    code = fn.__code__
    if cache.frame_id is None:
        cache.frame_id = _frame_ids[0]
        _frame_ids[0] += 1
    compile_id = f"{cache.frame_id}/{cache.compiles}"
    event = CompilationEvent(compile_id=compile_id, frame_name=_frame_name(fn),
                             filename=code.co_filename, firstlineno=code.co_firstlineno,
                             backend=backend.name)
    closure = fn.__closure__
    if cache.cache_entries:
        failing = cache.cache_entries[0].first_failing_guard(values, closure)
        event.recompile_reason = failing.name if failing is not None else "no guard failed (entry rejected)"
        logs.log("recompiles", compile_id, "recompiling %s: %s", event.frame_name, event.recompile_reason)

    if len(cache.cache_entries) >= limit:
        reason = (f"cache limit reached ({limit} entries for {event.frame_name}); "
                  f"last recompile reason: {event.recompile_reason}")
        warnings.warn(f"tracematrix: {reason}; the function runs natively from now on", RuntimeWarning,
                      stacklevel=4)
        cache.native = True
        cache.native_reason = reason
        event.fallback_reason = reason
        events.record(event)
        logs.log("recompiles", compile_id, "%s", reason)
        return _call_native(fn, code, values)

    cache.compiles += 1
    start = time.perf_counter()
    names = param_names(code)
    try:
        entry = _trace_and_build(fn, names, values, backend, event, fullgraph, cache.registry, limit)
    except Unsupported as e:
        if fullgraph:
            event.compile_time_s = time.perf_counter() - start
            event.fallback_reason = str(e)
            events.record(event)
            raise
        # Not reached: _trace_and_build turns Unsupported into a native entry.
        raise
    except Exception as e:  # a bug in the compiler: never the user's problem
        event.compile_time_s = time.perf_counter() - start
        event.internal_error = traceback.format_exc()
        event.fallback_reason = f"internal compiler error: {type(e).__name__}: {e}"
        events.record(event)
        if config.raise_internal_errors:
            raise InternalCompilerError(f"while compiling {event.frame_name}: {type(e).__name__}: {e}") from e
        logs.log_exception("fallbacks", compile_id, f"internal error compiling {event.frame_name}; "
                           "it runs natively")
        cache.native = True
        cache.native_reason = event.fallback_reason
        return _call_native(fn, code, values)
    event.compile_time_s = time.perf_counter() - start
    events.record(event)
    _made_entries.append(entry)
    cache.cache_entries.insert(0, entry)
    cache.entries.insert(0, entry.fn)
    result = entry.fn(closure, *values)
    if result is MISS:
        if config.raise_internal_errors:
            raise InternalCompilerError(f"a new cache entry of {event.frame_name} rejects the inputs it was "
                                        f"traced with (guard: {entry.first_failing_guard(values, closure)})")
        cache.native = True
        cache.native_reason = "internal compiler error: fresh entry rejected its own inputs"
        return _call_native(fn, code, values)
    return result


def _call_native(fn, code, values):
    scope = native_scope(fn)
    src = f"def _call({', '.join(entry_params(param_names(code)))}):\n    " + native_call_body(code)[0] + "\n"
    exec(src, scope)
    return scope["_call"](fn.__closure__, *values)


def _trace_and_build(fn, names: List[str], values: Sequence[Any], backend, event: CompilationEvent,
                     fullgraph: bool, registry, limit: Optional[int]) -> CacheEntry:
    from .tracer import InstructionTranslator
    tx = None
    try:
        tx = InstructionTranslator(fn, dict(zip(names, values)))
        result = tx.run()
        tx.flush_segment()
        cg = OutputCodegen(tx, tx.output.ns)
        return_expr = result.reconstruct(cg)
        effects = tx.output.side_effects.replay(cg)
        tx.output.finalize_alias_guards()
        tx.output.finalize_array_write_guards()
        return _graph_entry(fn, tx, cg, names, return_expr, effects, backend, event)
    except Unsupported as e:
        if e.where is None and tx is not None:
            e.where = tx.where()
            e.args = (str(e),)
        if fullgraph:
            raise
        index = tx.break_index() if tx is not None else None
        if index is not None and config.graph_breaks:
            try:
                return _break_entry(fn, names, values, backend, event, e, index, registry, limit)
            except Unsupported as why:
                e = Unsupported(f"{e.reason}; it cannot become a graph break: {why.reason}", where=e.where)
        return _native_entry(fn, tx, names, event, e)


def _break_entry(fn, names: List[str], values: Sequence[Any], backend, event: CompilationEvent,
                 error: Unsupported, index: int, registry, limit: Optional[int]) -> CacheEntry:
    """Trace again up to the failing instruction and make the entry that breaks there."""
    from . import graph_break
    from .resume import Resume
    from .tracer import BreakReached, InstructionTranslator
    tx = InstructionTranslator(fn, dict(zip(names, values)), break_at=index)
    try:
        tx.run()
    except BreakReached:
        pass
    else:
        raise Unsupported("the second trace of the frame did not reach the break point")
    plan = graph_break.plan(tx)
    output = tx.output
    cg = OutputCodegen(tx, output.ns)
    cg.registry = registry
    cg.backend = backend
    value_exprs = graph_break.stub_arguments(tx, plan, cg, getattr(error, "inlined_callee", None))
    closure = graph_break.closure_expr(tx, cg)
    effects = [f"_cl2 = {closure}"] + output.side_effects.replay(cg)
    output.finalize_alias_guards()
    output.finalize_array_write_guards()
    stub = graph_break.stub_for(plan, fn.__globals__, registry)
    conts = tuple(graph_break.continuation_for(plan, ex, fn.__globals__, backend, registry, limit)
                  for ex in plan.exits)
    tail = graph_break.break_tail(plan, output.ns.const(stub), "_a", output.ns.const(conts) if conts else None,
                                  tx.table)
    reason = graph_break.break_reason(plan, error)
    event.graph_break_count = 1
    event.break_reasons = [reason]
    logs.log("graph_breaks", event.compile_id, "graph break in %s: %s", event.frame_name, reason)
    return _graph_entry(fn, tx, cg, names, None, effects, backend, event,
                        break_parts=(value_exprs, tail, {"_Resume": Resume}))


def _fill_trace_metrics(tx, event: CompilationEvent) -> None:
    event.ir_opcodes = dict(sorted(tx.ir_opcodes.items()))
    event.inlined_opcodes = dict(sorted(tx.output.inlined_opcodes.items()))
    event.ir_count = tx.ir_count
    guards = tx.output.guards.guards
    event.guard_count = len(guards)
    event.guards = [g.name for g in guards]


def _graph_entry(fn, tx, cg: OutputCodegen, names, return_expr: Optional[str], effects: List[str], backend,
                 event: CompilationEvent, break_parts=None) -> CacheEntry:
    output = tx.output
    graph = output.graph
    compiled = None
    input_exprs: List[str] = []
    if cg.outputs:
        graph.output(cg.outputs)
        compiled = backend.compile(graph)
        input_exprs = [source.expr(output.ns.const) for source in output.graph_inputs]
        event.graph_count = 1
        event.graph_node_count = len(graph.call_nodes)
        event.graph_hashes = [graph.graph_hash()]
        event.graph_texts = [str(graph)]
        event.kernel_count = getattr(compiled, "kernel_count", 0)
    _fill_trace_metrics(tx, event)
    fallible = compiled is not None and any(may_fail_at_run_time(n) for n in graph.call_nodes)
    on_error = native_call_body(fn.__code__) if fallible else None
    extra_scope: Dict[str, Any] = {}
    if break_parts is None:
        body = graph_call_body(input_exprs, len(cg.outputs), return_expr, effects, on_graph_error=on_error)
    else:
        value_exprs, tail, extra_scope = break_parts
        body = graph_break_body(input_exprs, len(cg.outputs), value_exprs, effects, tail, on_graph_error=on_error)
    guards = output.guards.guards
    source = build_entry_source(names, guards, body)
    scope = {"_G": fn.__globals__, "_B": output.f_builtins, "_graph": compiled, **native_scope(fn),
             **extra_scope}
    entry_fn = compile_entry(source, output.ns, scope, f"<tracematrix entry {event.compile_id} "
                                                         f"{event.frame_name}>")
    logs.log("guards", event.compile_id, "guards of %s:\n  %s", event.frame_name,
             "\n  ".join(event.guards) or "(none)")
    if compiled is not None:
        logs.log("graph_code", event.compile_id, "graph of %s:\n%s", event.frame_name, str(graph))
    logs.log("bytecode", event.compile_id, "entry code of %s:\n%s", event.frame_name, source)
    ns = output.ns
    ns.values.update(scope)
    return CacheEntry(entry_fn, guards, ns, entry_params(names), source, event,
                      graph if compiled is not None else None, compiled)


def _native_entry(fn, tx, names, event: CompilationEvent, error: Unsupported) -> CacheEntry:
    """The frame runs natively for inputs passing the guards collected up to the failure:
    the trace up to that point depended on nothing else, so it would fail the same way."""
    event.fallback_reason = str(error)
    event.break_reasons = [str(error)]
    logs.log("graph_breaks", event.compile_id, "%s runs natively: %s", event.frame_name, error)
    if tx is None:
        guards: List[Guard] = []
        ns = Namespace()
        f_builtins: Dict[str, Any] = {}
    else:
        _fill_trace_metrics(tx, event)
        guards = tx.output.guards.guards
        ns = tx.output.ns
        f_builtins = tx.output.f_builtins
        # The partial trace's instruction count is not an ir_count (no frame was compiled).
        event.ir_count = 0
        event.ir_opcodes = {}
    source = build_entry_source(names, guards, native_call_body(fn.__code__))
    scope = {"_G": fn.__globals__, "_B": f_builtins, **native_scope(fn)}
    entry_fn = compile_entry(source, ns, scope, f"<tracematrix native entry {event.compile_id}>")
    ns.values.update(scope)
    return CacheEntry(entry_fn, guards, ns, entry_params(names), source, event, native=True)
