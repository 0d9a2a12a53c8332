"""try/except/finally and with blocks whose bodies do not raise.

On 3.8-3.10 the block stack is tracked (SETUP_FINALLY / SETUP_WITH push a
block, POP_BLOCK pops it); on 3.11+ exception handling is zero-cost, so the
normal path needs nothing.  An exception raised inside a protected region is
not traced yet: the tracer reports it (the frame runs natively).
"""
from __future__ import annotations

from . import handler
from ..variables.constant import ConstantVariable


def _enter(tx):
    manager = tx.pop()
    exit_fn = manager.getattr(tx, "__exit__")
    entered = manager.getattr(tx, "__enter__").call(tx, [], {})
    return exit_fn, entered


@handler("SETUP_FINALLY", "SETUP_ASYNC_WITH", stack_effect_exempt=True)
def setup_finally(tx, inst):
    if inst.opname == "SETUP_ASYNC_WITH":
        raise tx.unsupported("async with")
    tx.block_stack.append(("finally", inst.target, len(tx.stack)))


@handler("SETUP_WITH", stack_effect_exempt=True)
def setup_with(tx, inst):
    exit_fn, entered = _enter(tx)
    tx.push(exit_fn)
    tx.block_stack.append(("with", inst.target, len(tx.stack)))
    tx.push(entered)


@handler("BEFORE_WITH")
def before_with(tx, inst):
    exit_fn, entered = _enter(tx)
    tx.push(exit_fn)
    tx.push(entered)


@handler("POP_BLOCK")
def pop_block(tx, inst):
    tx.block_stack.pop()


@handler("BEGIN_FINALLY", stack_effect_exempt=True)
def begin_finally(tx, inst):
    from ..tracer import NULL
    tx.push(NULL)  # "no exception": END_FINALLY pops it and falls through


@handler("END_FINALLY", stack_effect_exempt=True)
def end_finally(tx, inst):
    from ..tracer import NULL
    top = tx.pop()
    if top is not NULL and not (top.is_python_constant() and top.as_python_constant() is None):
        raise tx.unsupported("finally block left by an exception or a jump (not traced yet)")


@handler("WITH_CLEANUP_START", stack_effect_exempt=True)
def with_cleanup_start(tx, inst):
    from ..tracer import NULL
    top = tx.pop()
    if top is not NULL:
        raise tx.unsupported("with block left by an exception (not traced yet)")
    exit_fn = tx.pop()
    none = ConstantVariable(None)
    result = exit_fn.call(tx, [none, none, none], {})
    tx.push(NULL)
    tx.push(result)


@handler("WITH_CLEANUP_FINISH", stack_effect_exempt=True)
def with_cleanup_finish(tx, inst):
    tx.pop()


@handler("RAISE_VARARGS")
def raise_varargs(tx, inst):
    from ..variables.builtins import BuiltinVariable, ExceptionVariable
    if inst.argval == 0:
        raise tx.unsupported("bare raise (re-raise) outside a traced handler")
    if inst.argval == 2:
        tx.pop()  # the cause
    value = tx.pop()
    if isinstance(value, ExceptionVariable):
        exc = value.make()
    elif isinstance(value, BuiltinVariable) and isinstance(value.fn, type) and issubclass(value.fn, BaseException):
        exc = value.fn()
    else:
        raise tx.unsupported(f"raise of {value.describe()}")
    tx.raise_python_exception(exc)
