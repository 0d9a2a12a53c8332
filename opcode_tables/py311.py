"""CPython 3.11: zero-cost exceptions, inline caches and the new call sequence.

Adds CACHE (inline cache units that follow 11 opcodes), RESUME (frame
prologue), MAKE_CELL and COPY_FREE_VARS (closure prologue over the unified
``co_localsplus``), PUSH_NULL, PRECALL, CALL and KW_NAMES (a call finds
either NULL + callable, the NULL from PUSH_NULL or LOAD_GLOBAL's flag bit,
or method + self from LOAD_METHOD below its arguments), BINARY_OP (one opcode for every binary and in-place operator, arg
indexes ``dis._nb_ops``), COPY and SWAP (replacing DUP_TOP*/ROT_*),
PUSH_EXC_INFO, CHECK_EXC_MATCH, CHECK_EG_MATCH, PREP_RERAISE_STAR and
BEFORE_WITH (exception handling driven by ``co_exceptiontable``),
JUMP_BACKWARD and POP_JUMP_FORWARD/BACKWARD_IF_TRUE/FALSE/NONE/NOT_NONE
(every jump is relative now, its direction in its name), and the generator
opcodes RETURN_GENERATOR, SEND, ASYNC_GEN_WRAP, JUMP_BACKWARD_NO_INTERRUPT.
Removes the 26 BINARY_*/INPLACE_* operator opcodes, CALL_FUNCTION(_KW),
CALL_METHOD, DUP_TOP(_TWO), ROT_TWO/THREE/FOUR/N, JUMP_ABSOLUTE, the
absolute POP_JUMP_IF_TRUE/FALSE, JUMP_IF_NOT_EXC_MATCH, the block stack
(SETUP_FINALLY, SETUP_WITH, SETUP_ASYNC_WITH, POP_BLOCK), GEN_START,
COPY_DICT_WITHOUT_KEYS and YIELD_FROM.  JUMP_IF_TRUE/FALSE_OR_POP become
relative; LOAD_GLOBAL's arg carries a push-NULL flag in bit 0.
"""
from __future__ import annotations

from . import py310
from .py38 import DECODER_ONLY, GENERATOR_ONLY, INLINED_GENERATOR_ONLY
from .spec import OpcodeSpec


_BASE = py310.TABLE


EXCEPT_STAR = "except* is not traced yet: its exception-group test is a graph break (runs natively)"

