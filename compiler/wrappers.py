"""The compiled-function object: what ``compiler.compile(fn)`` returns.

``make_compiled`` builds a function with ``fn``'s name, docstring and
parameters.  Its hit path tries the cache entries of ``fn``'s code
(compiler.cache) newest first; each entry is a generated function that
returns ``MISS`` when its guards reject the arguments.  With many entries
the hit path of plain positional functions calls one dispatcher instead,
which looks the candidates up by parameter type, dtype and shape
(compiler.guard_dispatch).  The wrapper is generated with the same parameters,
so the hit path binds no arguments itself (CPython does, as for the plain
function: ``*args`` and ``**kwargs`` arrive packed as plain).  On a miss
the slow path binds the call like the plain function (a bad call raises the
plain function's TypeError) and hands the bound values to the compile driver
(compiler.convert_frame.compile_frame).  What runs after the guards -- a break's
stub, a continuation, the whole frame where it runs natively -- is a stage the
wrapper runs once it has let go of the arguments (compiler.resume), keeping only
the parameters the stages get pushed from its frame (compiler.borrows).
"""
from __future__ import annotations

import functools
import inspect
import os
import sys
import types
from typing import Any, Callable, Dict, List, Optional

import opcode_tables
from opcode_tables.linetable import on_one_line
from opcode_tables.moving_loads import with_moving_loads

from . import config, no_table, trace_rules
from .backends.base import Backend
from .borrows import moved_parameters, pinned_parameters
from .cache import FrameCache, cache_for
from .convert_frame import CompileCallee, compile_frame, native_stage
from .entry_codegen import MISS
from .generated_code import compile_generated, unique_filename
from .resume import Handoff, pinned_runner, run_handoffs, try_entries
from .sources import local_param_name, param_names


def _callee_compiler(backend: Backend, observed: bool, dynamic: Optional[bool] = None) -> CompileCallee:
    """How a compiled frame compiles a callee that becomes a frame of its own: with the
    same backend, observation and dynamic-shape option, default options otherwise."""
    options: Dict[str, Any] = {} if observed else {"observed": False}
    if dynamic is not None:
        options["dynamic"] = dynamic

    def compile_callee(fn: types.FunctionType) -> Callable:
        return make_compiled(fn, backend, False, dict(options))
    return compile_callee


def make_compiled(fn: types.FunctionType, backend: Backend, fullgraph: bool, options: Dict[str, Any],
                  frame_cache: Optional[FrameCache] = None) -> Callable:
    """The compiled function for ``fn`` (options already checked by compiler.api): a function
    with ``fn``'s name, docstring and parameters that runs the first cache entry accepting the
    arguments, and on a miss binds them and compiles (compiler.convert_frame)."""
    if not opcode_tables.has_current_table():
        return no_table.native_function(fn)  # a CPython with no table yet: runs natively, warned
    observed = options.get("observed", True)
    if frame_cache is None:
        frame_cache = cache_for(fn, observed)
    entries = frame_cache.entries
    code = fn.__code__
    closure = fn.__closure__
    signature_for = [None, None]  # (defaults seen, signature): recomputed if defaults change
    names = param_names(code)
    # inspect.signature calls a comprehension's hidden ".0" argument "implicit0".
    bound_names = ["implicit" + n[1:] if n[:1] == "." and n[1:].isdigit() else n for n in names]
    limit = options.get("cache_limit")
    debug = options.get("debug_checks")
    frame_cache.dynamic = options.get("dynamic")
    compile_callee = _callee_compiler(backend, observed, frame_cache.dynamic)

    def slow_path(args: tuple, kwargs: dict) -> Any:
        if _gettrace() is not None and not config.trace_generated_code:
            return fn(*args, **kwargs)
        key = (fn.__defaults__, fn.__kwdefaults__)
        if signature_for[1] is None or signature_for[0] is not key and signature_for[0] != key:
            try:
                signature_for[:] = [key, _code_signature(fn)]
            except ValueError:  # parameter names inspect refuses (a code object built by hand)
                frame_cache.run_natively("inspect cannot describe the parameters, so calls cannot be bound")
                return fn(*args, **kwargs)
        try:
            bound = signature_for[1].bind(*args, **kwargs)
        except TypeError:
            return fn(*args, **kwargs)  # raises exactly what the plain function raises
        bound.apply_defaults()
        values = [bound.arguments[n] for n in bound_names]
        # From here the list alone holds the arguments (and the caller): the entries empty it
        # once their guards accept (compiler.resume.try_entries).
        args = kwargs = bound = None  # type: ignore[assignment]
        if frame_cache.native or trace_rules.is_disabled(fn):
            # Run by the caller's stage runner, once the arguments' tuple is gone: the frame
            # alone holds them, and a parameter it rebinds dies there, as plain.
            return native_stage(fn, values)
        result = try_entries(entries, closure, values)
        if result is not MISS:
            return result
        saved = config.debug_checks
        if debug is not None:
            config.debug_checks = debug
        try:
            return compile_frame(fn, frame_cache, values, backend, fullgraph,
                                 limit if limit is not None else config.cache_limit, compile_callee)
        finally:
            config.debug_checks = saved

    compiled = _signature_wrapper(fn, frame_cache.hit_entries, closure, slow_path)

    functools.update_wrapper(compiled, fn)
    compiled._tracematrix_cache = frame_cache  # type: ignore[attr-defined]
    compiled._tracematrix_original = fn  # type: ignore[attr-defined]
    compiled._tracematrix_backend = backend.name  # type: ignore[attr-defined]
    return compiled


