"""Registering opcode handlers by opname, and binding them into the running version's table.

``@handler("LOAD_FAST", ...)`` names the opcodes a function handles.  ``bind()``
(called once by the package, after every handler module was imported) checks
that every registered name exists in at least one version's table (a typo
check) and binds the names the running interpreter has into its table's
handler slots (``VersionTable.bind_handler``).  This module imports no
handler module: the handler modules import it.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Set

import opcode_tables

_REGISTRY: Dict[str, Callable] = {}


def handler(*opnames: str, stack_effect_exempt: bool = False) -> Callable[[Callable], Callable]:
    """Register the decorated function as the handler of ``opnames``.  ``stack_effect_exempt``:
    the handler's stack change legitimately differs from ``dis.stack_effect`` (the tracer's
    debug check skips it)."""
    def register(fn: Callable) -> Callable:
        fn.stack_effect_exempt = stack_effect_exempt  # type: ignore[attr-defined]
        for name in opnames:
            if name in _REGISTRY:
                raise AssertionError(f"opcode {name} has two handlers: {_REGISTRY[name].__name__} "
                                     f"and {fn.__name__}")
            _REGISTRY[name] = fn
        return fn
    return register


def _all_known_opnames() -> Set[str]:
    names: Set[str] = set()
    for version in opcode_tables.SUPPORTED_VERSIONS:
        names.update(opcode_tables.table_for(version).opcodes)
    return names


def bind() -> None:
    """Bind every registered handler whose opname the running interpreter has into its table."""
    known = _all_known_opnames()
    unknown = sorted(set(_REGISTRY) - known)
    if unknown:
        raise AssertionError(f"handlers registered for opnames no version has: {unknown}")
    if not opcode_tables.has_current_table():
        return  # a CPython with no table: compile() runs functions natively (compiler.no_table)
    table = opcode_tables.current_table()
    for name, fn in _REGISTRY.items():
        if name in table.opcodes and table.handlers.get(name) is not fn:
            table.bind_handler(name, fn)


def registered_opnames() -> List[str]:
    return sorted(_REGISTRY)
