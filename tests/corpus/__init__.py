"""Differential test corpus for the tracer: ordinary NumPy user code, one module per family.

``all_cases()`` imports every family and returns the registered cases by name.
"""
from __future__ import annotations

import importlib
from typing import Dict

import opcode_tables

from .registry import ArgMaker, Call, Case, case, kw, registered

FAMILIES = (
    "arithmetic",
    "numpy_funcs",
    "indexing",
    "python_values",
    "control_flow",
    "loops",
    "comprehensions",
    "calls",
    "closures",
    "containers",
    "exceptions_with",
    "globals_attrs",
    "collections_",
    "formatting",
    "shape_specialisation",
    "statements",
    "models",
    "layouts_dtypes",
    "side_effects",
)
# Families written in syntax older interpreters lack: imported where the running table has
# the opcode named (no version checks).
OPTIONAL_FAMILIES = {"pattern_matching": "MATCH_CLASS"}


def all_cases() -> Dict[str, Case]:
    opcodes = opcode_tables.current_table().opcodes
    optional = [family for family, opcode in OPTIONAL_FAMILIES.items() if opcode in opcodes]
    for family in FAMILIES + tuple(optional):
        importlib.import_module(f"{__name__}.{family}")
    return registered()


__all__ = ["ArgMaker", "Call", "Case", "FAMILIES", "all_cases", "case", "kw"]
