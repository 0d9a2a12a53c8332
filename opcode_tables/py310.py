"""CPython 3.10: 3.9 plus pattern matching; jump arguments now count code units.

Adds GET_LEN, MATCH_MAPPING, MATCH_SEQUENCE, MATCH_KEYS, MATCH_CLASS and
COPY_DICT_WITHOUT_KEYS (the ``match`` statement), ROT_N, and GEN_START (the
first instruction of generator and coroutine code).  Removes nothing.
Jump arguments count 2-byte code units instead of bytes, ``co_lnotab`` gives
way to the 3.10 ``co_linetable`` format, and RERAISE takes an argument
(whether to restore ``f_lasti``).
"""
from __future__ import annotations

from . import py39
from .py38 import GENERATOR_ONLY, INLINED_GENERATOR_ONLY
from .spec import OpcodeSpec

TABLE = py39.TABLE.derive(
    (3, 10),
    add=[
        # pattern matching (compiler.handlers.pattern_matching)
        OpcodeSpec("GET_LEN"),
        OpcodeSpec("MATCH_MAPPING"),
        OpcodeSpec("MATCH_SEQUENCE"),
        OpcodeSpec("MATCH_KEYS"),
        OpcodeSpec("MATCH_CLASS"),
        OpcodeSpec("COPY_DICT_WITHOUT_KEYS"),  # a mapping pattern's **rest
        # stack manipulation
        OpcodeSpec("ROT_N", permutes_stack=True),
        # generators
        OpcodeSpec("GEN_START", note=INLINED_GENERATOR_ONLY),
    ],
    facts={
        "jump_unit": 2,
        # MATCH_KEYS and MATCH_CLASS push a success bool after their result (3.11 drops it)
        "match_pushes_success_flag": True,
        "linetable": "linetable310",
        # Generator code is entered with the first sent value on the stack,
        # which GEN_START pops; sizing from an empty stack, it nets to 0.
        "stack_effect_overrides": {"GEN_START": 0},
        "code_fields": tuple(f for f in py39.TABLE.fact("code_fields") if f != "co_lnotab")
        + ("co_linetable",),
    },
)
