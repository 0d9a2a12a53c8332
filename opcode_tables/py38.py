"""CPython 3.8: the base table, every real opcode (120) plus the encoding facts.

Later versions (``py39.py`` ...) derive from this table, so every fact key
exists here.  Facts, as read through ``VersionTable.fact(name)``:

``jump_unit``
    Bytes per unit of a jump argument: 1 (3.8, 3.9), 2 (3.10+: code units).
``linetable``
    Line-number table format: "lnotab" (3.8, 3.9), "linetable310" (3.10),
    "locations" (3.11+, with columns).
``exception_table``
    True where exceptions use ``co_exceptiontable`` (3.11+), False where they
    use the SETUP_* block stack.
``arg_flags``
    opname -> names of flag bits packed into the LOW bits of ``arg``, bit 0
    first; the real index is ``arg >> len(flags)``.  Empty before 3.11.
``compare_op_shift``
    COMPARE_OP's ``dis.cmp_op`` index is ``arg >> compare_op_shift``.
``compare_op_masks``
    Low bits CPython stores under the index (3.12+): cmp symbol -> mask.
``compare_op_bool_bit``
    Bit set when the comparison result is coerced to bool (3.13), else 0.
``cmp_op``
    ``dis.cmp_op`` of the version (3.8 also has "in", "is", "exception match").
``superinstructions``
    opname -> the two opnames it fuses (3.13); the arg packs two 4-bit
    indices, first = ``arg >> 4``, second = ``arg & 15``.
``call_null_layout``
    None (no NULL in call sequences, up to 3.10); "null_first" (3.11, 3.12:
    [NULL, callable, args] or [method, self, args]); "callable_first" (3.13:
    [callable, NULL|self, args]).
``kw_names``
    How keyword names reach a call: "none" (CALL_FUNCTION_KW pops a names
    tuple), "kw_names_op" (3.11, 3.12: KW_NAMES const before CALL),
    "call_kw_op" (3.13: CALL_KW pops a names tuple).
``has_precall``
    True on 3.11 only: every CALL is preceded by PRECALL.
``cell_creation``
    Who makes a frame's cells: "frame_entry" (up to 3.10: CPython, before the
    first instruction, moving an argument that is also a cell into it) or
    "make_cell" (3.11+: a MAKE_CELL instruction per cell, which finds an
    argument's value in its local slot).
``binary_ops``
    BINARY_OP's operand table (``dis._nb_ops``, 3.11+): ((NB_NAME, symbol), ...)
    in arg order; () before 3.11 (one opcode per operator).
``intrinsics_1`` / ``intrinsics_2``
    CALL_INTRINSIC_1/2 operand names in arg order (3.12+); () before.
``comprehensions_inlined``
    True from 3.12 (PEP 709): list/dict/set comprehensions run in the
    enclosing frame instead of a nested code object.
``make_function_qualname_on_stack``
    True up to 3.10: MAKE_FUNCTION pops the qualname above the code object.
``function_attrs``
    How defaults/kwdefaults/annotations/closure reach a new function:
    "make_function_flags" (MAKE_FUNCTION arg flags, values on the stack) or
    "set_function_attribute" (3.13: one SET_FUNCTION_ATTRIBUTE per value).
``function_attr_flags``
    The flag bits of those values, bit 0 first (same on every version).
``deref_index``
    What LOAD_DEREF/STORE_DEREF/LOAD_CLOSURE args index: "cells_then_frees"
    (up to 3.10: co_cellvars + co_freevars) or "localsplus" (3.11+: the
    unified locals/cells/frees space).
``frame_prologue``
    Opnames that must open every code object: () up to 3.10; ("RESUME",)
    from 3.11 (code with cells or free variables also needs MAKE_CELL /
    COPY_FREE_VARS before it, which depends on the code, not the version).
``call_prefix``
    Opnames that belong to the CALL after them without touching the stack
    (3.11: KW_NAMES and PRECALL; 3.12: KW_NAMES): code that resumes at a
    call must start at them, or the call loses its keyword names.
``block_stack_ops``
    Opnames that pop or re-push 3.8-3.10 block-stack entries (besides the
    SETUP_* rows, marked block_setup): code resumed after one of them cannot
    know the blocks left; () from 3.11 (no block stack).
``code_fields``
    The keyword arguments ``CodeType.replace()`` accepts.
``stack_effect_overrides``
    opname -> stack effect to use instead of ``dis.stack_effect`` when sizing
    the stack: 3.10 GEN_START pops the value generator code is entered with
    (sizing from an empty stack it nets to 0); 3.11 and 3.12 report 0 for
    RETURN_GENERATOR, yet the frame
    resumes with the sent value pushed (CPython adds that prologue after
    sizing the stack); 3.13 reports the 1 itself.
``common_constants``
    LOAD_COMMON_CONSTANT's operands in arg order (3.14+: the objects
    themselves, e.g. AssertionError; 3.15 adds None, True, ...); () before.
``special_methods``
    LOAD_SPECIAL's operands in arg order (3.14+: "__enter__", "__exit__",
    ...); () before.
``lazy_annotations``
    True from 3.14 (PEP 649): a function's annotations are computed on demand
    by an ``__annotate__`` function instead of when the ``def`` runs.
``call_function_ex_kwargs``
    Whether CALL_FUNCTION_EX finds a keyword dict above the positional
    tuple: "flag" (arg bit 0 says so, up to 3.13) or "slot" (3.14: the slot
    is always there, holding the dict or NULL).
``unchecked_local_loads``
    Opnames that load a fast local trusting the compiler that it is bound
    (pushing NULL, a crash, if it is not): LOAD_FAST, and from 3.14
    LOAD_FAST_BORROW.  A continuation entered without such a name loads it
    with LOAD_FAST_CHECK instead.
``borrowed_local_load``
    The opname that pushes a local without a reference of its own (the frame's
    local keeps the value alive; the compiler emits it only where that holds
    until the value is consumed): LOAD_FAST_BORROW from 3.14; None before (every
    load owns a reference).  A native instruction sees the borrowed slot in the
    object's reference count (``ndarray.resize``'s check), so a break stub
    pushes such a slot the same way.  Where it exists, a method load
    (LOAD_ATTR's is_method form) moves its operand's reference, borrowed or
    not, into the self slot of the [method, self] pair it pushes.
``moving_local_load``
    The opname that pushes a local's reference as it is -- borrowed or owned --
    and clears the local: LOAD_FAST_AND_CLEAR from 3.14, where loads can be
    borrowed; None before (every load owns a reference, so handing a value on
    needs no move).  Generated code hands a parameter on with it, so that the
    frame it reaches holds the reference as the plain frame held it
    (``opcode_tables.moving_loads``).
``iterator_slots``
    Stack slots one iterator takes between GET_ITER and POP_ITER/END_FOR's
    cleanup: 1, or 2 from 3.15 (GET_ITER pushes the iterable and an index
    for sequences it walks without an iterator object).
``loop_end_cleanup``
    The opnames at a for loop's FOR_ITER target that close the loop (pop
    what the loop left) before the code after it: none up to 3.11 (an
    exhausted FOR_ITER pops its iterator and jumps past the loop), END_FOR
    on 3.12, END_FOR + POP_TOP on 3.13, END_FOR + POP_ITER from 3.14.  An
    exhausted FOR_ITER skips some of them (3.12-3.13: all; 3.14: END_FOR);
    code placed after the last one is reached with the iterator popped.
"""
from __future__ import annotations

