"""Settings of the compiler, read at the moment they matter.

Change them as attributes (``compiler.config.cache_limit = 4``) or through the
environment at import time: ``TRACEMATRIX_STRICT=1`` sets
``raise_internal_errors``, ``TRACEMATRIX_LOGS=guards,recompiles`` enables log
channels (see ``compiler.logs``), ``TRACEMATRIX_DEBUG=1`` turns on the
per-instruction stack-effect check, ``TRACEMATRIX_NO_NUMBA=1`` clears ``use_numba``.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Optional

# Cache entries per code object; on the next miss the frame runs natively
# from then on, with a warning naming the failing guard.
cache_limit: int = 8

# A Python int or float whose value guard fails on a recompile becomes a graph input in later
# traces (compiler.variables.scalars: Dynamo's "unspecialize after the first change"); False
# keeps every Python value a constant (each new value recompiles, up to cache_limit).
dynamic_scalars: bool = os.environ.get("TRACEMATRIX_STATIC_SCALARS", "") in ("", "0")

# A bug in the tracer normally makes the frame run natively (recorded in the
# event and logged with its traceback); the project's own tests raise instead.
raise_internal_errors: bool = os.environ.get("TRACEMATRIX_STRICT", "") not in ("", "0")

# After every handler, compare the symbolic stack depth change with
# dis.stack_effect (cheap; catches a whole class of handler bugs).
debug_checks: bool = os.environ.get("TRACEMATRIX_DEBUG", "") not in ("", "0") or raise_internal_errors

# Guards against runaway traces: instructions stepped per frame (loops are
# unrolled) and depth of inlined calls (static recursion).
max_trace_instructions: int = 200_000
max_inline_depth: int = 48
# Items the tracer takes out of one iterable it unpacks (list(it), tuple(...), sum(...)):
# past it the construct is Unsupported instead of a trace that grows without bound.
max_container_items: int = 10_000
# Frames tracing may need below the compiled call (nested translators, the builder's
# recursion): a call with less headroom under sys.getrecursionlimit() runs natively.
trace_stack_margin: int = 300

# An unsupported construct becomes a graph break (graph so far compiled, the
# instruction run natively, a continuation compiled for the rest); False makes
# the whole frame run natively instead, as before graph breaks existed.
graph_breaks: bool = os.environ.get("TRACEMATRIX_NO_BREAKS", "") in ("", "0")

# Testing hook: a function (code, instruction index) -> bool; where it answers True,
# the compiled frame's own trace (not an inlined callee's, not a continuation's)
# treats that instruction as unsupported.  The project's tests use it to break
# every frame at every instruction and compare with the plain function.
force_break: Optional[Callable[[Any, int], bool]] = None

# Under a trace function (a debugger, coverage) compiled functions run natively, so that
# the trace function sees the plain frames and lines.  True keeps them compiled: a
# debugger then steps through the generated code (cache entries, numpy kernels, break
# stubs, continuations), whose source is registered (compiler.generated_code).
# compiler.debug.prepare_debug sets it for its block; TRACEMATRIX_TRACE_GENERATED_CODE=1.
trace_generated_code: bool = os.environ.get("TRACEMATRIX_TRACE_GENERATED_CODE", "") not in ("", "0")

# Dynamic shapes for compilations whose ``dynamic`` option is not given (or None): None is
# automatic dynamic (static first, the dimensions that changed symbolic on a recompile),
# True every dimension symbolic from the first compile, False static shapes only.
# TRACEMATRIX_DYNAMIC=1 / =0 set it (the project's tests run the corpus with 1).
dynamic: Optional[bool] = {"1": True, "0": False}.get(os.environ.get("TRACEMATRIX_DYNAMIC", ""))

# The numpy backend runs large float chains as generated numba loops where numba is
# installed (the ``cpu`` extra); False (or TRACEMATRIX_NO_NUMBA=1 at import time) keeps every
# graph on the pure-NumPy path (blocks), as on a machine without numba.  Read when a graph
# is compiled.
use_numba: bool = os.environ.get("TRACEMATRIX_NO_NUMBA", "") in ("", "0")

# Log channels switched on (names as in compiler.logs.CHANNELS).
logs: str = os.environ.get("TRACEMATRIX_LOGS", "")

# Options accepted by compiler.compile(fn, **options): name -> (validator, description).
COMPILE_OPTIONS = {
    "cache_limit": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
                    "a positive int (cache entries per code object)"),
    "debug_checks": (lambda v: isinstance(v, bool), "a bool (per-instruction stack-effect checks)"),
    # Dynamic shapes (compiler.symbolic_shapes): None (the default) compiles static first and
    # makes symbolic the dimensions whose size changed when a recompile follows ("automatic
    # dynamic"); True makes every dimension symbolic from the first compile; False never.
    # Sizes 0 and 1 are always specialized.
    "dynamic": (lambda v: v is None or v is True or v is False,
                "None (automatic dynamic shapes), True (every dimension dynamic) or False (static shapes)"),
    # False: this function's compilations (its continuations' and callees' too) are invisible:
    # no CompilationEvents, no compile ids from the shared counter, not in explain(), no
    # bytecode hooks, and the compiled functions it calls run as they are instead of being
    # inlined.  For a harness that compiles code which itself inspects the compiler (the
    # project's own tests, matrix.project_tests).
    "observed": (lambda v: isinstance(v, bool), "a bool (False: compilations invisible to the compiler's "
                                                 "introspection; for harnesses)"),
}
