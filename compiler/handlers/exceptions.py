"""try/except/finally, raise, and with blocks.

Exceptions raised by the traced program (``raise``, a failing dict lookup, an
assert) are traced as control flow when a handler in the frame catches them.
Where handlers come from is the table fact ``exception_table``: 3.11+ reads
the handler off the raising instruction (``inst.exc``, from
``co_exceptiontable``); 3.8-3.10 unwinds the block stack that SETUP_FINALLY /
SETUP_WITH pushed.  An exception that leaves the compiled frame makes the
frame run natively (where the real exception is raised).
"""
from __future__ import annotations

from opcode_tables.instruction import Instruction

from ..tracer import InstructionTranslatorBase
from ..variables.base import NULL, VariableTracker
from ..variables.builtins import BuiltinVariable, ExceptionVariable, isinstance_of_type
from ..variables.constant import ConstantVariable
from .registry import handler


class _ExitFunction(VariableTracker):
    """A with block's bound ``__exit__`` on the stack; marked so that WITH_EXCEPT_START
    finds it wherever the version keeps it."""

    models_with_exit = True  # the tracer's handle_exception looks for it

    def __init__(self, exit_fn: VariableTracker) -> None:
        super().__init__(None)
        self.exit_fn = exit_fn

    def describe(self) -> str:
        return "with block __exit__"

    def call(self, tx, args, kwargs):
        return self.exit_fn.call(tx, args, kwargs)

    def reconstruct(self, cg) -> str:
        return self.exit_fn.reconstruct(cg)


def _check_special_method(tx: InstructionTranslatorBase, owner: VariableTracker, name: str) -> None:
    """A with statement on an object whose type lacks ``name`` fails natively: AttributeError up
    to 3.11, TypeError ("does not support the context manager protocol") after; let it."""
    if not hasattr(owner.python_type(), name):
        raise tx.unsupported(f"{owner.describe()} has no {name}: the with statement fails natively")


def _enter(tx: InstructionTranslatorBase):
    manager = tx.pop()
    _check_special_method(tx, manager, "__enter__")
    _check_special_method(tx, manager, "__exit__")
    exit_fn = _ExitFunction(manager.getattr(tx, "__exit__"))
    entered = manager.getattr(tx, "__enter__").call(tx, [], {})
    return exit_fn, entered


@handler("WITH_EXCEPT_START")
def with_except_start(tx: InstructionTranslatorBase, inst: Instruction):
    exit_fn = next((v for v in reversed(tx.stack) if isinstance(v, _ExitFunction)), None)
    exc = next((v for v in reversed(tx.stack[-3:]) if isinstance(v, ExceptionVariable)), None)
    if exit_fn is None or exc is None:
        raise tx.unsupported("with block left by an exception in an unexpected stack layout")
    none = ConstantVariable(None)
    tx.push(exit_fn.call(tx, [ConstantVariable(exc.python_type()), exc, none], {}))


def _exception_matches(tx: InstructionTranslatorBase, exc_var, classes_var) -> bool:
    if not classes_var.is_python_constant():
        raise tx.unsupported(f"except clause with {classes_var.describe()}")
    classes = classes_var.as_python_constant()
    return isinstance_of_type(exc_var.python_type(), classes)


def _reraise(tx: InstructionTranslatorBase, exc_var):
    if not isinstance(exc_var, ExceptionVariable):
        raise tx.unsupported(f"re-raise of {exc_var.describe()}")
    tx.raise_python_exception(exc_var.exc)


# -- block stack (3.8-3.10) ---------------------------------------------------

@handler("SETUP_FINALLY", stack_effect_exempt=True)
def setup_finally(tx: InstructionTranslatorBase, inst: Instruction):
    tx.block_stack.append(("finally", inst.target, len(tx.stack)))


@handler("SETUP_WITH", stack_effect_exempt=True)
def setup_with(tx: InstructionTranslatorBase, inst: Instruction):
    exit_fn, entered = _enter(tx)
    tx.push(exit_fn)
    tx.block_stack.append(("with", inst.target, len(tx.stack)))
    tx.push(entered)


@handler("POP_BLOCK")
def pop_block(tx: InstructionTranslatorBase, inst: Instruction):
    tx.block_stack.pop()