from .spec import OpcodeSpec, VersionTable

# Reasons shared with later versions' tables.
# (IMPORT_NAME / IMPORT_FROM are traced where the module is imported already:
# compiler.handlers.imports; this is why the others break.)
IMPORT_RUNS_CODE = ("an import that can run module code (side effects): a graph break, the import runs "
                    "natively; import at module level to keep the frame in one graph")
# Traced only while an inlined generator is drained; a generator frame itself runs natively.
INLINED_GENERATOR_ONLY = "traced only inside an inlined generator; a generator frame runs natively"
GENERATOR_ONLY = "generators and coroutines are not traced: the tracer compiles plain function frames"
NAMESPACE_ONLY = ("only in module and class bodies (dict-backed namespaces); "
                  "the tracer compiles function frames, class bodies run natively")
CLASS_STATEMENT = "class statement: the class body runs natively (graph break)"
INTERACTIVE_ONLY = "only emitted for the interactive prompt; never in a function"
MODULE_ONLY = "only allowed at module level; never in a function"
DECODER_ONLY = "folded into the next instruction's arg by the decoder; never reaches the tracer"

_CODE_FIELDS_38 = (
    "co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals",
    "co_stacksize", "co_flags", "co_firstlineno", "co_code", "co_consts",
    "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_filename",
    "co_name", "co_lnotab",
)

