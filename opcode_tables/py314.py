"""CPython 3.14: borrowed loads, small-int and common-constant loads, template strings.

Adds LOAD_SMALL_INT (ints 0..255 without co_consts), LOAD_FAST_BORROW and
LOAD_FAST_BORROW_LOAD_FAST_BORROW (a LOAD_FAST that skips the reference count
where the compiler proves the frame keeps the value alive; a third
superinstruction), LOAD_COMMON_CONSTANT (AssertionError, NotImplementedError,
tuple, all, any: what LOAD_ASSERTION_ERROR and some LOAD_GLOBALs were),
LOAD_SPECIAL (``__enter__`` / ``__exit__`` / ``__aenter__`` / ``__aexit__`` as
a method pair: ``with`` no longer has BEFORE_WITH / BEFORE_ASYNC_WITH),
POP_ITER (pops the iterator after END_FOR), NOT_TAKEN (a no-op marking the
fall-through side of a conditional jump, for branch monitoring), and
BUILD_TEMPLATE / BUILD_INTERPOLATION (template strings, PEP 750).  Removes
BINARY_SUBSCR (now BINARY_OP with the "[]" operand), RETURN_CONST (LOAD_CONST
+ RETURN_VALUE), BUILD_CONST_KEY_MAP, LOAD_ASSERTION_ERROR, BEFORE_WITH and
BEFORE_ASYNC_WITH.  CALL_FUNCTION_EX takes no flag any more (keyword
arguments, or NULL, are always on the stack); END_ASYNC_FOR gains a backward
"jump" argument (pointing at the loop's SEND, for monitoring; it never jumps);
BINARY_OP has 5 cache units and CALL_KW 3.  Annotations are lazy (PEP 649).
"""
from __future__ import annotations

import builtins

from . import py313
from .py38 import GENERATOR_ONLY
from .spec import OpcodeSpec

_BASE = py313.TABLE

TEMPLATE_STRINGS = ("template strings (PEP 750) are not traced: the template is built natively at a "
                    "graph break and the frame goes on from there")


TABLE = _BASE.derive(
    (3, 14),
    add=[
        OpcodeSpec("LOAD_SMALL_INT"),
        OpcodeSpec("LOAD_FAST_BORROW"),
        # superinstruction: see the "superinstructions" fact
        OpcodeSpec("LOAD_FAST_BORROW_LOAD_FAST_BORROW"),
        # operand indexes the "common_constants" fact
        OpcodeSpec("LOAD_COMMON_CONSTANT"),
        # operand indexes the "special_methods" fact; pushes (method, self or NULL)
        OpcodeSpec("LOAD_SPECIAL"),
        OpcodeSpec("POP_ITER"),
        OpcodeSpec("NOT_TAKEN"),
        # template strings (PEP 750)
        OpcodeSpec("BUILD_TEMPLATE", unsupported=TEMPLATE_STRINGS),
        OpcodeSpec("BUILD_INTERPOLATION", unsupported=TEMPLATE_STRINGS),
    ],
    remove=["BINARY_SUBSCR", "RETURN_CONST", "BUILD_CONST_KEY_MAP", "LOAD_ASSERTION_ERROR",
            "BEFORE_WITH", "BEFORE_ASYNC_WITH"],
    change=[
        _BASE.changed("BINARY_OP", caches=5),
        _BASE.changed("CALL_KW", caches=3),
        # "Not really a jump" (dis): the argument points back at the loop's SEND.
        _BASE.changed("END_ASYNC_FOR", jump="rel_back", conditional=True, unsupported=GENERATOR_ONLY),
    ],
    facts={
        "loop_end_cleanup": ("END_FOR", "POP_ITER"),
        "superinstructions": dict(
            _BASE.fact("superinstructions"),
            LOAD_FAST_BORROW_LOAD_FAST_BORROW=("LOAD_FAST_BORROW", "LOAD_FAST_BORROW")),
        "binary_ops": _BASE.fact("binary_ops") + (("NB_SUBSCR", "[]"),),
        "common_constants": (AssertionError, NotImplementedError, tuple, builtins.all, builtins.any),
        "special_methods": ("__enter__", "__exit__", "__aenter__", "__aexit__"),
        "lazy_annotations": True,
        "call_function_ex_kwargs": "slot",
        "unchecked_local_loads": _BASE.fact("unchecked_local_loads") + ("LOAD_FAST_BORROW",),
        "borrowed_local_load": "LOAD_FAST_BORROW",
        "moving_local_load": "LOAD_FAST_AND_CLEAR",
        # SET_FUNCTION_ATTRIBUTE 16: the __annotate__ function of lazy annotations
        "function_attr_flags": _BASE.fact("function_attr_flags") + ("annotate",),
    },
)