TABLE = _BASE.derive(
    (3, 11),
    add=[
        OpcodeSpec("CACHE", decoder_only=True,
                   note="inline cache unit, never reaches the tracer; " + DECODER_ONLY),
        # frame prologue
        OpcodeSpec("RESUME"),
        OpcodeSpec("MAKE_CELL"),
        OpcodeSpec("COPY_FREE_VARS"),
        # stack manipulation
        OpcodeSpec("PUSH_NULL", may_push_null=True),
        OpcodeSpec("COPY", permutes_stack=True),
        OpcodeSpec("SWAP", permutes_stack=True),
        # operators
        OpcodeSpec("BINARY_OP", caches=1),
        # calls
        OpcodeSpec("PRECALL", caches=1),
        OpcodeSpec("CALL", caches=4, is_call=True, stack_effect_shared_with="PRECALL"),
        OpcodeSpec("KW_NAMES"),
        # jumps: all relative, direction in the name
        OpcodeSpec("JUMP_BACKWARD", jump="rel_back", flow="jump"),
        OpcodeSpec("POP_JUMP_FORWARD_IF_FALSE", jump="rel", conditional=True),
        OpcodeSpec("POP_JUMP_FORWARD_IF_TRUE", jump="rel", conditional=True),
        OpcodeSpec("POP_JUMP_FORWARD_IF_NONE", jump="rel", conditional=True, dynamo_counts_as=3),
        OpcodeSpec("POP_JUMP_FORWARD_IF_NOT_NONE", jump="rel", conditional=True, dynamo_counts_as=3),
        OpcodeSpec("POP_JUMP_BACKWARD_IF_FALSE", jump="rel_back", conditional=True),
        OpcodeSpec("POP_JUMP_BACKWARD_IF_TRUE", jump="rel_back", conditional=True),
        OpcodeSpec("POP_JUMP_BACKWARD_IF_NONE", jump="rel_back", conditional=True, dynamo_counts_as=3),
        OpcodeSpec("POP_JUMP_BACKWARD_IF_NOT_NONE", jump="rel_back", conditional=True, dynamo_counts_as=3),
        # exceptions and with (handlers come from co_exceptiontable)
        OpcodeSpec("PUSH_EXC_INFO"),
        OpcodeSpec("CHECK_EXC_MATCH"),
        OpcodeSpec("CHECK_EG_MATCH", unsupported=EXCEPT_STAR),
        OpcodeSpec("PREP_RERAISE_STAR", unsupported=EXCEPT_STAR),  # only ever after CHECK_EG_MATCH
        OpcodeSpec("BEFORE_WITH", enters_with=True),
        # generators and coroutines
        OpcodeSpec("RETURN_GENERATOR", note=INLINED_GENERATOR_ONLY),
        OpcodeSpec("SEND", jump="rel", conditional=True, note=INLINED_GENERATOR_ONLY, resumable_after=False),
        OpcodeSpec("ASYNC_GEN_WRAP", unsupported=GENERATOR_ONLY),
        # Emitted in the send loop of yield from / await (3.11+) and in
        # exception cleanup (3.13); traced as a plain backward jump.
        OpcodeSpec("JUMP_BACKWARD_NO_INTERRUPT", jump="rel_back", flow="jump"),
    ],
    remove=[
        # operators, now BINARY_OP
        "BINARY_POWER", "BINARY_MULTIPLY", "BINARY_MATRIX_MULTIPLY", "BINARY_FLOOR_DIVIDE",
        "BINARY_TRUE_DIVIDE", "BINARY_MODULO", "BINARY_ADD", "BINARY_SUBTRACT",
        "BINARY_LSHIFT", "BINARY_RSHIFT", "BINARY_AND", "BINARY_XOR", "BINARY_OR",
        "INPLACE_POWER", "INPLACE_MULTIPLY", "INPLACE_MATRIX_MULTIPLY", "INPLACE_FLOOR_DIVIDE",
        "INPLACE_TRUE_DIVIDE", "INPLACE_MODULO", "INPLACE_ADD", "INPLACE_SUBTRACT",
        "INPLACE_LSHIFT", "INPLACE_RSHIFT", "INPLACE_AND", "INPLACE_XOR", "INPLACE_OR",
        # calls, now PRECALL + CALL
        "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_METHOD",
        # stack manipulation, now COPY / SWAP
        "DUP_TOP", "DUP_TOP_TWO", "ROT_TWO", "ROT_THREE", "ROT_FOUR", "ROT_N",
        # absolute jumps
        "JUMP_ABSOLUTE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "JUMP_IF_NOT_EXC_MATCH",
        # the block stack, now co_exceptiontable
        "SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH", "POP_BLOCK",
        # generators and pattern matching
        "GEN_START", "YIELD_FROM", "COPY_DICT_WITHOUT_KEYS",
    ],
    change=[
        _BASE.changed("JUMP_IF_FALSE_OR_POP", jump="rel"),
        _BASE.changed("JUMP_IF_TRUE_OR_POP", jump="rel"),
        # specialising adaptive interpreter: inline cache units after these
        _BASE.changed("BINARY_SUBSCR", caches=4),
        _BASE.changed("STORE_SUBSCR", caches=1),
        _BASE.changed("UNPACK_SEQUENCE", caches=1),
        _BASE.changed("COMPARE_OP", caches=2),
        _BASE.changed("LOAD_GLOBAL", caches=5),
        _BASE.changed("LOAD_ATTR", caches=4),
        _BASE.changed("STORE_ATTR", caches=4),
        _BASE.changed("LOAD_METHOD", caches=10),
    ],
    facts={
        "linetable": "locations",
        "exception_table": True,
        "arg_flags": {"LOAD_GLOBAL": ("push_null",)},
        "call_null_layout": "null_first",
        "calls_move_arguments": True,
        "reraise_uses_exception_traceback": True,
        "dynamo_super_call": "PRECALL",
        "send_pops_receiver_at_end": True,
        "match_pushes_success_flag": False,
        "kw_names": "kw_names_op",
        "has_precall": True,
        "cell_creation": "make_cell",
        "binary_ops": (
            ("NB_ADD", "+"), ("NB_AND", "&"), ("NB_FLOOR_DIVIDE", "//"), ("NB_LSHIFT", "<<"),
            ("NB_MATRIX_MULTIPLY", "@"), ("NB_MULTIPLY", "*"), ("NB_REMAINDER", "%"),
            ("NB_OR", "|"), ("NB_POWER", "**"), ("NB_RSHIFT", ">>"), ("NB_SUBTRACT", "-"),
            ("NB_TRUE_DIVIDE", "/"), ("NB_XOR", "^"),
            ("NB_INPLACE_ADD", "+="), ("NB_INPLACE_AND", "&="),
            ("NB_INPLACE_FLOOR_DIVIDE", "//="), ("NB_INPLACE_LSHIFT", "<<="),
            ("NB_INPLACE_MATRIX_MULTIPLY", "@="), ("NB_INPLACE_MULTIPLY", "*="),
            ("NB_INPLACE_REMAINDER", "%="), ("NB_INPLACE_OR", "|="),
            ("NB_INPLACE_POWER", "**="), ("NB_INPLACE_RSHIFT", ">>="),
            ("NB_INPLACE_SUBTRACT", "-="), ("NB_INPLACE_TRUE_DIVIDE", "/="),
            ("NB_INPLACE_XOR", "^="),
        ),
        "make_function_qualname_on_stack": False,
        "deref_index": "localsplus",
        # Code with cells or free variables also needs MAKE_CELL / COPY_FREE_VARS
        # before RESUME (and generator code RETURN_GENERATOR, POP_TOP); that
        # depends on the code object, not on the version.
        "frame_prologue": ("RESUME",),
        "call_prefix": ("KW_NAMES", "PRECALL"),
        "block_stack_ops": (),
        # dis.stack_effect says 0; the generator resumes with the sent value pushed.
        "stack_effect_overrides": {"RETURN_GENERATOR": 1},
        "code_fields": (
            "co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals",
            "co_stacksize", "co_flags", "co_firstlineno", "co_code", "co_consts",
            "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_filename",
            "co_name", "co_qualname", "co_linetable", "co_exceptiontable",
        ),
    },
)
