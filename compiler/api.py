"""The public entry points: compile, reset, allow_in_graph, disable (and the argument
checks compiler.explain shares).

This module only checks what the user passed and hands over: the compiled
function itself is compiler.wrappers', what happens on a call that needs
compiling is compiler.convert_frame's.
"""
from __future__ import annotations

import types
from typing import Any, Callable, Dict, Optional

from . import backends, config, events, ops, trace_rules
from . import cache as cache_mod
from .backends.base import Backend
from .wrappers import make_compiled


def check_function(fn: Any, what: str = "compile") -> None:
    """A clear TypeError unless ``fn`` is a plain Python function (``what``: the entry point
    named in the message)."""
    if isinstance(fn, types.FunctionType):
        return
    if isinstance(fn, type):
        raise TypeError(f"compiler.{what}() expects a Python function, got the class {fn.__qualname__}; "
                        "compile a function (or a method) that uses it instead")
    if isinstance(fn, (types.BuiltinFunctionType, types.BuiltinMethodType)) or callable(fn) and \
            not hasattr(fn, "__code__"):
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
        kind = "a builtin or C function" if isinstance(fn, (types.BuiltinFunctionType,
                                                            types.BuiltinMethodType)) else \
            f"a callable {type(fn).__name__} object without __code__"
        raise TypeError(f"compiler.{what}() expects a Python function (def or lambda), got {name!r}, "
                        f"{kind}; only Python bytecode can be traced")
    if isinstance(fn, types.MethodType):
        raise TypeError(f"compiler.{what}() expects a plain function, got the bound method "
                        f"{fn.__qualname__}; compile the function {fn.__func__.__qualname__} "
                        "and pass the object as its first argument")
    raise TypeError(f"compiler.{what}() expects a Python function, got {type(fn).__name__}")


def _validate_options(options: Dict[str, Any]) -> Dict[str, Any]:
    accepted = config.COMPILE_OPTIONS
    for name, value in options.items():
        if name not in accepted:
            listing = ", ".join(["backend", "fullgraph", *sorted(accepted)])
            raise TypeError(f"compiler.compile() got an unknown option {name!r}; accepted options: {listing}")
        check, description = accepted[name]
        if not check(value):
            raise ValueError(f"compiler.compile() option {name}={value!r} is invalid: expected {description}")
    return options


def resolve_backend(backend: Any) -> Backend:
    """The backend object for a backend name, with a clear error for anything else."""
    if not isinstance(backend, str):
        raise TypeError(f"compiler.compile() backend must be a name (str), got {type(backend).__name__}; "
                        f"accepted: {', '.join(backends.BACKEND_NAMES)}")
    if backend not in backends.BACKEND_NAMES:
        raise ValueError(f"unknown backend {backend!r}; accepted: {', '.join(backends.BACKEND_NAMES)} "
                         f"(available here: {', '.join(backends.available_backends())})")
    return backends.get_backend(backend)


def compile(fn: Optional[Callable] = None, backend: str = "eager", fullgraph: bool = False,
            **options: Any) -> Callable:
    """Compile ``fn`` (or, without ``fn``, return a decorator that does).

    The result is a function with ``fn``'s name and docstring.  Each call runs
    the newest cache entry whose guards accept the arguments; a miss traces
    the function again (a recompile).  Options: ``cache_limit`` (entries per
    code object, default ``config.cache_limit``), ``debug_checks``, ``dynamic``
    (``None``: automatic dynamic shapes, as Dynamo: static first, then the
    dimensions whose size changed symbolic; ``True``: every dimension symbolic
    from the first compile; ``False``: one compile per shape; sizes 0 and 1 are
    always specialized).
    """
    if not isinstance(fullgraph, bool):
        raise TypeError(f"compiler.compile() fullgraph must be True or False, got {fullgraph!r}")
    _validate_options(options)
    backend_obj = resolve_backend(backend)
    if fn is None:
        return lambda f: compile(f, backend=backend, fullgraph=fullgraph, **options)
    check_function(fn)
    fn = trace_rules.original_of_compiled(fn) or fn  # compiling a compiled function: no double wrapper
    return make_compiled(fn, backend_obj, fullgraph, options)


def reset() -> None:
    """Forget every cache entry, event and frame counter (functions stay compiled and
    trace again on their next call)."""
    cache_mod.reset()
    events.clear()


def allow_in_graph(func: Callable) -> Callable:
    """Treat ``func`` as one graph op: it is not traced, its result metadata is found by
    running it on zero-filled stand-ins (it must be cheap and side-effect free).
    Returns ``func`` (usable as a decorator)."""
    if not callable(func):
        raise TypeError(f"allow_in_graph() expects a callable, got {type(func).__name__}")
    ops.allow_in_graph(func)
    return func


def disable(func: Callable) -> Callable:
    """Never trace ``func``: a compiled caller breaks its graph at a call to it (the call runs
    natively), and ``compile(func)`` runs it natively.
    Returns ``func`` (usable as a decorator)."""
    if not callable(func):
        raise TypeError(f"disable() expects a callable, got {type(func).__name__}")
    trace_rules.disable(func)
    return func
