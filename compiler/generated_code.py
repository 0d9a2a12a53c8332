"""Compiling the Python source the compiler generates, so that people can read it.

Every function the compiler writes as source (cache entries, guard checks, the
compiled-function wrappers, the numpy backend's kernels, the handoff calls)
is compiled here under a file name of its own, and its source is put in
``linecache``: tracebacks show the generated lines, ``inspect.getsource``
finds them, and ``pdb`` steps through them (with
``compiler.config.trace_generated_code``).  Code objects made from the
user's bytecode (break stubs, continuations) keep the user's file and lines.

Listeners (compiler.debug.prepare_debug) are told of each piece of source as
it is made.
"""
from __future__ import annotations

import itertools
import linecache
import types
from typing import Callable, List

# Called with (filename, source) for every piece of generated source.
SourceListener = Callable[[str, str], None]
_listeners: List[SourceListener] = []
_numbers = itertools.count()


def unique_filename(label: str) -> str:
    """``<tracematrix {label} #N>``: a file name no other generated source has (the same
    label may be compiled many times, with different source)."""
    return f"<tracematrix {label} #{next(_numbers)}>"


def register_source(filename: str, source: str) -> None:
    """Make ``source`` the text of ``filename`` for linecache (and so for tracebacks,
    ``inspect`` and ``pdb``).  An mtime of None keeps ``linecache.checkcache`` from
    dropping it: there is no file to compare with."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    for listener in list(_listeners):
        listener(filename, source)


def compile_generated(source: str, filename: str) -> types.CodeType:
    """``compile(source, filename, "exec")``, with the source registered first."""
    register_source(filename, source)
    return compile(source, filename, "exec")


def add_listener(listener: SourceListener) -> None:
    _listeners.append(listener)


def remove_listener(listener: SourceListener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)
