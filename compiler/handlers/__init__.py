"""Opcode handlers, registered by opname and bound into the running version's table.

Each family lives in its own module; each registers its functions with
``@handler(...)`` from ``compiler.handlers.registry``, which checks the names
and binds them into the running interpreter's table once they are all
imported (below).  Handlers never ask which Python runs them: differences are
separate handlers per opname or the table's facts.
"""
from __future__ import annotations

from . import loads_stores, stack, operators, control_flow, calls, containers, functions, exceptions  # noqa: F401
from . import generators, imports, pattern_matching  # noqa: F401
from .registry import bind, registered_opnames

__all__ = ["registered_opnames"]

bind()
