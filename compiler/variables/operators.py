"""Python operators over trackers: arrays go into the graph, constants are
evaluated at trace time, containers follow their own rules.

Operator names are those of the ``operator`` module and of
``ops.lookup_operator`` ("add", "sub", "matmul", "lt", "neg", ...).
"""
from __future__ import annotations

import operator
from typing import Callable, Dict, List, Optional

from .. import config
from ..exc import Unsupported
from ..ops import lookup_operator
from .array import ArrayVariable, call_op
from .base import FixedObjectVariable, Translator, VariableTracker
from .constant import ConstantVariable
from .containers import BaseListVariable, DictVariable, ListVariable, SetVariable, TupleVariable
from .scalars import DynamicScalarVariable, python_arithmetic
from .sizes import size_arithmetic

BINARY: Dict[str, Callable] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow,
    "matmul": operator.matmul, "and_": operator.and_, "or_": operator.or_, "xor": operator.xor,
    "lshift": operator.lshift, "rshift": operator.rshift,
}
COMPARE: Dict[str, Callable] = {
    "lt": operator.lt, "le": operator.le, "eq": operator.eq, "ne": operator.ne,
    "gt": operator.gt, "ge": operator.ge,
}
UNARY: Dict[str, Callable] = {
    "neg": operator.neg, "pos": operator.pos, "invert": operator.invert, "abs": operator.abs,
}
# Source symbols (as dis prints them and the tables' facts list them) -> operator names.
SYMBOLS: Dict[str, str] = {
    "+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod",
    "**": "pow", "@": "matmul", "&": "and_", "|": "or_", "^": "xor", "<<": "lshift",
    ">>": "rshift", "<": "lt", "<=": "le", "==": "eq", "!=": "ne", ">": "gt", ">=": "ge",
}


# In-place set operators as the set methods that do them.
_SET_INPLACE = {"and_": "intersection_update", "or_": "update", "sub": "difference_update",
                "xor": "symmetric_difference_update"}


def _is_array(var: VariableTracker) -> bool:
    return isinstance(var, ArrayVariable)


def _python_numbers(name: str, operands: List[VariableTracker]) -> Optional[VariableTracker]:
    """Sizes and dynamic scalars kept symbolic through Python arithmetic (None: not such)."""
    computed = size_arithmetic(name, operands)
    return computed if computed is not None else python_arithmetic(name, operands)


def binary_op(tx: Translator, name: str, a: VariableTracker, b: VariableTracker,
              inplace: bool = False) -> VariableTracker:
    """``a <op> b`` (or ``a <op>= b``)."""
    if isinstance(a, ArrayVariable) or isinstance(b, ArrayVariable):
        result = call_op(tx, lookup_operator(name), [a, b], {})
        if inplace and isinstance(a, ArrayVariable) and a.meta.kind == "array":
            # NumPy's in-place operator writes into a's buffer: every alias sees it.
            a.check_inplace(tx, f"in-place operator {name}=")
            a.rebind(tx, result, f"in-place operator {name}=")  # type: ignore[arg-type]
            return a
        return result
    computed = _python_numbers(name, [a, b])  # (ints and floats: in place is the same)
    if computed is not None:
        return computed
    if name == "mod" and a.is_python_constant() and isinstance(a.as_python_constant(), (str, bytes)) \
            and isinstance(b, DictVariable) and b.python_type() is dict \
            and all(v.is_python_constant() for v in b.items.values()):
        # "%(key)s" % mapping only reads the mapping: formatted from a snapshot of it.
        snapshot = {k: v.as_python_constant() for k, v in b.items.items()}
        value = tx.run_constant(operator.mod, [a.as_python_constant(), snapshot], {})
        return tx.output.wrap_constant_result(value, [a])
    if a.is_python_constant() and b.is_python_constant():
        fn = BINARY.get(name) or COMPARE.get(name)
        if inplace:
            fn = getattr(operator, "i" + name.rstrip("_")) if name != "and_" and name != "or_" else (
                operator.iand if name == "and_" else operator.ior)
        return _constant_result(tx, fn, a, b)
    return _container_binary_op(tx, name, a, b, inplace)


def _constant_result(tx: Translator, fn: Callable, *operands: VariableTracker) -> VariableTracker:
    constants = [v.as_python_constant() for v in operands]
    value = tx.run_constant(fn, constants, {})
    for var, constant in zip(operands, constants):
        if value is constant and hasattr(var, "items"):
            # The operation handed back a container operand itself (``t + ()``, ``t * 1``): its
            # tracker, so the entry hands on the caller's object (a tuple tracker's constant
            # is rebuilt from its items).
            return var
    return tx.output.wrap_constant_result(value, operands)


