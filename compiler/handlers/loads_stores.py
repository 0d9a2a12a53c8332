"""Locals, globals, closure cells, constants and attributes."""
from __future__ import annotations

from opcode_tables.instruction import Instruction

from ..exc import Unsupported
from ..tracer import InstructionTranslatorBase
from ..variables.base import NULL, SavedCellVariable
from ..variables.builder import wrap_constant_result
from ..variables.builtins import BuiltinVariable
from ..variables.constant import ConstantVariable
from ..variables.lazy import LazyArgument
from ..variables.user_objects import SuperVariable, native_method
from .registry import handler


def push_with_null(tx: InstructionTranslatorBase, value) -> None:
    """Push a callable plus the NULL the version's call sequence expects beside it."""
    layout = tx.table.fact("call_null_layout")
    if layout == "null_first":
        tx.push(NULL)
        tx.push(value)
    elif layout == "callable_first":
        tx.push(value)
        tx.push(NULL)
    else:  # LOAD_METHOD before 3.11: [NULL, bound callable] tells CALL_METHOD "no self"
        tx.push(NULL)
        tx.push(value)


@handler("LOAD_CONST")
def load_const(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(wrap_constant_result(inst.argval) if not isinstance(inst.argval, type(load_const.__code__))
            else ConstantVariable(inst.argval))


@handler("LOAD_SMALL_INT")
def load_small_int(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(ConstantVariable(inst.argval))


@handler("LOAD_COMMON_CONSTANT")
def load_common_constant(tx: InstructionTranslatorBase, inst: Instruction):
    # The interpreter's own object (never the module's global of the same name): no guard.
    value = tx.table.fact("common_constants")[inst.arg]
    tx.push(BuiltinVariable(value) if callable(value) else wrap_constant_result(value))


@handler("RETURN_CONST")
def return_const(tx: InstructionTranslatorBase, inst: Instruction):
    tx.do_return(wrap_constant_result(inst.argval))


@handler("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW")
def load_fast(tx: InstructionTranslatorBase, inst: Instruction):
    name = inst.argval
    if name not in tx.locals and name in tx.cells:
        # A cell variable's slot holds the cell (3.13 builds closures with LOAD_FAST, not LOAD_CLOSURE).
        tx.push(tx.cells[name])
        return
    if name not in tx.locals:
        tx.raise_python_exception(UnboundLocalError(
            f"local variable {name!r} referenced before assignment"))
    tx.push(tx.locals[name])


@handler("LOAD_FAST_AND_CLEAR")
def load_fast_and_clear(tx: InstructionTranslatorBase, inst: Instruction):
    # 3.12 inlined comprehensions save a shadowed name (NULL when unbound) and clear it; the
    # slot of a cell (not in locals: tx.cells holds it) holds the cell, which is what is saved.
    name = inst.argval
    if name not in tx.locals and name in tx.cells:
        tx.push(SavedCellVariable(name))
        return
    tx.push(tx.locals.pop(name, NULL))


def _let_go(tx: InstructionTranslatorBase, name: str) -> None:
    """The local ``name`` is about to stop holding its value (OutputGraph.note_dropped_local):
    told what else still holds it -- every frame's locals and stack, and the items of the
    tuples and lists among those (a sequence the frame keeps holds its items)."""
    old = tx.locals.get(name)
    if old is None or old is NULL:
        return

    def still_held() -> list:
        held = [v for n, v in tx.locals.items() if n != name] + list(tx.stack)
        frame = getattr(tx, "parent", None)
        while frame is not None:
            held += list(frame.locals.values()) + list(frame.stack)
            frame = getattr(frame, "parent", None)
        for value in list(held):
            items = getattr(value, "items", None)
            if type(items) is list:
                held += items
        return held

    tx.output.note_dropped_local(old, still_held)


@handler("STORE_FAST")
def store_fast(tx: InstructionTranslatorBase, inst: Instruction):
    value = tx.peek_raw() if tx.stack else None
    if value is not tx.locals.get(inst.argval):
        _let_go(tx, inst.argval)
    value = tx.pop_raw()   # a lazy argument stays lazy (compiler.variables.lazy)
    if value is NULL or isinstance(value, SavedCellVariable):
        # (a saved cell put back: the slot holds the cell again, which tx.cells models)
        tx.locals.pop(inst.argval, None)
    else:
        tx.locals[inst.argval] = value


@handler("DELETE_FAST")
def delete_fast(tx: InstructionTranslatorBase, inst: Instruction):
    if inst.argval not in tx.locals:
        tx.raise_python_exception(UnboundLocalError(f"local variable {inst.argval!r} referenced before assignment"))
    _let_go(tx, inst.argval)
    del tx.locals[inst.argval]


@handler("LOAD_GLOBAL")
def load_global(tx: InstructionTranslatorBase, inst: Instruction):
    value = tx.load_global(inst.argval)
    if inst.push_null:
        if tx.table.fact("call_null_layout") == "callable_first":
            tx.push(value)
            tx.push(NULL)
        else:
            tx.push(NULL)
            tx.push(value)
    else:
        tx.push(value)


@handler("STORE_GLOBAL")
def store_global(tx: InstructionTranslatorBase, inst: Instruction):
    tx.store_global(inst.argval, tx.pop())


@handler("DELETE_GLOBAL")
def delete_global(tx: InstructionTranslatorBase, inst: Instruction):
    tx.store_global(inst.argval, None)


# Namespace opcodes (LOAD_NAME, IMPORT_NAME, LOAD_BUILD_CLASS, ...) have no
# handler: their table rows declare them unsupported with the reason, which
# the translator's dispatch reports.


# -- closure cells ----------------------------------------------------------

@handler("MAKE_CELL")
def make_cell(tx: InstructionTranslatorBase, inst: Instruction):
    name = inst.argval
    cell = tx.cell_for(name)
    if name in tx.locals and cell.contents is None:
        cell.contents = tx.locals.pop(name)


@handler("COPY_FREE_VARS")
def copy_free_vars(tx: InstructionTranslatorBase, inst: Instruction):
    pass  # free variables' cells are set up when the translator starts


@handler("LOAD_DEREF")
def load_deref(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(tx.cell_for(inst.argval).load(tx))


@handler("STORE_DEREF")
def store_deref(tx: InstructionTranslatorBase, inst: Instruction):
    tx.cell_for(inst.argval).store(tx, tx.pop())


@handler("DELETE_DEREF")
def delete_deref(tx: InstructionTranslatorBase, inst: Instruction):
    cell = tx.cell_for(inst.argval)
    if cell.external:
        raise tx.unsupported(f"del of closure variable {inst.argval!r}")
    cell.contents = None


@handler("LOAD_CLOSURE")
def load_closure(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(tx.cell_for(inst.argval))


# -- attributes -------------------------------------------------------------

def _method(tx: InstructionTranslatorBase, obj, name: str):
    """A method load: where the tracer cannot model the method, a C method of an outside
    object is still loaded (the graph breaks at its call, not here).  A lazy argument lends a
    container's C method without being realized (compiler.variables.lazy)."""
    if isinstance(obj, LazyArgument):
        method = obj.native_method(tx, name)
        if method is not None:
            return method
        obj = obj.realize(tx)
    try:
        return obj.getattr(tx, name)
    except Unsupported:
        method = native_method(obj, name)
        if method is None:
            raise
        return method


@handler("LOAD_ATTR")
def load_attr(tx: InstructionTranslatorBase, inst: Instruction):
    obj = tx.pop_raw()
    if inst.is_method:
        push_with_null(tx, _method(tx, obj, inst.argval))
    else:
        # A C method loaded as an attribute (up to 3.10 a call with keywords loads it so) is
        # still a method load.
        tx.push(_method(tx, obj, inst.argval))


@handler("LOAD_METHOD")
def load_method(tx: InstructionTranslatorBase, inst: Instruction):
    obj = tx.pop_raw()
    push_with_null(tx, _method(tx, obj, inst.argval))


@handler("STORE_ATTR")
def store_attr(tx: InstructionTranslatorBase, inst: Instruction):
    obj = tx.pop()
    value = tx.pop()
    setter = getattr(obj, "setattr", None)
    if setter is None:
        raise tx.unsupported(f"attribute store .{inst.argval} on {obj.describe()} (a side effect; "
                             "needs replay, issue 4)")
    setter(tx, inst.argval, value)


@handler("DELETE_ATTR")
def delete_attr(tx: InstructionTranslatorBase, inst: Instruction):
    obj = tx.pop()
    deleter = getattr(obj, "delattr", None)
    if deleter is None:
        raise tx.unsupported(f"attribute delete .{inst.argval} on {obj.describe()} (a side effect)")
    deleter(tx, inst.argval)


@handler("LOAD_ASSERTION_ERROR")
def load_assertion_error(tx: InstructionTranslatorBase, inst: Instruction):
    tx.push(BuiltinVariable(AssertionError))


@handler("LOAD_SUPER_ATTR")
def load_super_attr(tx: InstructionTranslatorBase, inst: Instruction):
    obj = tx.pop()
    cls_var = tx.pop()
    tx.pop()  # the global super
    value = SuperVariable(cls_var, obj).getattr(tx, inst.argval)
    if inst.is_method:
        push_with_null(tx, value)
    else:
        tx.push(value)
