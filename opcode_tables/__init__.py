"""Per-CPython-version opcode tables: the only place that knows how versions differ.

``current_table()`` is the running interpreter's table; ``table_for((3, 11))``
any supported version's (every version module imports on every interpreter,
since tables hold names and facts, never opcode numbers).  An interpreter with
no table (a new CPython) is not an error until something needs the table:
``has_current_table()`` says whether there is one, and ``current_table()``
raises ``NoTableError`` saying how to add it.
"""
from __future__ import annotations

import functools
import importlib
import os
import sys
from typing import Tuple

from .instruction import Instruction, create_instruction
from .spec import OpcodeSpec, VersionTable

__all__ = [
    "SUPPORTED_VERSIONS", "table_for", "current_table", "has_current_table", "running_version",
    "NoTableError", "PRETEND_VERSION_VARIABLE", "module_name",
    "Instruction", "create_instruction", "OpcodeSpec", "VersionTable",
]

SUPPORTED_VERSIONS: Tuple[Tuple[int, int], ...] = ((3, 8), (3, 9), (3, 10), (3, 11), (3, 12), (3, 13),
                                                  (3, 14), (3, 15))


# Test hook: makes running_version() report this "3.N" instead, e.g. 3.16 to exercise the
# path of an interpreter with no table (only a version without a table is accepted).
PRETEND_VERSION_VARIABLE = "TRACEMATRIX_PRETEND_PYTHON"


class NoTableError(ValueError):
    """There is no opcode table for the requested (or the running) CPython version."""


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
        raise NoTableError(
            f"no opcode table for CPython {key[0]}.{key[1]}; supported versions: "
            f"{_describe(SUPPORTED_VERSIONS)}. Adding a version means writing "
            f"opcode_tables/{module_name(key)}.py as a delta of the newest table."
        )
    return importlib.import_module(f"{__name__}.{module_name(key)}").TABLE


@functools.lru_cache(maxsize=None)
def running_version() -> Tuple[int, int]:
    """The running interpreter's (major, minor): the one place that reads sys.version_info."""
    pretend = os.environ.get(PRETEND_VERSION_VARIABLE)
    if pretend:
        major, _, minor = pretend.partition(".")
        if not (major.isdigit() and minor.isdigit()) or (int(major), int(minor)) in SUPPORTED_VERSIONS:
            raise ValueError(f"{PRETEND_VERSION_VARIABLE}={pretend!r}: expected a version with no table, "
                             "such as 3.16 (it simulates a new CPython)")
        return (int(major), int(minor))
    return (sys.version_info[0], sys.version_info[1])


def has_current_table() -> bool:
    """Whether the running interpreter has a table (a new CPython may not, yet)."""
    return running_version() in SUPPORTED_VERSIONS


@functools.lru_cache(maxsize=None)
def current_table() -> VersionTable:
    """The table of the running interpreter; NoTableError (saying how to add one) if it has none."""
    return table_for(running_version())
