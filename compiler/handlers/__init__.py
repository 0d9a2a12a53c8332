"""Opcode handlers, registered by opname and bound into the running version's table.

Each family lives in its own module.  ``@handler("LOAD_FAST", ...)`` names the
opcodes a function handles; at import every registered name must exist in at
least one version's table (a typo check), and the names the running
interpreter has are bound into its table's handler slots
(``VersionTable.bind_handler``).  Handlers never ask which Python runs them:
differences are separate handlers per opname or the table's facts.
"""
from __future__ import annotations

from typing import Callable, Dict, List

import opcode_tables

_REGISTRY: Dict[str, Callable] = {}


def handler(*opnames: str, stack_effect_exempt: bool = False) -> Callable[[Callable], Callable]:
    def register(fn: Callable) -> Callable:
        fn.stack_effect_exempt = stack_effect_exempt  # type: ignore[attr-defined]
        for name in opnames:
            if name in _REGISTRY:
                raise AssertionError(f"opcode {name} has two handlers: {_REGISTRY[name].__name__} "
                                     f"and {fn.__name__}")
            _REGISTRY[name] = fn
        return fn
    return register


def _all_known_opnames() -> set:
    names: set = set()
    for version in opcode_tables.SUPPORTED_VERSIONS:
        names.update(opcode_tables.table_for(version).opcodes)
    return names


def _bind() -> None:
    known = _all_known_opnames()
    unknown = sorted(set(_REGISTRY) - known)
    if unknown:
        raise AssertionError(f"handlers registered for opnames no version has: {unknown}")
    if not opcode_tables.has_current_table():
        return  # a CPython with no table: compile() runs functions natively (compiler.api)
    table = opcode_tables.current_table()
    for name, fn in _REGISTRY.items():
        if name in table.opcodes and table.handlers.get(name) is not fn:
            table.bind_handler(name, fn)


def registered_opnames() -> List[str]:
    return sorted(_REGISTRY)


from . import loads_stores, stack, operators, control_flow, calls, containers, functions, exceptions  # noqa: E402,F401

_bind()