_UNSET = object()


def _code_signature(fn: types.FunctionType) -> inspect.Signature:
    """The signature CPython binds calls of ``fn`` with: from its code, defaults and
    keyword-only defaults (a ``__signature__`` or ``__text_signature__`` the function
    carries describes it to people, not to the interpreter)."""
    code = fn.__code__
    cells = tuple(types.CellType() for _ in code.co_freevars) or None
    stand_in = types.FunctionType(code, {}, code.co_name, fn.__defaults__, cells)
    stand_in.__kwdefaults__ = fn.__kwdefaults__
    return inspect.signature(stand_in, follow_wrapped=False)
_COMPILER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _compiler_frame(tb: types.TracebackType) -> bool:
    filename = tb.tb_frame.f_code.co_filename
    return filename.startswith(_COMPILER_DIR) or filename.startswith("<tracematrix")


def without_compiler_frames(tb: Optional[types.TracebackType]) -> Optional[types.TracebackType]:
    """The traceback of an exception leaving a compiled function, without the compiler's own
    frames (the wrapper, the driver, cache entries, continuation dispatch): what is left are
    the stubs and continuations (code named and numbered as the user's function) and the
    frames the program called.  An exception raised inside the compiler keeps every frame."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    if not entries or _compiler_frame(entries[-1]):
        return entries[0] if entries else None
    kept = [entry for entry in entries if not _compiler_frame(entry)]
    head = None
    for entry in reversed(kept):
        entry.tb_next = head
        head = entry
    return head
# How the wrapper re-raises an exception leaving the compiled function, without the compiler's
# frames: ``raise e`` would add an entry for the wrapper's own frame in front of them
# (CPython's test_traceback formats it); a bare ``raise`` adds none, and re-raises the
# stripped traceback where the interpreter takes it from the exception (the table fact
# ``reraise_uses_exception_traceback``; before, the thread state's unstripped one).
_BARE_RERAISE = opcode_tables.current_table().fact("reraise_uses_exception_traceback") \
    if opcode_tables.has_current_table() else False
_RERAISE_STRIPPED = ("        _e.__traceback__ = _strip(_e.__traceback__)\n"
                     + ("        raise\n" if _BARE_RERAISE else "        raise _e\n"))
# Under sys.settrace (a debugger, coverage, a test recording line events) compiled functions
# run natively: the trace function sees the plain frames and lines (unless
# config.trace_generated_code asks to step through the generated code).
_gettrace = sys.gettrace


def _signature_wrapper(fn: types.FunctionType, entries: List[Callable], closure: Optional[tuple],
                       slow_path: Callable[[tuple, dict], Any]) -> Callable:
    """The hit path: a generated function with ``fn``'s parameters (and name, so a bad call
    raises the same TypeError as the plain function) that tries the cache entries without
    binding the call again: each takes the parameters positionally, ``*args`` and
    ``**kwargs`` as the tuple and dict CPython packed."""
    code = fn.__code__
    n_positional = code.co_argcount
    names = list(code.co_varnames[:n_positional + code.co_kwonlyargcount])
    keyword_only = names[n_positional:]
    index = len(names)
    var_positional = var_keyword = None
    if code.co_flags & 0x04:
        var_positional = code.co_varnames[index]
        index += 1
    if code.co_flags & 0x08:
        var_keyword = code.co_varnames[index]
    # Parameters the stages get from this frame, pushed from its own locals (compiler.borrows);
    # the runner gets those the code may rebind by a moving load (its reference as it is).
    pins = pinned_parameters(fn)
    moved = moved_parameters(fn)
    defaults = fn.__defaults__ or ()
    kwdefaults = fn.__kwdefaults__ or {}
    first_default = n_positional - len(defaults)
    p = local_param_name
    params = [p(n) if i < first_default else f"{p(n)}=_UNSET" for i, n in enumerate(names[:n_positional])]
    if code.co_posonlyargcount:
        params.insert(code.co_posonlyargcount, "/")
    if var_positional is not None:
        params.append("*" + p(var_positional))
    elif keyword_only:
        params.append("*")
    params += [f"{p(n)}=_UNSET" if n in kwdefaults else p(n) for n in keyword_only]
    if var_keyword is not None:
        params.append("**" + p(var_keyword))
    packed = [n for n in (var_positional, var_keyword) if n is not None]
    all_names = names + packed     # the order the entries take them in (sources.param_names)
    args = ", ".join(p(n) for n in all_names)
    # The slow path's call: positionals in a tuple, keyword-only ones in a dict.
    rest = "" if var_positional is None else f"*{p(var_positional)}, "
    more = [] if var_keyword is None else [f"**{p(var_keyword)}"]
    slow_args = (f"({''.join(p(n) + ', ' for n in names[:n_positional])}{rest}), "
                 f"{{{', '.join([f'{n!r}: {p(n)}' for n in keyword_only] + more)}}}")
    prologue = ""
    if defaults or kwdefaults:
        # Defaults are filled in here; if fn.__defaults__ or __kwdefaults__ is replaced later,
        # the generic path binds the call again with the new ones.
        packed_args = "".join(", " + p(n) for n in packed)
        prologue = (f"    if _fn.__defaults__ is not _defaults or _fn.__kwdefaults__ is not _kwdefaults:\n"
                    f"        return _rebind(({''.join(p(n) + ', ' for n in names)}){packed_args})\n")
        prologue += "".join(f"    if {p(n)} is _UNSET:\n        {p(n)} = _defaults[{i - first_default}]\n"
                            for i, n in enumerate(names[:n_positional]) if i >= first_default)
        prologue += "".join(f"    if {p(n)} is _UNSET:\n        {p(n)} = _kwdefaults[{n!r}]\n"
                            for n in keyword_only if n in kwdefaults)
    # Generated under a safe identifier (a lambda's name is "<lambda>"), renamed below.
    src = (f"def _wrapper({', '.join(params)}):\n"
           f"{prologue}"
           f"    try:\n"
           f"        if _gettrace() is not None and not _config.trace_generated_code:\n"
           f"            return _slow({slow_args})\n"
           f"        for entry in _entries:\n"
           f"            result = entry(_closure, {args})\n"
           f"            if result is not _MISS:\n"
           f"                break\n"
           f"        else:\n"
           f"            result = _slow({slow_args})\n"
           f"        if result.__class__ is _Handoff:\n"
           f"            {' = '.join([p(n) for n in all_names if n not in pins] + ['entry', 'None'])}\n"
           f"            return _run(result{''.join(', ' + p(n) for n in pins)})\n"
           f"        return result\n"
           f"    except BaseException as _e:\n"
           f"{_RERAISE_STRIPPED}")
    n_posonly = code.co_posonlyargcount

    def rebind(values: tuple, *packed_values: Any) -> Any:
        """The call bound again (the function's defaults were replaced): the given parameters,
        positional-only ones and, ahead of extra positionals, every positional one passed
        positionally, the rest by keyword."""
        extra = packed_values[0] if var_positional is not None else ()
        extra_keywords = packed_values[-1] if var_keyword is not None else {}
        by_position = n_positional if extra else n_posonly
        given = [(i, n, v) for i, (n, v) in enumerate(zip(names, values)) if v is not _UNSET]
        positional = [v for i, n, v in given if i < by_position] + list(extra)
        keywords = {n: v for i, n, v in given if i >= by_position}
        keywords.update(extra_keywords)
        return run_handoffs(slow_path(tuple(positional), keywords))

    scope = {"_entries": entries, "_closure": closure, "_MISS": MISS, "_slow": slow_path, "_gettrace": _gettrace, "_config": config,
             "_strip": without_compiler_frames, "_Handoff": Handoff,
             "_run": pinned_runner(pins, moved),
             "_defaults": fn.__defaults__, "_kwdefaults": fn.__kwdefaults__, "_fn": fn, "_UNSET": _UNSET,
             "_rebind": rebind}
    exec(compile_generated(src, unique_filename(f"wrapper of {fn.__qualname__}")), scope)
    wrapper = scope["_wrapper"]
    if moved:
        run_line = 1 + next(i for i, line in enumerate(src.splitlines()) if "return _run(" in line)
        wrapper.__code__ = with_moving_loads(wrapper.__code__, [p(n) for n in moved], run_line)
    # Names in messages must be the plain function's: its own name, not L_<name> parameters.
    replaced = wrapper.__code__.replace(co_name=code.co_name,
                                        co_varnames=tuple(all_names) + wrapper.__code__.co_varnames[len(all_names):])
    if hasattr(replaced, "co_qualname"):
        replaced = replaced.replace(co_qualname=fn.__qualname__)
    # Its frame reports the function's def line (it is not the function's body).
    wrapper.__code__ = on_one_line(replaced, opcode_tables.current_table().fact("linetable"),
                                   code.co_firstlineno)
    wrapper.__qualname__ = fn.__qualname__
    if wrapper.__kwdefaults__:
        # (keyed by the names the source used: the parameters are named as the function's now)
        wrapper.__kwdefaults__ = {n: _UNSET for n in keyword_only if n in kwdefaults}
    return wrapper
