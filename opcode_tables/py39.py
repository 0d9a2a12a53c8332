"""CPython 3.9: 3.8 with the finally machinery and the BUILD_*_UNPACK family replaced.

Adds RERAISE, WITH_EXCEPT_START and JUMP_IF_NOT_EXC_MATCH (try/except and
with now re-raise explicitly instead of going through END_FINALLY), IS_OP
and CONTAINS_OP (taken out of COMPARE_OP, whose cmp_op shrinks to the six
rich comparisons), LOAD_ASSERTION_ERROR, and LIST_EXTEND / SET_UPDATE /
DICT_UPDATE / DICT_MERGE / LIST_TO_TUPLE for star-unpacking displays and
calls.  Removes BEGIN_FINALLY, CALL_FINALLY, POP_FINALLY, END_FINALLY,
WITH_CLEANUP_START/FINISH and the six BUILD_*_UNPACK opcodes.  Jump
arguments still count bytes.
"""
from __future__ import annotations

from . import py38
from .spec import OpcodeSpec

TABLE = py38.TABLE.derive(
    (3, 9),
    add=[
        # exceptions and with
        OpcodeSpec("RERAISE", flow="raise"),
        OpcodeSpec("WITH_EXCEPT_START", exits_with_exception=True),
        OpcodeSpec("JUMP_IF_NOT_EXC_MATCH", jump="abs", conditional=True),
        OpcodeSpec("LOAD_ASSERTION_ERROR"),
        # comparisons split out of COMPARE_OP
        OpcodeSpec("IS_OP"),
        OpcodeSpec("CONTAINS_OP"),
        # star-unpacking displays and calls
        OpcodeSpec("LIST_EXTEND"),
        OpcodeSpec("SET_UPDATE"),
        OpcodeSpec("DICT_UPDATE"),
        OpcodeSpec("DICT_MERGE"),
        OpcodeSpec("LIST_TO_TUPLE"),
    ],
    remove=[
        "BEGIN_FINALLY", "CALL_FINALLY", "POP_FINALLY", "END_FINALLY",
        "WITH_CLEANUP_START", "WITH_CLEANUP_FINISH",
        "BUILD_TUPLE_UNPACK", "BUILD_LIST_UNPACK", "BUILD_SET_UNPACK", "BUILD_MAP_UNPACK",
        "BUILD_TUPLE_UNPACK_WITH_CALL", "BUILD_MAP_UNPACK_WITH_CALL",
    ],
    facts={
        "block_stack_ops": ("POP_BLOCK", "POP_EXCEPT", "RERAISE"),
        "cmp_op": ("<", "<=", "==", "!=", ">", ">="),
    },
)
