"""Who is told of each new cache entry: bytecode hooks (public,
``compiler.register_bytecode_hook``) and the compiler's own observers
(compiler.debug.prepare_debug).

The driver (compiler.convert_frame) calls ``entry_installed`` once per entry,
right after installing it and before it first runs.  A hook that raises does
not stop the program: the error is reported as a RuntimeWarning and the entry
runs.
"""
from __future__ import annotations

import types
import warnings
from typing import Any, Callable, List

# hook(original code of the frame, code of the new entry's generated function) -> None
BytecodeHook = Callable[[types.CodeType, types.CodeType], None]
# observer(the frame's function, its FrameCache, the new CacheEntry) -> None
EntryObserver = Callable[[types.FunctionType, Any, Any], None]

_hooks: List[BytecodeHook] = []
_observers: List[EntryObserver] = []


class HookHandle:
    """What ``register_bytecode_hook`` returns: ``remove()`` unregisters the hook (once;
    later calls do nothing).  Also a context manager that removes it on exit."""

    def __init__(self, hook: Callable, registry: List[Callable]) -> None:
        self.hook = hook
        self._registry = registry

    def remove(self) -> None:
        if self.hook in self._registry:
            self._registry.remove(self.hook)

    def __enter__(self) -> "HookHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def register_bytecode_hook(hook: BytecodeHook) -> HookHandle:
    """Call ``hook(original_code, entry_code)`` once for every new cache entry, of every
    compiled function and continuation: the code object of the frame being compiled and the
    code object of the entry's generated function (its source is in linecache)."""
    if not callable(hook):
        raise TypeError(f"compiler.register_bytecode_hook expects a callable (original_code, entry_code) "
                        f"-> None, got {type(hook).__name__}")
    _hooks.append(hook)
    return HookHandle(hook, _hooks)


def add_observer(observer: EntryObserver) -> HookHandle:
    _observers.append(observer)
    return HookHandle(observer, _observers)


def entry_installed(fn: types.FunctionType, frame_cache: Any, entry: Any) -> None:
    for observer in list(_observers):
        _call_reporting(observer, (fn, frame_cache, entry), "debug observer")
    for hook in list(_hooks):
        _call_reporting(hook, (fn.__code__, entry.fn.__code__), "bytecode hook")


def _call_reporting(callback: Callable, args: tuple, what: str) -> None:
    try:
        callback(*args)
    except Exception as error:  # the program's hook: its failure must not change the program
        name = getattr(callback, "__qualname__", repr(callback))
        warnings.warn(f"tracematrix: {what} {name} raised {type(error).__name__}: {error}; "
                      "the compiled entry is installed and runs", RuntimeWarning, stacklevel=2)