@handler("BEGIN_FINALLY", stack_effect_exempt=True)
def begin_finally(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(NULL)  # "no exception": END_FINALLY pops it and falls through


class _ReturnAddress(ConstantVariable):
    """3.8's CALL_FINALLY pushes where to continue after the finally block."""


@handler("CALL_FINALLY", stack_effect_exempt=True)
def call_finally(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(_ReturnAddress(tx.ip))
    tx.jump_to(inst.target)


@handler("END_FINALLY", stack_effect_exempt=True)
def end_finally(tx: InstructionTranslatorBase, inst: Instruction):
    top = tx.pop()
    if top is NULL or (top.is_python_constant() and top.as_python_constant() is None):
        return
    if isinstance(top, _ReturnAddress):
        tx.ip = top.value
        return
    if top.is_python_constant() and isinstance(top.as_python_constant(), type):
        value = tx.pop()
        tx.pop()  # traceback
        _reraise(tx, value)
    raise tx.unsupported("finally block left by return, break or continue (not traced yet)")


@handler("POP_FINALLY", stack_effect_exempt=True)
def pop_finally(tx: InstructionTranslatorBase, inst: Instruction):
    """3.8: ``return``/``break``/``continue`` leaving a finally or with block
    drops the block's marker: NULL ("no exception") or a CALL_FINALLY return
    address; with arg 1 the value to return sits above it and stays."""
    kept = tx.pop() if inst.arg else None
    marker = tx.pop()
    if marker is not NULL and not isinstance(marker, _ReturnAddress):
        raise tx.unsupported("finally block left by return, break or continue while an exception "
                             "is handled (not traced yet)")
    if inst.arg:
        tx.push(kept)


@handler("WITH_CLEANUP_START", stack_effect_exempt=True)
def with_cleanup_start(tx: InstructionTranslatorBase, inst: Instruction):
    top = tx.pop()
    if top is not NULL:
        raise tx.unsupported("with block left by an exception (not traced yet)")
    exit_fn = tx.pop()
    none = ConstantVariable(None)
    result = exit_fn.call(tx, [none, none, none], {})
    tx.push(NULL)
    tx.push(result)


@handler("WITH_CLEANUP_FINISH", stack_effect_exempt=True)
def with_cleanup_finish(tx: InstructionTranslatorBase, inst: Instruction):
    tx.pop()


@handler("JUMP_IF_NOT_EXC_MATCH")
def jump_if_not_exc_match(tx: InstructionTranslatorBase, inst: Instruction):
    classes = tx.pop()
    exc_type = tx.pop()
    if not isinstance_of_type(exc_type.as_python_constant(), classes.as_python_constant()):
        tx.jump_to(inst.target)


# -- 3.11+ handlers -------------------------------------------------------------

@handler("BEFORE_WITH")
def before_with(tx: InstructionTranslatorBase, inst: Instruction):
    exit_fn, entered = _enter(tx)
    tx.push(exit_fn)
    tx.push(entered)


@handler("LOAD_SPECIAL")
def load_special(tx: InstructionTranslatorBase, inst: Instruction):
    # 3.14: ``with`` looks up __exit__ / __enter__ as a (bound method, NULL) pair; the
    # __exit__ is marked so that WITH_EXCEPT_START finds it.
    name = tx.table.fact("special_methods")[inst.arg]
    owner = tx.pop()
    _check_special_method(tx, owner, name)
    method = owner.getattr(tx, name)
    tx.push(_ExitFunction(method) if name in ("__exit__", "__aexit__") else method)
    tx.push(NULL)


@handler("PUSH_EXC_INFO")
def push_exc_info(tx: InstructionTranslatorBase, inst: Instruction):
    value = tx.pop()
    tx.push(tx.exc_info[-1] if tx.exc_info else ConstantVariable(None))
    tx.push(value)
    tx.exc_info.append(value)


@handler("CHECK_EXC_MATCH")
def check_exc_match(tx: InstructionTranslatorBase, inst: Instruction):
    classes = tx.pop()
    tx.push(ConstantVariable(_exception_matches(tx, tx.peek(), classes)))


# -- both -----------------------------------------------------------------------

@handler("POP_EXCEPT", stack_effect_exempt=True)
def pop_except(tx: InstructionTranslatorBase, inst: Instruction):
    if tx.table.fact("exception_table"):
        tx.pop()  # the previous exception, restored
    else:
        kind, _target, _depth = tx.block_stack.pop()
        if kind != "except_handler":
            raise tx.unsupported("POP_EXCEPT outside an exception handler")
        tx.popn(3)  # the previous exception's (traceback, value, type)
    if tx.exc_info:
        tx.exc_info.pop()


@handler("RERAISE", stack_effect_exempt=True)
def reraise(tx: InstructionTranslatorBase, inst: Instruction):
    if tx.table.fact("exception_table"):
        value = tx.pop()
    else:
        tx.pop()  # type
        value = tx.pop()
        tx.pop()  # traceback
    _reraise(tx, value)


@handler("RAISE_VARARGS")
def raise_varargs(tx: InstructionTranslatorBase, inst: Instruction):
    if inst.argval == 0:
        if not tx.exc_info:
            raise tx.unsupported("bare raise outside an exception handler")
        _reraise(tx, tx.exc_info[-1])
    if inst.argval == 2:
        tx.pop()  # the cause: __cause__ is not modelled, but the raise is
    value = tx.pop()
    if isinstance(value, BuiltinVariable) and isinstance(value.fn, type) and issubclass(value.fn, BaseException):
        value = ExceptionVariable.create(tx, value.fn, [])
    if not isinstance(value, ExceptionVariable):
        raise tx.unsupported(f"raise of {value.describe()}")
    tx.raise_python_exception(value.exc)
