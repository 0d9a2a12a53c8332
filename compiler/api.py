"""The public entry points: compile, explain's plumbing, reset, allow_in_graph, disable."""
from __future__ import annotations

import builtins
import functools
import inspect
import types
from typing import Any, Callable, Optional

from . import cache as cache_mod
from . import config, events, trace_rules
from .entry_codegen import MISS
from .sources import local_param_name, param_names


def _check_function(fn: Any, what: str = "compile") -> None:
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


def _validate_options(options: dict) -> dict:
    accepted = config.COMPILE_OPTIONS
    for name, value in options.items():
        if name not in accepted:
            listing = ", ".join(["backend", "fullgraph", *sorted(accepted)])
            raise TypeError(f"compiler.compile() got an unknown option {name!r}; accepted options: {listing}")
        check, description = accepted[name]
        if not check(value):
            raise ValueError(f"compiler.compile() option {name}={value!r} is invalid: expected {description}")
    return options


def _resolve_backend(backend: Any):
    from . import backends
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
    code object, default ``config.cache_limit``), ``debug_checks``.
    """
    if not isinstance(fullgraph, bool):
        raise TypeError(f"compiler.compile() fullgraph must be True or False, got {fullgraph!r}")
    _validate_options(options)
    backend_obj = _resolve_backend(backend)
    if fn is None:
        return lambda f: compile(f, backend=backend, fullgraph=fullgraph, **options)
    _check_function(fn)
    fn = trace_rules.original_of_compiled(fn) or fn  # compiling a compiled function: no double wrapper
    return _make_compiled(fn, backend_obj, fullgraph, options)


def _make_compiled(fn: types.FunctionType, backend, fullgraph: bool, options: dict,
                   frame_cache: Optional[cache_mod.FrameCache] = None) -> Callable:
    if frame_cache is None:
        frame_cache = cache_mod.cache_for(fn)
    entries = frame_cache.entries
    code = fn.__code__
    closure = fn.__closure__
    signature_for = [None, None]  # (defaults seen, signature): recomputed if defaults change
    names = param_names(code)
    # inspect.signature calls a comprehension's hidden ".0" argument "implicit0".
    bound_names = ["implicit" + n[1:] if n[:1] == "." and n[1:].isdigit() else n for n in names]
    limit = options.get("cache_limit")
    debug = options.get("debug_checks")

    def slow_path(args: tuple, kwargs: dict) -> Any:
        if frame_cache.native or trace_rules.is_disabled(fn):
            return fn(*args, **kwargs)
        key = (fn.__defaults__, fn.__kwdefaults__)
        if signature_for[1] is None or signature_for[0] is not key and signature_for[0] != key:
            signature_for[:] = [key, inspect.signature(fn, follow_wrapped=False)]
        try:
            bound = signature_for[1].bind(*args, **kwargs)
        except TypeError:
            return fn(*args, **kwargs)  # raises exactly what the plain function raises
        bound.apply_defaults()
        values = [bound.arguments[n] for n in bound_names]
        for entry in entries:
            result = entry(closure, *values)
            if result is not MISS:
                return result
        saved = config.debug_checks
        if debug is not None:
            config.debug_checks = debug
        try:
            return cache_mod.compile_frame(fn, frame_cache, values, backend, fullgraph,
                                           limit if limit is not None else config.cache_limit)
        finally:
            config.debug_checks = saved

    if not (code.co_flags & 0x0C) and code.co_kwonlyargcount == 0:
        compiled = _positional_wrapper(fn, entries, closure, slow_path)
    else:
        def compiled(*args, **kwargs):
            return slow_path(args, kwargs)

    functools.update_wrapper(compiled, fn)
    compiled._tracematrix_cache = frame_cache  # type: ignore[attr-defined]
    compiled._tracematrix_original = fn  # type: ignore[attr-defined]
    compiled._tracematrix_backend = backend.name  # type: ignore[attr-defined]
    return compiled


_UNSET = object()


def _positional_wrapper(fn: types.FunctionType, entries: list, closure, slow_path) -> Callable:
    """The hit path for functions whose parameters are plain positionals: a generated
    function with the same parameters (and name, so a bad call raises the same TypeError
    as the plain function) that tries the cache entries without packing arguments."""
    code = fn.__code__
    names = list(code.co_varnames[:code.co_argcount])
    defaults = fn.__defaults__ or ()
    first_default = len(names) - len(defaults)
    p = local_param_name
    params = [p(n) if i < first_default else f"{p(n)}=_UNSET" for i, n in enumerate(names)]
    if code.co_posonlyargcount:
        params.insert(code.co_posonlyargcount, "/")
    args = ", ".join(p(n) for n in names)
    prologue = ""
    if defaults:
        # Defaults are filled in here; if fn.__defaults__ is replaced later, the generic path
        # binds the call again with the new ones.
        prologue = f"    if _fn.__defaults__ is not _defaults:\n        return _rebind(({args},))\n"
        prologue += "".join(f"    if {p(n)} is _UNSET:\n        {p(n)} = _defaults[{i - first_default}]\n"
                            for i, n in enumerate(names) if i >= first_default)
    # Generated under a safe identifier (a lambda's name is "<lambda>"), renamed below.
    src = (f"def _wrapper({', '.join(params)}):\n"
           f"{prologue}"
           f"    for entry in _entries:\n"
           f"        result = entry(_closure, {args})\n"
           f"        if result is not _MISS:\n"
           f"            return result\n"
           f"    return _slow(({args}{',' if names else ''}), {{}})\n")
    n_posonly = code.co_posonlyargcount

    def rebind(values):
        given = [(n, v) for n, v in zip(names, values) if v is not _UNSET]
        positional = [v for n, v in given if names.index(n) < n_posonly]
        return slow_path(tuple(positional), {n: v for n, v in given if names.index(n) >= n_posonly})

    scope = {"_entries": entries, "_closure": closure, "_MISS": MISS, "_slow": slow_path,
             "_defaults": fn.__defaults__, "_fn": fn, "_UNSET": _UNSET, "_rebind": rebind}
    exec(builtins.compile(src, f"<tracematrix wrapper of {fn.__qualname__}>", "exec"), scope)
    wrapper = scope["_wrapper"]
    # Names in messages must be the plain function's: its own name, not L_<name> parameters.
    replaced = wrapper.__code__.replace(co_name=code.co_name,
                                        co_varnames=tuple(names) + wrapper.__code__.co_varnames[len(names):])
    if hasattr(replaced, "co_qualname"):
        replaced = replaced.replace(co_qualname=fn.__qualname__)
    wrapper.__code__ = replaced
    wrapper.__qualname__ = fn.__qualname__
    return wrapper


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
    from .ops import allow_in_graph as register
    register(func)
    return func


def disable(func: Callable) -> Callable:
    """Never trace ``func``: compiled callers treat a call to it as unsupported (until graph
    breaks exist, the caller runs natively), and ``compile(func)`` runs it natively.
    Returns ``func`` (usable as a decorator)."""
    if not callable(func):
        raise TypeError(f"disable() expects a callable, got {type(func).__name__}")
    trace_rules.disable(func)
    return func
