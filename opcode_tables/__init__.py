"""Per-CPython-version opcode tables: the only place that knows how versions differ.

``current_table()`` is the running interpreter's table; ``table_for((3, 11))``
any supported version's (every version module imports on every interpreter,
since tables hold names and facts, never opcode numbers).
"""
from __future__ import annotations

import functools
import importlib
import sys
from typing import Tuple

from .instruction import Instruction, create_instruction
from .spec import OpcodeSpec, VersionTable

__all__ = [
    "SUPPORTED_VERSIONS", "table_for", "current_table", "module_name",
    "Instruction", "create_instruction", "OpcodeSpec", "VersionTable",
]

SUPPORTED_VERSIONS: Tuple[Tuple[int, int], ...] = ((3, 8), (3, 9), (3, 10), (3, 11), (3, 12), (3, 13))


def _describe(versions) -> str:
    return ", ".join(f"{major}.{minor}" for major, minor in versions)


def module_name(version: Tuple[int, int]) -> str:
    """The table module's short name for a version: (3, 11) -> "py311"."""
    return f"py{version[0]}{version[1]}"


def table_for(version: Tuple[int, ...]) -> VersionTable:
    """The opcode table of CPython ``version`` (a (major, minor) tuple; extra fields are ignored)."""
    try:
        key = (int(version[0]), int(version[1]))
    except (TypeError, ValueError, IndexError):
        raise ValueError(f"expected a version tuple such as (3, 11), got {version!r}") from None
    if key not in SUPPORTED_VERSIONS:
        raise ValueError(
            f"no opcode table for CPython {key[0]}.{key[1]}; supported versions: "
            f"{_describe(SUPPORTED_VERSIONS)}. Adding a version means writing "
            f"opcode_tables/{module_name(key)}.py as a delta of the newest table."
        )
    return importlib.import_module(f"{__name__}.{module_name(key)}").TABLE


@functools.lru_cache(maxsize=None)
def current_table() -> VersionTable:
    """The table of the running interpreter (the one place that reads sys.version_info)."""
    return table_for(tuple(sys.version_info[:2]))
