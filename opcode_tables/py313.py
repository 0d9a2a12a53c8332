"""CPython 3.13: renumbered opcodes, superinstructions, CALL_KW and TO_BOOL.

Almost every opcode has a new number (never store numbers: they come from
the running interpreter's ``dis.opmap``).  Adds TO_BOOL (explicit truth
test before conditional jumps), CALL_KW (keyword names as a tuple on the
stack; KW_NAMES goes), the superinstructions LOAD_FAST_LOAD_FAST,
STORE_FAST_LOAD_FAST and STORE_FAST_STORE_FAST (two 4-bit local indices in
one arg), SET_FUNCTION_ATTRIBUTE (MAKE_FUNCTION takes only the code object
now), CONVERT_VALUE / FORMAT_SIMPLE / FORMAT_WITH_SPEC (replacing
FORMAT_VALUE), and the interpreter-internal ENTER_EXECUTOR and
EXIT_INIT_CHECK.  Removes KW_NAMES, FORMAT_VALUE and LOAD_CLOSURE (now a
plain LOAD_FAST).  The NULL of a call sequence moves *after* the callable;
COMPARE_OP's arg is ``index << 5 | bool bit 16 | mask``; CONTAINS_OP,
JUMP_BACKWARD and the POP_JUMP_IF_* jumps gain one cache unit, which
relative jumps skip.
"""
from __future__ import annotations

from . import py312
from .py312 import INTERPRETER_INTERNAL
from .spec import OpcodeSpec

_BASE = py312.TABLE


TABLE = _BASE.derive(
    (3, 13),
    add=[
        OpcodeSpec("TO_BOOL", caches=3),
        OpcodeSpec("CALL_KW", is_call=True),
        # superinstructions: see the "superinstructions" fact
        OpcodeSpec("LOAD_FAST_LOAD_FAST"),
        OpcodeSpec("STORE_FAST_LOAD_FAST"),
        OpcodeSpec("STORE_FAST_STORE_FAST"),
        OpcodeSpec("SET_FUNCTION_ATTRIBUTE"),
        # f-strings, replacing FORMAT_VALUE
        OpcodeSpec("CONVERT_VALUE"),
        OpcodeSpec("FORMAT_SIMPLE"),
        OpcodeSpec("FORMAT_WITH_SPEC"),
        # co_code shows the instruction a tier-2 executor replaced, never this
        OpcodeSpec("ENTER_EXECUTOR", unsupported=INTERPRETER_INTERNAL),
        # only in the interpreter's shim frame for __init__ calls
        OpcodeSpec("EXIT_INIT_CHECK", unsupported=INTERPRETER_INTERNAL),
    ],
    remove=["KW_NAMES", "FORMAT_VALUE", "LOAD_CLOSURE"],
    change=[
        _BASE.changed("CONTAINS_OP", caches=1),
        _BASE.changed("JUMP_BACKWARD", caches=1),
        # truth tests take an exact bool: TO_BOOL converts the value before them
        _BASE.changed("POP_JUMP_IF_FALSE", caches=1, pops_exact_bool=True),
        _BASE.changed("POP_JUMP_IF_TRUE", caches=1, pops_exact_bool=True),
        _BASE.changed("POP_JUMP_IF_NONE", caches=1),
        _BASE.changed("POP_JUMP_IF_NOT_NONE", caches=1),
    ],
    facts={
        "loop_end_cleanup": ("END_FOR", "POP_TOP"),
        "call_prefix": (),
        "compare_op_shift": 5,
        "compare_op_bool_bit": 16,
        "superinstructions": {
            "LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
            "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST"),
            "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST"),
        },
        "call_null_layout": "callable_first",
        # dis.stack_effect reports RETURN_GENERATOR's +1 itself from 3.13.
        "stack_effect_overrides": {},
        "kw_names": "call_kw_op",
        "function_attrs": "set_function_attribute",
        "intrinsics_2": py312.TABLE.fact("intrinsics_2") + ("INTRINSIC_SET_TYPEPARAM_DEFAULT",),
    },
)
