"""Sources: where a traced value came from, relative to the compiled frame.

Every value the tracer reads from outside the trace (an argument, a global,
a closure cell, an attribute or item of one of those) carries a Source.
Guards are built from sources, and a value that is returned unchanged is
rebuilt from its source so that identity is preserved.

``name()`` is the stable, human-readable form used in guard names and logs
(``L['x']``, ``G['np']``, ``L['x'].shape``); ``expr(ns)`` is the Python
expression that reads the value inside a cache entry's generated function,
whose parameters are the frame's arguments (``L_<name>``), with ``_G`` (the
function's globals), ``_B`` (its builtins) and ``_cl`` (its closure) in scope.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from types import CodeType
from typing import Any, Callable, List

# Registers a constant in the generated code's namespace, returning its name.
ConstNamer = Callable[[Any], str]


def local_param_name(name: str) -> str:
    """The parameter name the generated entry function uses for local ``name``: ``L_name``;
    a name that is no identifier (a comprehension's hidden ".0", pytest's "@py_assert1",
    anything a code object built by hand holds) is spelled by its UTF-8 bytes in hex under
    another prefix, so that every name maps to a distinct identifier."""
    if name.isidentifier():
        return "L_" + name
    return "Lx_" + name.encode("utf-8", "surrogatepass").hex()


def param_names(code: CodeType) -> List[str]:
    """The frame's parameters in the order CPython binds them: positional, keyword-only,
    then *args and **kwargs (these are the names cache entries take, as ``L_<name>``)."""
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    return list(code.co_varnames[:count])


class Source:
    def name(self) -> str:
        raise NotImplementedError

    def expr(self, const: ConstNamer) -> str:
        raise NotImplementedError

    def root(self) -> "Source":
        return self

    def __str__(self) -> str:
        return self.name()


@dataclass(frozen=True)
class LocalSource(Source):
    local: str

    def name(self) -> str:
        return f"L[{self.local!r}]"

    def expr(self, const: ConstNamer) -> str:
        return local_param_name(self.local)


@dataclass(frozen=True)
class GlobalSource(Source):
    global_name: str

    def name(self) -> str:
        return f"G[{self.global_name!r}]"

    def expr(self, const: ConstNamer) -> str:
        return f"_G[{self.global_name!r}]"


@dataclass(frozen=True)
class BuiltinSource(Source):
    builtin: str

    def name(self) -> str:
        return f"B[{self.builtin!r}]"

    def expr(self, const: ConstNamer) -> str:
        return f"_B[{self.builtin!r}]"


@dataclass(frozen=True)
class ClosureSource(Source):
    """A free variable of the compiled frame: the contents of closure cell ``index``."""

    freevar: str
    index: int

    def name(self) -> str:
        return f"C[{self.freevar!r}]"

    def expr(self, const: ConstNamer) -> str:
        return f"_cl[{self.index}].cell_contents"


@dataclass(frozen=True)
class AttrSource(Source):
    base: Source
    attr: str

    def name(self) -> str:
        return f"{self.base.name()}.{self.attr}"

    def expr(self, const: ConstNamer) -> str:
        if self.attr.isidentifier():
            return f"{self.base.expr(const)}.{self.attr}"
        return f"getattr({self.base.expr(const)}, {self.attr!r})"

    def root(self) -> Source:
        return self.base.root()


_LITERAL_KEY_TYPES = (int, str, bool, type(None))


@dataclass(frozen=True)
class ItemSource(Source):
    base: Source
    key: Any

    def name(self) -> str:
        return f"{self.base.name()}[{self.key!r}]"

    def expr(self, const: ConstNamer) -> str:
        if type(self.key) in _LITERAL_KEY_TYPES:
            key = repr(self.key)
        else:
            key = const(self.key)
        return f"{self.base.expr(const)}[{key}]"

    def root(self) -> Source:
        return self.base.root()


@dataclass(frozen=True)
class TypeSource(Source):
    base: Source

    def name(self) -> str:
        return f"type({self.base.name()})"

    def expr(self, const: ConstNamer) -> str:
        return f"type({self.base.expr(const)})"

    def root(self) -> Source:
        return self.base.root()


@dataclass(frozen=True)
class SysModulesSource(Source):
    """``sys.modules``: the imports a frame makes read it (compiler.handlers.imports)."""

    def name(self) -> str:
        return "sys.modules"

    def expr(self, const: ConstNamer) -> str:
        return const(sys.modules)


def closure_cell_source(function_source: Source, index: int) -> Source:
    """The contents of cell ``index`` of a function reached through ``function_source``."""
    return AttrSource(ItemSource(AttrSource(function_source, "__closure__"), index), "cell_contents")


def has_instance_dict(tp: type) -> bool:
    """Whether instances of ``tp`` have a ``__dict__``, asked of the type: reading
    ``obj.__dict__`` (or ``hasattr``) creates the dict of objects that make it lazily, and
    that is visible (functools.partial no longer flattens a partial whose dict exists)."""
    return getattr(tp, "__dictoffset__", 0) != 0
