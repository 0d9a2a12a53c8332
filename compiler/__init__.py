"""tracematrix's tracing compiler for NumPy code.

    import compiler
    f = compiler.compile(fn, backend="eager", fullgraph=False)   # or @compiler.compile(...)
    ex = compiler.explain(fn, *args)       # graphs, breaks, guards, events
    compiler.events()                      # CompilationEvent per compiled frame since reset()
    compiler.reset()
    compiler.allow_in_graph(func); compiler.disable(func)

Introspection (stable, versioned by compiler.API_VERSION): compiler.cache_entries(fn),
compiler.register_bytecode_hook(hook).  Debug dumps of transformed code, break stubs and
continuations, and a dump directory per compile: compiler.debug (prepare_debug).
Logs: TRACEMATRIX_LOGS=guards,recompiles,graph_breaks,graph_code,bytecode (or
``compiler.logs.enable(...)``).  Settings: ``compiler.config``.
"""
from __future__ import annotations

from typing import List

from . import config, debug, logs
from .exc import InternalCompilerError, Unsupported
from .events import CompilationEvent, all_events
from .explain import ExplainOutput, explain
from .api import allow_in_graph, compile, disable, reset
from .introspection import API_VERSION, EntryInfo, cache_entries, register_bytecode_hook
from . import handlers as _handlers  # noqa: F401  (binds opcode handlers into the running table)

logs.enable_from_setting(config.logs)


def events() -> List[CompilationEvent]:
    """The CompilationEvents recorded since the last reset(), oldest first."""
    return all_events()


__all__ = ["compile", "explain", "events", "reset", "allow_in_graph", "disable", "Unsupported",
           "InternalCompilerError", "CompilationEvent", "ExplainOutput", "config", "debug", "logs",
           "API_VERSION", "EntryInfo", "cache_entries", "register_bytecode_hook"]
