"""Trace rules: what the tracer does with a callable it meets.

- "graph":   an allow-listed NumPy function (compiler.ops) or one the user
             registered with ``allow_in_graph``: a graph node.
- "fold":    a pure function evaluated at trace time on constant arguments
             (math, operator, most builtins).
- "inline":  a user Python function: traced by a nested translator.
- "skip":    anything else, and everything passed to ``disable``:
             Unsupported: a graph break, the call runs natively (a user function
             whose own trace failed becomes a compiled frame of its own).

Library code is never inlined (as Dynamo's skipfiles): functions and classes of
the standard library and of installed packages (NumPy included) are "skip" and
run natively, as the library's authors tested them.  CPython's own ``test``
package is not library code: it is the code the cpython-tests suite compiles.

Some C functions look at the frame that calls them (``sys._getframe``,
``warnings.warn``'s stacklevel, ``locals()``, ``exec`` without namespaces...).
When an inlined user function calls one, that function must run as a real
frame called by a real frame of its caller, so it is not compiled as a frame of
its own: ``frame_sensitive`` says which.

Code that reads a clock times itself.  A compiled frame's first call compiles
each continuation when it first reaches it, inside whatever the frame is
timing, and that latency changes what the code measures and decides (CPython's
test_int skips its digit-limit test when a conversion took under 1/64 s): a
frame that calls a clock runs natively (``reads_clock``).
"""
from __future__ import annotations

import builtins
import datetime
import math
import os
import operator
import sys
import sysconfig
import time
import types
import warnings
from typing import Any, Callable, Dict, Optional, Tuple

import opcode_tables

from .ops.catalog import INLINED

_disabled: Dict[int, Any] = {}
_allowed: Dict[int, Any] = {}


def disable(fn: Callable) -> None:
    _disabled[id(fn)] = fn


def is_disabled(fn: Any) -> bool:
    return id(fn) in _disabled and _disabled[id(fn)] is fn


def allow(fn: Callable, opinfo: Any) -> None:
    _allowed[id(fn)] = (fn, opinfo)


def allowed_opinfo(fn: Any):
    entry = _allowed.get(id(fn))
    return entry[1] if entry is not None and entry[0] is fn else None


def original_of_compiled(fn: Any) -> Any:
    """The user function behind a ``compiler.compile`` wrapper, else None.

    The wrapper's own code is generated dispatch (guards, cache entries): a
    caller inlines, and ``explain`` traces, the function it wraps instead.
    """
    return getattr(fn, "_tracematrix_original", None) if isinstance(fn, types.FunctionType) else None


def reset() -> None:
    _disabled.clear()
    _allowed.clear()


# Modules whose functions are pure and evaluated at trace time on constants.
FOLDABLE_MODULES = (math, operator)

# Builtins evaluated at trace time when every argument is a constant.
FOLDABLE_BUILTINS = frozenset(getattr(builtins, name) for name in (
    "abs", "all", "any", "ascii", "bin", "bool", "chr", "complex", "divmod", "float", "format",
    "frozenset", "hash", "hex", "int", "len", "max", "min", "oct", "ord", "pow", "repr", "round",
    "sorted", "str", "sum", "tuple", "callable", "bytes",
))


def _library_roots() -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """Folders of library code (stdlib, site-packages), and the exceptions inside them."""
    paths = sysconfig.get_paths()
    roots = {os.path.realpath(paths[key]) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib")
             if paths.get(key)}
    stdlib = [os.path.realpath(paths[key]) for key in ("stdlib", "platstdlib") if paths.get(key)]
    # Packages installed in the stdlib folder's site-packages are libraries; CPython's own
    # test package is the code the cpython-tests suite compiles, so it is traced.
    exceptions = {os.path.join(root, "test") + os.sep for root in stdlib}
    # The compiler never traces itself (a compiled test of the compiler calls compiler.compile,
    # explain, reset...): its packages are library code wherever they are installed.
    for package_file in (__file__, opcode_tables.__file__):
        roots.add(os.path.dirname(os.path.realpath(package_file)) + os.sep)
    return tuple(sorted(roots)), tuple(sorted(exceptions))


_LIBRARY_ROOTS, _NOT_LIBRARY = _library_roots()
_library_files: Dict[str, bool] = {}


def is_library_file(filename: str) -> bool:
    """Whether code from ``filename`` is library code (never inlined, see the module doc)."""
    known = _library_files.get(filename)
    if known is None:
        real = os.path.realpath(filename) if os.path.isabs(filename) else filename
        known = real.startswith(_LIBRARY_ROOTS) and not real.startswith(_NOT_LIBRARY)
        _library_files[filename] = known
    return known


# Library classes traced like user code: small, pure, and modelled exactly by inlining
# their methods (module, class qualname).  Anything else of the library runs natively.
INLINED_LIBRARY_CLASSES = frozenset({("contextlib", "nullcontext"), ("contextlib", "suppress")})


def inlined_numpy_function(value: Any) -> Optional[Tuple[str, Any]]:
    """(name, dispatched argument) when ``value`` is a NumPy function whose source the tracer
    inlines (compiler.ops.catalog.INLINED), else None."""
    # By identity: reading an attribute of an arbitrary object could run its own code.
    found = _INLINED_BY_ID.get(id(value))
    return (found[1], INLINED[found[1]]) if found is not None and found[0] is value else None