_ROWS = [
    # -- stack manipulation -------------------------------------------------
    OpcodeSpec("POP_TOP"),
    OpcodeSpec("ROT_TWO", permutes_stack=True),
    OpcodeSpec("ROT_THREE", permutes_stack=True),
    OpcodeSpec("ROT_FOUR", permutes_stack=True),
    OpcodeSpec("DUP_TOP", permutes_stack=True),
    OpcodeSpec("DUP_TOP_TWO", permutes_stack=True),
    OpcodeSpec("NOP"),
    OpcodeSpec("EXTENDED_ARG", decoder_only=True, note=DECODER_ONLY),

    # -- unary operators ----------------------------------------------------
    OpcodeSpec("UNARY_POSITIVE"),
    OpcodeSpec("UNARY_NEGATIVE"),
    OpcodeSpec("UNARY_NOT"),
    OpcodeSpec("UNARY_INVERT"),

    # -- binary operators (one opcode per operator until 3.11's BINARY_OP) --
    OpcodeSpec("BINARY_POWER"),
    OpcodeSpec("BINARY_MULTIPLY"),
    OpcodeSpec("BINARY_MATRIX_MULTIPLY"),
    OpcodeSpec("BINARY_FLOOR_DIVIDE"),
    OpcodeSpec("BINARY_TRUE_DIVIDE"),
    OpcodeSpec("BINARY_MODULO"),
    OpcodeSpec("BINARY_ADD"),
    OpcodeSpec("BINARY_SUBTRACT"),
    OpcodeSpec("BINARY_LSHIFT"),
    OpcodeSpec("BINARY_RSHIFT"),
    OpcodeSpec("BINARY_AND"),
    OpcodeSpec("BINARY_XOR"),
    OpcodeSpec("BINARY_OR"),

    # -- in-place operators (augmented assignment) --------------------------
    OpcodeSpec("INPLACE_POWER"),
    OpcodeSpec("INPLACE_MULTIPLY"),
    OpcodeSpec("INPLACE_MATRIX_MULTIPLY"),
    OpcodeSpec("INPLACE_FLOOR_DIVIDE"),
    OpcodeSpec("INPLACE_TRUE_DIVIDE"),
    OpcodeSpec("INPLACE_MODULO"),
    OpcodeSpec("INPLACE_ADD"),
    OpcodeSpec("INPLACE_SUBTRACT"),
    OpcodeSpec("INPLACE_LSHIFT"),
    OpcodeSpec("INPLACE_RSHIFT"),
    OpcodeSpec("INPLACE_AND"),
    OpcodeSpec("INPLACE_XOR"),
    OpcodeSpec("INPLACE_OR"),

    # -- comparisons --------------------------------------------------------
    # 3.8's COMPARE_OP also covers in / not in / is / is not / exception match.
    OpcodeSpec("COMPARE_OP"),

    # -- subscripts and slices ----------------------------------------------
    OpcodeSpec("BINARY_SUBSCR"),
    OpcodeSpec("STORE_SUBSCR"),
    OpcodeSpec("DELETE_SUBSCR"),
    OpcodeSpec("BUILD_SLICE"),

    # -- locals, globals, constants, attributes -----------------------------
    OpcodeSpec("LOAD_CONST"),
    OpcodeSpec("LOAD_FAST"),
    OpcodeSpec("STORE_FAST"),
    OpcodeSpec("DELETE_FAST"),
    OpcodeSpec("LOAD_GLOBAL"),
    OpcodeSpec("STORE_GLOBAL"),
    OpcodeSpec("DELETE_GLOBAL"),
    OpcodeSpec("LOAD_ATTR"),
    OpcodeSpec("STORE_ATTR"),
    OpcodeSpec("DELETE_ATTR"),

    # -- closures -----------------------------------------------------------
    OpcodeSpec("LOAD_CLOSURE"),
    OpcodeSpec("LOAD_DEREF"),
    OpcodeSpec("STORE_DEREF"),
    OpcodeSpec("DELETE_DEREF"),

    # -- dict-backed namespaces (module and class bodies) -------------------
    OpcodeSpec("LOAD_NAME", unsupported=NAMESPACE_ONLY),
    OpcodeSpec("STORE_NAME", unsupported=NAMESPACE_ONLY),
    OpcodeSpec("DELETE_NAME", unsupported=NAMESPACE_ONLY),
    OpcodeSpec("LOAD_CLASSDEREF", unsupported=NAMESPACE_ONLY),
    OpcodeSpec("SETUP_ANNOTATIONS", unsupported=NAMESPACE_ONLY),
    OpcodeSpec("LOAD_BUILD_CLASS", unsupported=CLASS_STATEMENT),
    OpcodeSpec("PRINT_EXPR", unsupported=INTERACTIVE_ONLY),
    OpcodeSpec("IMPORT_STAR", unsupported=MODULE_ONLY),

    # -- imports ------------------------------------------------------------
    OpcodeSpec("IMPORT_NAME"),
    OpcodeSpec("IMPORT_FROM"),

    # -- building containers ------------------------------------------------
    OpcodeSpec("BUILD_TUPLE"),
    OpcodeSpec("BUILD_LIST"),
    OpcodeSpec("BUILD_SET"),
    OpcodeSpec("BUILD_MAP"),
    OpcodeSpec("BUILD_CONST_KEY_MAP"),
    OpcodeSpec("BUILD_STRING"),
    # Star-unpacking displays and calls ([*a, *b], f(*a, **k)); replaced in 3.9.
    OpcodeSpec("BUILD_TUPLE_UNPACK"),
    OpcodeSpec("BUILD_LIST_UNPACK"),
    OpcodeSpec("BUILD_SET_UNPACK"),
    OpcodeSpec("BUILD_MAP_UNPACK"),
    OpcodeSpec("BUILD_TUPLE_UNPACK_WITH_CALL"),
    OpcodeSpec("BUILD_MAP_UNPACK_WITH_CALL"),
    # Comprehension bodies append to the container deep in the stack.
    OpcodeSpec("LIST_APPEND"),
    OpcodeSpec("SET_ADD"),
    OpcodeSpec("MAP_ADD"),
    OpcodeSpec("UNPACK_SEQUENCE"),
    OpcodeSpec("UNPACK_EX"),

    # -- string formatting --------------------------------------------------
    OpcodeSpec("FORMAT_VALUE"),

    # -- functions and calls ------------------------------------------------
    OpcodeSpec("MAKE_FUNCTION"),
    OpcodeSpec("CALL_FUNCTION", is_call=True),
    OpcodeSpec("CALL_FUNCTION_KW", is_call=True),
    OpcodeSpec("CALL_FUNCTION_EX", is_call=True),
    # [NULL, callable] for a plain attribute, [method, self] for a method
    OpcodeSpec("LOAD_METHOD", may_push_null=True),
    OpcodeSpec("CALL_METHOD", is_call=True),
    OpcodeSpec("RETURN_VALUE", flow="return"),

    # -- jumps (3.8: argument counts bytes) ---------------------------------
    OpcodeSpec("JUMP_FORWARD", jump="rel", flow="jump"),
    OpcodeSpec("JUMP_ABSOLUTE", jump="abs", flow="jump"),
    OpcodeSpec("POP_JUMP_IF_FALSE", jump="abs", conditional=True),
    OpcodeSpec("POP_JUMP_IF_TRUE", jump="abs", conditional=True),
    OpcodeSpec("JUMP_IF_FALSE_OR_POP", jump="abs", conditional=True),
    OpcodeSpec("JUMP_IF_TRUE_OR_POP", jump="abs", conditional=True),

    # -- loops --------------------------------------------------------------
    OpcodeSpec("GET_ITER"),
    # Jumps past the loop body when the iterator is exhausted.
    OpcodeSpec("FOR_ITER", jump="rel", conditional=True, resumable_after=False, steps_loop=True),

    # -- exceptions, finally and with: the 3.8 block stack ------------------
    # SETUP_* push a block whose handler is the jump target; the body falls through.
    OpcodeSpec("SETUP_FINALLY", jump="rel", conditional=True, block_setup=True),
    OpcodeSpec("SETUP_WITH", jump="rel", conditional=True, block_setup=True, enters_with=True),
    OpcodeSpec("POP_BLOCK"),
    OpcodeSpec("POP_EXCEPT"),
    OpcodeSpec("RAISE_VARARGS", flow="raise"),
    # pushes NULL: "no exception" for the END_FINALLY of the finally body
    OpcodeSpec("BEGIN_FINALLY", may_push_null=True),
    # Pushes the address of the next instruction and jumps into the finally
    # body, whose END_FINALLY / POP_FINALLY comes back: for flow analysis and
    # stack depth it behaves like a conditional jump that also falls through.
    OpcodeSpec("CALL_FINALLY", jump="rel", conditional=True,
               note="returns to the next instruction through END_FINALLY"),
    OpcodeSpec("POP_FINALLY"),
    # Falls through after a normal finally body; re-raises a pending exception
    # or returns to a CALL_FINALLY site depending on what it pops.
    OpcodeSpec("END_FINALLY", note="may also re-raise, or return to a CALL_FINALLY site"),
    OpcodeSpec("WITH_CLEANUP_START", exits_with_exception=True),
    OpcodeSpec("WITH_CLEANUP_FINISH"),

    # -- generators and coroutines: never traced ----------------------------
    OpcodeSpec("YIELD_VALUE", note=INLINED_GENERATOR_ONLY),
    OpcodeSpec("YIELD_FROM", note=INLINED_GENERATOR_ONLY),
    OpcodeSpec("GET_YIELD_FROM_ITER", note=INLINED_GENERATOR_ONLY),
    OpcodeSpec("GET_AWAITABLE", unsupported=GENERATOR_ONLY),
    OpcodeSpec("GET_AITER", unsupported=GENERATOR_ONLY),
    OpcodeSpec("GET_ANEXT", unsupported=GENERATOR_ONLY),
    OpcodeSpec("END_ASYNC_FOR", unsupported=GENERATOR_ONLY),
    OpcodeSpec("BEFORE_ASYNC_WITH", unsupported=GENERATOR_ONLY, resumable_after=False),
    OpcodeSpec("SETUP_ASYNC_WITH", jump="rel", conditional=True, block_setup=True,
               unsupported=GENERATOR_ONLY),
]

