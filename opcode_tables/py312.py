"""CPython 3.12: PEP 709 inlined comprehensions, CALL_INTRINSIC, no PRECALL.

Adds RETURN_CONST, BINARY_SLICE and STORE_SLICE (``a[i:j]`` without
BUILD_SLICE), END_FOR (closes every for loop), LOAD_FAST_CHECK and
LOAD_FAST_AND_CLEAR (the latter saves a name shadowed by an inlined
comprehension), LOAD_SUPER_ATTR (``super().x`` in one opcode),
CALL_INTRINSIC_1/2 (where PRINT_EXPR, IMPORT_STAR, UNARY_POSITIVE,
LIST_TO_TUPLE, ASYNC_GEN_WRAP and PREP_RERAISE_STAR went), undirected
POP_JUMP_IF_TRUE/FALSE/NONE/NOT_NONE (forward only), the class-body loads
LOAD_LOCALS / LOAD_FROM_DICT_OR_GLOBALS / LOAD_FROM_DICT_OR_DEREF, the
generator opcodes END_SEND and CLEANUP_THROW, and the interpreter-internal
INTERPRETER_EXIT and RESERVED.  Removes PRECALL, LOAD_METHOD (now LOAD_ATTR
with an is_method flag bit), JUMP_IF_TRUE/FALSE_OR_POP, the directed
POP_JUMP_FORWARD/BACKWARD_IF_* forms (only JUMP_BACKWARD goes back now),
LOAD_CLASSDEREF and the six opcodes that became intrinsics.  COMPARE_OP's
arg is ``index << 4 | mask``; several cache sizes change.
"""
from __future__ import annotations

from . import py311
from .py38 import GENERATOR_ONLY, INLINED_GENERATOR_ONLY, NAMESPACE_ONLY
from .spec import OpcodeSpec

INTERPRETER_INTERNAL = "interpreter-internal; the compiler never emits it into a code object"

_BASE = py311.TABLE


TABLE = _BASE.derive(
    (3, 12),
    add=[
        OpcodeSpec("RETURN_CONST", flow="return"),
        OpcodeSpec("BINARY_SLICE", dynamo_counts_as=2),
        OpcodeSpec("STORE_SLICE", dynamo_counts_as=2),
        # for loops: FOR_ITER's exhausted branch lands on END_FOR
        OpcodeSpec("END_FOR"),
        # locals: unbound-checked load; save/restore around inlined comprehensions
        OpcodeSpec("LOAD_FAST_CHECK"),
        OpcodeSpec("LOAD_FAST_AND_CLEAR", may_push_null=True),  # NULL where the name is unbound
        OpcodeSpec("LOAD_SUPER_ATTR", caches=1),
        # intrinsics: operand indexes the "intrinsics_1" / "intrinsics_2" facts
        OpcodeSpec("CALL_INTRINSIC_1"),
        OpcodeSpec("CALL_INTRINSIC_2"),
        # forward-only conditional jumps, measured from after their caches
        OpcodeSpec("POP_JUMP_IF_FALSE", jump="rel", conditional=True),
        OpcodeSpec("POP_JUMP_IF_TRUE", jump="rel", conditional=True),
        OpcodeSpec("POP_JUMP_IF_NONE", jump="rel", conditional=True, dynamo_counts_as=3),
        OpcodeSpec("POP_JUMP_IF_NOT_NONE", jump="rel", conditional=True, dynamo_counts_as=3),
        # class bodies and PEP 695 annotation scopes
        OpcodeSpec("LOAD_LOCALS", unsupported=NAMESPACE_ONLY),
        OpcodeSpec("LOAD_FROM_DICT_OR_GLOBALS", unsupported=NAMESPACE_ONLY),
        OpcodeSpec("LOAD_FROM_DICT_OR_DEREF", unsupported=NAMESPACE_ONLY),
        # generators and coroutines
        OpcodeSpec("END_SEND", note=INLINED_GENERATOR_ONLY),
        OpcodeSpec("CLEANUP_THROW", unsupported=GENERATOR_ONLY),
        # never in a code object
        OpcodeSpec("INTERPRETER_EXIT", unsupported=INTERPRETER_INTERNAL),
        OpcodeSpec("RESERVED", unsupported=INTERPRETER_INTERNAL),
    ],
    remove=[
        "PRECALL", "LOAD_METHOD",
        "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP",
        "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE",
        "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE",
        "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE",
        "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE",
        "LOAD_CLASSDEREF",
        # now CALL_INTRINSIC_1 / CALL_INTRINSIC_2 operands
        "PRINT_EXPR", "IMPORT_STAR", "UNARY_POSITIVE", "LIST_TO_TUPLE",
        "ASYNC_GEN_WRAP", "PREP_RERAISE_STAR",
    ],
    change=[
        _BASE.changed("BINARY_SUBSCR", caches=1),
        _BASE.changed("COMPARE_OP", caches=1),
        _BASE.changed("LOAD_GLOBAL", caches=4),
        _BASE.changed("LOAD_ATTR", caches=9),
        _BASE.changed("FOR_ITER", caches=1),
        _BASE.changed("SEND", caches=1),
        # PRECALL is gone: dis.stack_effect books all of CALL's effect on CALL
        _BASE.changed("CALL", caches=3, stack_effect_shared_with=None),
    ],
    facts={
        "loop_end_cleanup": ("END_FOR",),
        "call_prefix": ("KW_NAMES",),
        "arg_flags": {
            "LOAD_GLOBAL": ("push_null",),
            "LOAD_ATTR": ("is_method",),
            "LOAD_SUPER_ATTR": ("is_method", "two_arg"),
        },
        "compare_op_shift": 4,
        "compare_op_masks": {"<": 2, "<=": 10, "==": 8, "!=": 7, ">": 4, ">=": 12},
        "has_precall": False,
        "dynamo_super_call": None,
        "send_pops_receiver_at_end": False,
        "intrinsics_1": (
            "INTRINSIC_1_INVALID", "INTRINSIC_PRINT", "INTRINSIC_IMPORT_STAR",
            "INTRINSIC_STOPITERATION_ERROR", "INTRINSIC_ASYNC_GEN_WRAP",
            "INTRINSIC_UNARY_POSITIVE", "INTRINSIC_LIST_TO_TUPLE", "INTRINSIC_TYPEVAR",
            "INTRINSIC_PARAMSPEC", "INTRINSIC_TYPEVARTUPLE", "INTRINSIC_SUBSCRIPT_GENERIC",
            "INTRINSIC_TYPEALIAS",
        ),
        "intrinsics_2": (
            "INTRINSIC_2_INVALID", "INTRINSIC_PREP_RERAISE_STAR",
            "INTRINSIC_TYPEVAR_WITH_BOUND", "INTRINSIC_TYPEVAR_WITH_CONSTRAINTS",
            "INTRINSIC_SET_FUNCTION_TYPE_PARAMS",
        ),
        "comprehensions_inlined": True,
    },
)