def _inlined_by_id() -> Dict[int, Tuple[Any, str]]:
    import numpy as np
    return {id(getattr(np, name)): (getattr(np, name), name) for name in INLINED if hasattr(np, name)}


_INLINED_BY_ID = _inlined_by_id()


def _inlined_library_member(module: Any, qualname: str) -> bool:
    owner = qualname.split(".", 1)[0]
    return (module, owner) in INLINED_LIBRARY_CLASSES


def is_library_function(fn: Any) -> bool:
    code = getattr(fn, "__code__", None)
    return isinstance(code, types.CodeType) and is_library_file(code.co_filename) and \
        not _inlined_library_member(getattr(fn, "__module__", None), getattr(fn, "__qualname__", ""))


def is_library_class(cls: type) -> bool:
    module_name = getattr(cls, "__module__", None) or ""
    filename = getattr(sys.modules.get(module_name), "__file__", None)
    return isinstance(filename, str) and is_library_file(filename) and \
        not _inlined_library_member(module_name, getattr(cls, "__qualname__", ""))


# C functions that read the frame calling them (see the module doc).
FRAME_SENSITIVE = frozenset(f for f in (
    getattr(sys, "_getframe", None), getattr(sys, "_getframemodulename", None), sys.exc_info,
    getattr(sys, "exception", None), builtins.locals, builtins.vars, builtins.dir, builtins.globals,
    builtins.eval, builtins.exec, builtins.breakpoint, builtins.__import__, warnings.warn,
) if f is not None)


def _one_of(fn: Any, functions: frozenset) -> bool:
    try:
        return fn in functions
    except TypeError:  # unhashable callable
        return False


def is_frame_sensitive(fn: Any) -> bool:
    return _one_of(fn, FRAME_SENSITIVE)


# Clocks (see the module doc).  timeit.default_timer is time.perf_counter.
CLOCKS = frozenset(f for f in (
    *(getattr(time, name, None) for name in (
        "time", "time_ns", "perf_counter", "perf_counter_ns", "process_time", "process_time_ns",
        "monotonic", "monotonic_ns", "thread_time", "thread_time_ns", "clock_gettime",
        "clock_gettime_ns")),
    datetime.datetime.now, datetime.datetime.utcnow, datetime.datetime.today, datetime.date.today,
) if f is not None)


def reads_clock(fn: Any) -> bool:
    return _one_of(fn, CLOCKS)


# Names by which code observes what a compiled frame necessarily changes:
# - the call stack above its own frame, or its depth (a recursion limit set relative to it):
#   a compiled frame's stack holds the compiler's frames (the wrapper, cache entries, stubs
#   and continuations);
# - reference counts, referrers and object sizes: cache entries, guards and continuation
#   code hold references of their own, and replays rebuild containers;
# - the timing of garbage collection (gc.collect next to weakref callbacks or finalizers):
#   tracing allocates, and an automatic collection can run earlier than in the plain frame;
# - linecache, where the compiler registers the source it generates;
# - allocation failures injected after a count of allocations (``_testcapi.set_nomemory`` and
#   test.support's ``inject_memory_error_cm`` around it): the compiler's own allocations
#   (tracing, guards, continuations) would fail in place of the program's;
# - closure cells changed directly (``cell.cell_contents``): continuations receive the frame's
#   cells as free variables, and an emptied free variable reads as NameError where the plain
#   frame's own cell raises UnboundLocalError.
# A frame (or a function or class body defined in it) naming one of these runs natively from
# its start, with the name in the logged reason (CPython's test_traceback, test_coroutines,
# test_exceptions' recursion tests, test_weakref, test_descr's shared-key sizes,
# test_funcattrs' cells, 3.15's out-of-memory tests of test_dict and test_str).
# ``inspect.stack`` and ``gc.collect`` are matched by both of their names.
_INTERPRETER_STATE_NAMES = frozenset({
    "_getframe", "_getframemodulename", "_current_frames", "currentframe", "f_back",
    "extract_stack", "format_stack", "print_stack", "walk_stack", "getouterframes",
    "set_coroutine_origin_tracking_depth", "cr_origin", "setrecursionlimit",
    "getrefcount", "get_referrers", "get_referents", "getsizeof",
    "linecache", "cell_contents",
    "set_nomemory", "inject_memory_error_cm",
})
_INTERPRETER_STATE_PAIRS = (("inspect", "stack"), ("gc", "collect"))


def observes_interpreter_state(code: types.CodeType) -> Optional[str]:
    """The name by which ``code`` (or a function or class body defined in it) observes the
    call stack, reference counts, garbage collection or linecache, else None (see
    _INTERPRETER_STATE_NAMES)."""
    pending, seen = [code], set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        names = set(current.co_names)
        found = names & _INTERPRETER_STATE_NAMES
        if found:
            return min(found)
        for module, name in _INTERPRETER_STATE_PAIRS:
            if module in names and name in names:
                return f"{module}.{name}"
        pending.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return None


def is_numpy_object(value: Any) -> bool:
    module = getattr(value, "__module__", None) or ""
    return module == "numpy" or module.startswith("numpy.")


def is_foldable_module_function(value: Any) -> bool:
    module = getattr(value, "__module__", None)
    if isinstance(value, (types.BuiltinFunctionType,)) and module in ("math", "_operator", "operator"):
        return True
    return False