TABLE = VersionTable(
    version=(3, 8),
    opcodes={row.name: row for row in _ROWS},
    facts={
        "jump_unit": 1,
        "linetable": "lnotab",
        "exception_table": False,
        "arg_flags": {},
        "compare_op_shift": 0,
        "compare_op_masks": {},
        "compare_op_bool_bit": 0,
        "cmp_op": ("<", "<=", "==", "!=", ">", ">=", "in", "not in", "is", "is not",
                   "exception match", "BAD"),
        "superinstructions": {},
        "call_null_layout": None,
        "kw_names": "none",
        "has_precall": False,
        "cell_creation": "frame_entry",
        "binary_ops": (),
        "intrinsics_1": (),
        "intrinsics_2": (),
        "comprehensions_inlined": False,
        "make_function_qualname_on_stack": True,
        "function_attrs": "make_function_flags",
        "function_attr_flags": ("defaults", "kwdefaults", "annotations", "closure"),
        "deref_index": "cells_then_frees",
        "frame_prologue": (),
        "call_prefix": (),
        "block_stack_ops": ("POP_BLOCK", "POP_EXCEPT", "BEGIN_FINALLY", "CALL_FINALLY", "POP_FINALLY",
                            "END_FINALLY", "WITH_CLEANUP_START", "WITH_CLEANUP_FINISH"),
        "code_fields": _CODE_FIELDS_38,
        "stack_effect_overrides": {},
        "common_constants": (),
        "special_methods": (),
        "lazy_annotations": False,
        "iterator_slots": 1,
        "loop_end_cleanup": (),
        "call_function_ex_kwargs": "flag",
        "unchecked_local_loads": ("LOAD_FAST",),
        "borrowed_local_load": None,
        "moving_local_load": None,
        # A call to a Python function keeps its arguments on the caller's stack until it
        # returns (3.11+ moves them into the callee's frame): how long a value passed on lives.
        "calls_move_arguments": False,
        # A bare ``raise`` in an except block re-raises the handled exception with the
        # traceback the thread's exception state holds, which is not the exception's own
        # ``__traceback__`` where the two are kept apart (up to 3.10); from 3.11 the state is
        # the exception itself, so a ``__traceback__`` set in the handler is what propagates
        # (and a bare raise adds no entry for the re-raising frame).
        "reraise_uses_exception_traceback": False,
        # ``yield from``'s SEND, when the delegate is exhausted, pops it with the sent value
        # and pushes the delegate's return value (3.11); from 3.12 it leaves the delegate
        # below the return value for END_SEND to pop.  (No SEND before 3.11: YIELD_FROM.)
        "send_pops_receiver_at_end": False,
        # ir_count (Dynamo's rule): Dynamo rewrites a zero-argument ``super()`` (LOAD_GLOBAL
        # super, then this call with 0 arguments, in a function with parameters) into
        # ``super(__class__, first parameter)``: two more instructions.  None where the
        # compiler makes the explicit form itself (3.12+: LOAD_SUPER_ATTR, no rewrite).
        "dynamo_super_call": "CALL_FUNCTION",
        "match_pushes_success_flag": False,   # no match statement before 3.10
    },
)

if len(TABLE.opcodes) != len(_ROWS):  # a row listed twice would silently vanish
    raise AssertionError("py38: duplicate opcode rows")