def _container_binary_op(tx: Translator, name, a, b, inplace) -> VariableTracker:
    if name == "add" and isinstance(a, BaseListVariable) and isinstance(b, BaseListVariable):
        if a.python_type() is list and b.python_type() is list:
            if inplace:
                a.call_method(tx, "extend", [b], {})
                return a
            return ListVariable(a.items + b.items)
        if isinstance(a, TupleVariable) and isinstance(b, TupleVariable):
            # CPython's tuple concatenation hands back an exact tuple when the other is empty.
            if not b.items and a.python_type() is tuple:
                return a
            if not a.items and b.python_type() is tuple:
                return b
            return TupleVariable(a.items + b.items)
    if name == "add" and inplace and isinstance(a, ListVariable):
        a.call_method(tx, "extend", [b], {})
        return a
    if name == "mul" and isinstance(a, BaseListVariable) and b.is_python_constant() \
            and isinstance(b.as_python_constant(), int) \
            and len(a.items) * b.as_python_constant() > config.max_container_items:
        raise Unsupported(f"repeating a sequence of {len(a.items)} items {b.as_python_constant()} times (above "
                          f"compiler.config.max_container_items = {config.max_container_items})")
    if name == "mul" and inplace and isinstance(a, ListVariable) and a.python_type() is list:
        return a.inplace_repeat(tx, b)  # list *= n changes the list itself
    if name == "mul" and isinstance(a, TupleVariable) and a.python_type() is tuple and b.is_python_constant() \
            and isinstance(b.as_python_constant(), int) and (b.as_python_constant() == 1 or not a.items):
        return a  # CPython's tuple repeat hands back an exact tuple repeated once (or empty)
    if name == "mul" and isinstance(a, BaseListVariable) and a.python_type() in (list, tuple) \
            and b.is_python_constant():
        items = tx.run_constant(operator.mul, [a.items, b.as_python_constant()], {})
        return ListVariable(items) if a.python_type() is list else TupleVariable(items)
    if name == "mul" and isinstance(b, BaseListVariable) and a.is_python_constant():
        return _container_binary_op(tx, name, b, a, False)
    if isinstance(a, SetVariable) and isinstance(b, SetVariable) and name in ("and_", "or_", "sub", "xor") \
            and a.python_type() is set and b.python_type() is set:
        if inplace:  # s |= t changes s itself
            a.call_method(tx, _SET_INPLACE[name], [b], {})
            return a
        return SetVariable(BINARY[name](set(a.values), set(b.values)), set)
    if name == "or_" and isinstance(a, DictVariable) and isinstance(b, DictVariable) \
            and a.python_type() is dict and b.python_type() is dict and hasattr(dict, "__or__"):
        # (dict | dict exists where the running CPython has it: PEP 584, 3.9)
        if inplace:  # d |= e updates d itself
            a.call_method(tx, "update", [b], {})
            return a
        return DictVariable({**a.items, **b.items}, cls=dict)
    if name in COMPARE and name in ("eq", "ne"):
        if isinstance(a, BaseListVariable) and isinstance(b, BaseListVariable) and \
                a.is_python_constant() and b.is_python_constant():
            return ConstantVariable(COMPARE[name](a.as_python_constant(), b.as_python_constant()))
    if name in COMPARE and isinstance(a, TupleVariable) and isinstance(b, TupleVariable) \
            and a.is_python_constant() and b.is_python_constant():
        return ConstantVariable(COMPARE[name](a.as_python_constant(), b.as_python_constant()))
    raise Unsupported(f"operator {name} between {a.describe()} and {b.describe()}")


def unary_op(tx: Translator, name: str, a: VariableTracker) -> VariableTracker:
    if isinstance(a, ArrayVariable):
        return call_op(tx, lookup_operator(name), [a], {})
    computed = _python_numbers(name, [a])
    if computed is not None:
        return computed
    if a.is_python_constant():
        return _constant_result(tx, UNARY[name], a)
    raise Unsupported(f"unary operator {name} on {a.describe()}")


def compare_op(tx: Translator, name: str, a: VariableTracker, b: VariableTracker) -> VariableTracker:
    return binary_op(tx, name, a, b)


def is_op(tx: Translator, a: VariableTracker, b: VariableTracker) -> bool:
    """``a is b`` for trackers, decided at trace time."""
    if a is b:
        return True
    if isinstance(a, FixedObjectVariable) and isinstance(b, FixedObjectVariable):
        return a.fixed_object() is b.fixed_object()  # 3.14: `all` is LOAD_COMMON_CONSTANT's all
    if _singleton_against_number(a, b) or _singleton_against_number(b, a):
        return False  # (``n is None`` for a dynamic int: its value is not needed)
    if a.is_python_constant() and b.is_python_constant():
        va, vb = a.as_python_constant(), b.as_python_constant()
        if va is None or vb is None or isinstance(va, (bool, type)) or isinstance(vb, (bool, type)) \
                or va is Ellipsis or vb is Ellipsis:
            return va is vb
    if _is_array(a) and b.is_python_constant() or _is_array(b) and a.is_python_constant():
        return False
    if a.source is not None and b.source is not None and a.source == b.source:
        return True
    try:
        ta, tb = a.python_type(), b.python_type()
    except Unsupported:
        ta = tb = None
    if ta is not None and ta is not tb:
        return False
    raise Unsupported(f"`is` between {a.describe()} and {b.describe()}")


def _singleton_against_number(a: VariableTracker, b: VariableTracker) -> bool:
    """``a`` is None, a bool, Ellipsis or a class and ``b`` a dynamic int or float (exactly
    one of those types, by its guard): never the same object, whatever b's value."""
    if not isinstance(b, DynamicScalarVariable) or type(a) is not ConstantVariable:
        return False
    value = a.value
    return value is None or value is Ellipsis or isinstance(value, (bool, type))


def contains_op(tx: Translator, item: VariableTracker, container: VariableTracker) -> bool:
    if hasattr(container, "contains"):
        return container.contains(tx, item)  # type: ignore[attr-defined]
    if container.is_python_constant() and item.is_python_constant():
        return tx.run_constant(operator.contains, [container.as_python_constant(), item.as_python_constant()], {})
    raise Unsupported(f"`in` test on {container.describe()}")
