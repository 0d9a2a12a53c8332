"""Builtins, the ``operator`` module and ``math``: evaluated at trace time on
constants, mapped onto graph ops or tracker operations otherwise."""
from __future__ import annotations

import abc
import builtins
import collections
import functools
import inspect
import math
import operator
import weakref
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import trace_rules
from ..exc import Unsupported
from ..sources import TypeSource
from .array import ArrayVariable
from .base import FixedObjectVariable, Translator, VariableTracker, all_constant, constants_of
from .constant import ConstantVariable, wrap_static_attr
from .containers import (DictVariable, ListVariable, SetVariable, SliceVariable, TupleVariable, _const_key,
                         sort_trackers)
from .iterators import (EnumerateIterator, FilterIterator, IteratorVariable, MapIterator, ZipIterator, iter_of,
                        reversed_of)
from .functions import BaseUserFunctionVariable, BoundMethodVariable, PartialVariable
from .operators import BINARY, COMPARE, UNARY, binary_op, contains_op, is_op, unary_op
from .sizes import SizeVariable
from .user_objects import UserObjectVariable, make_super

_OPERATOR_BINARY = {getattr(operator, n): n for n in BINARY}
_OPERATOR_BINARY.update({getattr(operator, n): n for n in COMPARE})
_OPERATOR_UNARY = {getattr(operator, n): n for n in UNARY}
_OPERATOR_INPLACE = {getattr(operator, "i" + n.rstrip("_")): n for n in BINARY}


class BuiltinVariable(FixedObjectVariable):
    """A builtin function or type, an ``operator`` function or a ``math`` function."""

    def __init__(self, fn: Any, source=None) -> None:
        super().__init__(source)
        self.fn = fn

    @staticmethod
    def handles(fn: Any) -> bool:
        return (fn in _HANDLERS or trace_rules.is_foldable_module_function(fn)
                or fn in trace_rules.FOLDABLE_BUILTINS or fn in _OPERATOR_BINARY
                or fn in _OPERATOR_UNARY)

    def describe(self) -> str:
        return f"builtin {getattr(self.fn, '__name__', self.fn)}"

    def fixed_object(self) -> Any:
        return self.fn

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if isinstance(self.fn, type):
            return wrap_static_attr(tx, self.fn, name, self.source)
        return super().getattr(tx, name)

    def call(self, tx: Translator, args: Sequence[VariableTracker],
             kwargs: Dict[str, VariableTracker]) -> VariableTracker:
        fn = self.fn
        if not _accepts(fn, args, kwargs):
            raise Unsupported(f"{getattr(fn, '__name__', fn)}() called with arguments its signature refuses "
                              "(the native call raises CPython's own TypeError)")
        if any(isinstance(a, SizeVariable) for a in args):
            with tx.output.shape_env.reason(f"{getattr(fn, '__name__', fn)}() of a size"):
                return self._call(tx, fn, args, kwargs)
        return self._call(tx, fn, args, kwargs)

    def _call(self, tx: Translator, fn: Any, args: Sequence[VariableTracker],
              kwargs: Dict[str, VariableTracker]) -> VariableTracker:
        handler = _HANDLERS.get(fn)
        if handler is not None:
            result = handler(tx, list(args), dict(kwargs))
            if result is not None:
                return result
        if fn in _OPERATOR_BINARY and len(args) == 2 and not kwargs:
            return binary_op(tx, _OPERATOR_BINARY[fn], args[0], args[1])
        if fn in _OPERATOR_INPLACE and len(args) == 2 and not kwargs:
            return binary_op(tx, _OPERATOR_INPLACE[fn], args[0], args[1], inplace=True)
        if fn in _OPERATOR_UNARY and len(args) == 1 and not kwargs:
            return unary_op(tx, _OPERATOR_UNARY[fn], args[0])
        if all_constant(args) and all_constant(list(kwargs.values())) and (
                fn in trace_rules.FOLDABLE_BUILTINS or trace_rules.is_foldable_module_function(fn)
                or isinstance(fn, type) and issubclass(fn, BaseException)):
            if isinstance(fn, type) and issubclass(fn, BaseException):
                if kwargs:
                    raise Unsupported(f"{fn.__name__}() with keyword arguments")
                return ExceptionVariable.create(tx, fn, constants_of(args))
            value = tx.run_constant(fn, constants_of(args), {k: v.as_python_constant() for k, v in kwargs.items()})
            return tx.output.wrap_constant_result(value, list(args) + list(kwargs.values()))
        if isinstance(fn, type) and issubclass(fn, BaseException):
            raise Unsupported(f"exception {fn.__name__} with non-constant arguments")
        name = getattr(fn, "__name__", repr(fn))
        if any(_is_array(a) for a in list(args) + list(kwargs.values())):
            raise Unsupported(f"{name}() of an array needs the array's values (data-dependent); "
                              "use the NumPy equivalent")
        raise Unsupported(f"call of builtin {name}() with these arguments")

    def reconstruct(self, cg) -> str:
        if self.source is not None:
            return cg.source_expr(self.source)
        return cg.const(self.fn)


_SIGNATURES: Dict[int, Tuple[Any, Optional[inspect.Signature]]] = {}


def _accepts(fn: Any, args: Sequence[VariableTracker], kwargs: Dict[str, VariableTracker]) -> bool:
    """Whether ``fn``'s signature binds these arguments; True where CPython publishes no
    signature for it (its handler checks what it models)."""
    known = _SIGNATURES.get(id(fn))
    if known is None or known[0] is not fn:
        try:
            signature: Optional[inspect.Signature] = inspect.signature(fn)
        except (TypeError, ValueError):
            signature = None
        known = _SIGNATURES[id(fn)] = (fn, signature)
    if known[1] is None:
        return True
    try:
        known[1].bind(*args, **kwargs)
    except TypeError:
        return False
    return True


class ExceptionVariable(VariableTracker):
    """An exception instance of the traced program (made by it, or caught by it).

    Instances are made at trace time only for classes whose construction runs no user
    code (``__init__``/``__new__`` inherited from the builtin exceptions)."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(None)
        self.exc = exc

    @staticmethod
    def create(tx: Translator, cls: type, args: List[Any]) -> "ExceptionVariable":
        for klass in cls.__mro__:
            if klass.__module__ == "builtins":
                break
            if "__init__" in vars(klass) or "__new__" in vars(klass):
                raise Unsupported(f"exception class {cls.__qualname__} with its own __init__/__new__")
        return ExceptionVariable(tx.run_constant(cls, list(args), {}))

    def describe(self) -> str:
        return f"exception {type(self.exc).__name__}"

    def python_type(self) -> type:
        return type(self.exc)

    def is_python_constant(self) -> bool:
        return True  # immutable as far as the trace goes: str(e), e.args, isinstance

    def as_python_constant(self) -> Any:
        return self.exc

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name in ("args", "__class__") or not name.startswith("_"):
            try:
                return tx.output.wrap_constant_result(getattr(self.exc, name))
            except AttributeError as e:
                tx.raise_python_exception(e)
        return super().getattr(tx, name)

    def reconstruct(self, cg) -> str:
        raise Unsupported("returning an exception object out of the compiled frame")


def _is_array(var: VariableTracker) -> bool:
    return isinstance(var, ArrayVariable)


def _const_or_none(args: Sequence[VariableTracker]):
    return constants_of(args) if all_constant(args) else None


# -- handlers: (tx, args, kwargs) -> tracker, or None to fall through -------

def _len(tx: Translator, args, kwargs):
    if len(args) == 1 and not kwargs:
        if isinstance(args[0], ArrayVariable):
            return args[0].size_of(tx)  # (a dynamic size where the dimension is symbolic)
        return ConstantVariable(args[0].length(tx))


def python_type_of(tx: Translator, var: VariableTracker) -> type:
    if isinstance(var, UserObjectVariable):
        return type(var.value)
    return var.python_type()


def checked_type_of(tx: Translator, var: VariableTracker) -> type:
    """The type ``isinstance(value, C)`` checks: ``type(value)``, where the class lets Python
    read ``value.__class__`` plainly.  CPython also asks ``value.__class__`` (a mock made with
    a spec, a proxy report another class there; a class's own ``__getattribute__`` runs):
    those checks are not folded (unittest.mock in CPython's test_types)."""
    tp = python_type_of(tx, var)
    if tp in _FORWARDING_PROXIES:
        raise Unsupported(f"isinstance() of a {tp.__name__}, whose __class__ is its referent's")
    for klass in tp.__mro__[:-1]:  # object's own __class__ and __getattribute__ are plain
        own = klass.__dict__
        # (A C type lists __getattribute__ when it sets the generic lookup: only a class
        # written in Python says by it that the lookup is its own.)
        if "__class__" in own or ("__getattribute__" in own and klass.__flags__ & _HEAP_TYPE):
            raise Unsupported(f"isinstance() of a {tp.__name__} instance, whose class defines "
                              f"{'__class__' if '__class__' in own else '__getattribute__'}")
    return tp


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement or type()
_FORWARDING_PROXIES = (weakref.ProxyType, weakref.CallableProxyType)


def _isinstance(tx: Translator, args, kwargs):
    if len(args) != 2 or kwargs:
        return None
    classes = args[1]
    if not classes.is_python_constant():
        raise Unsupported(f"isinstance() with {classes.describe()}")
    if args[0].is_python_constant():
        # The real check on the real value (__instancecheck__ may raise, as typing.Any's does).
        return ConstantVariable(tx.run_constant(isinstance, [args[0].as_python_constant(),
                                                             classes.as_python_constant()], {}))
    if not plain_instance_checks(classes.as_python_constant()):
        raise Unsupported(f"isinstance() with a class whose metaclass customises __instancecheck__")
    return ConstantVariable(isinstance_of_type(checked_type_of(tx, args[0]), classes.as_python_constant()))


def plain_instance_checks(classes: Any) -> bool:
    """Whether isinstance(x, classes) is issubclass(type(x), classes): the metaclasses keep
    type's (or ABCMeta's, which checks the type) __instancecheck__."""
    items = classes if isinstance(classes, tuple) else (classes,)
    plain = (type.__instancecheck__, abc.ABCMeta.__instancecheck__)
    return all(isinstance(c, type) and type(c).__instancecheck__ in plain for c in items)


def isinstance_of_type(tp: type, classes: Any) -> bool:
    try:
        return issubclass(tp, classes)
    except TypeError:
        raise Unsupported(f"isinstance() with {classes!r}") from None


def _issubclass(tx: Translator, args, kwargs):
    consts = _const_or_none(args)
    if consts is not None and not kwargs:
        return ConstantVariable(tx.run_constant(issubclass, consts, {}))


def _type(tx: Translator, args, kwargs):
    if len(args) == 1 and not kwargs:
        var = args[0]
        tp = python_type_of(tx, var)
        if var.source is not None and not _is_array(var):
            return tx.output.wrap(tp, TypeSource(var.source))
        return tx.output.wrap(tp, None)


def _range(tx: Translator, args, kwargs):
    consts = _const_or_none(args)
    if consts is None or kwargs:
        raise Unsupported("range() of non-constant bounds")
    return ConstantVariable(tx.run_constant(range, consts, {}))


def _enumerate(tx: Translator, args, kwargs):
    if not 1 <= len(args) + len(kwargs) <= 2 or set(kwargs) - {"iterable", "start"} or len(args) > 2:
        return None  # the real call raises its own TypeError (a graph break runs it)
    iterable = args[0] if args else kwargs.get("iterable")
    start = args[1] if len(args) > 1 else kwargs.get("start", ConstantVariable(0))
    if iterable is None or not start.is_python_constant() or type(start.as_python_constant()) is not int:
        return None
    return EnumerateIterator(iter_of(tx, iterable), start.as_python_constant())


def _zip(tx: Translator, args, kwargs):
    strict = kwargs.pop("strict", ConstantVariable(False))
    if kwargs or not strict.is_python_constant() or strict.as_python_constant() not in (False, True):
        return None
    if strict.as_python_constant() and not _zip_has_strict():
        return None
    return ZipIterator([iter_of(tx, a) for a in args], bool(strict.as_python_constant()))


def _zip_has_strict() -> bool:
    try:
        zip(strict=True)
    except TypeError:
        return False
    return True


def _map(tx: Translator, args, kwargs):
    if kwargs or len(args) < 2:
        return None
    return MapIterator(args[0], [iter_of(tx, a) for a in args[1:]])


def _filter(tx: Translator, args, kwargs):
    if kwargs or len(args) != 2:
        return None
    fn = args[0]
    if fn.is_python_constant() and fn.as_python_constant() is None:
        fn = None
    return FilterIterator(fn, iter_of(tx, args[1]))


def _reversed(tx: Translator, args, kwargs):
    if len(args) == 1 and not kwargs:
        return reversed_of(tx, args[0])


def _iter(tx: Translator, args, kwargs):
    if len(args) == 1 and not kwargs:
        return iter_of(tx, args[0])


def _next(tx: Translator, args, kwargs):
    if 1 <= len(args) <= 2 and not kwargs and isinstance(args[0], IteratorVariable):
        item = args[0].next(tx)
        if item is None:
            if len(args) == 2:
                return args[1]
            tx.raise_python_exception(StopIteration())
        return item


def _list(tx: Translator, args, kwargs):
    if not args and not kwargs:
        return ListVariable([])
    if len(args) == 1 and not kwargs:
        return ListVariable(args[0].unpack(tx))


def _tuple(tx: Translator, args, kwargs):
    if not args and not kwargs:
        return TupleVariable([])
    if len(args) == 1 and not kwargs:
        if type(args[0]) is TupleVariable or (args[0].is_python_constant()
                                              and type(args[0].as_python_constant()) is tuple):
            return args[0]  # tuple(t) is t itself for an exact tuple
        return TupleVariable(args[0].unpack(tx))


def _set_like(cls):
    def handler(tx: Translator, args, kwargs):
        if kwargs or len(args) > 1:
            return None
        items = args[0].unpack(tx) if args else []
        if cls is frozenset:
            # Immutable: the real frozenset (frozenset(fs) is fs itself, as in CPython).
            source = args[0].as_python_constant() if args and args[0].is_python_constant() else \
                [_const_key(v) for v in items]
            return ConstantVariable(tx.run_constant(frozenset, [source] if args else [], {}))
        new = set()
        for v in items:
            new.add(_const_key(v))
        return SetVariable(new, cls)
    return handler


def _dict_like(cls):
    def handler(tx: Translator, args, kwargs):
        factory = None
        if cls is collections.defaultdict:
            if args:
                factory, args = args[0], args[1:]
                if factory.is_python_constant() and factory.as_python_constant() is None:
                    factory = None
        items: Dict[Any, VariableTracker] = {}
        if len(args) > 1:
            return None
        if args:
            source = args[0]
            if isinstance(source, DictVariable):
                items.update(source.items)
            else:
                for pair in source.unpack(tx):
                    key, value = pair.unpack(tx)
                    items[_const_key(key)] = value
        items.update(kwargs)
        return DictVariable(items, cls=cls, default_factory=factory)
    return handler


def _sum(tx: Translator, args, kwargs):
    if not args or len(args) > 2:
        return None
    start = kwargs.pop("start", args[1] if len(args) > 1 else ConstantVariable(0))
    if kwargs:
        return None
    items = args[0].unpack(tx)
    total = start
    if start.is_python_constant():
        # The leading constants are summed by the real sum(): CPython adds exact ints and
        # floats in its own fast paths (floats with compensated summation from 3.12, so
        # sum([0.1] * 10) == 1.0); from the first other value on it adds generically.
        constants = 0
        while constants < len(items) and items[constants].is_python_constant():
            constants += 1
        if constants:
            total = ConstantVariable(tx.run_constant(sum, [constants_of(items[:constants]),
                                                           start.as_python_constant()], {}))
            items = items[constants:]
    for item in items:
        total = binary_op(tx, "add", total, item)
    return total


def _min_max(fn):
    def handler(tx: Translator, args, kwargs):
        if not args:
            return None
        items = args[0].unpack(tx) if len(args) == 1 else list(args)
        if not all_constant(items) or any(not v.is_python_constant() for v in kwargs.values()):
            if any(_is_array(i) for i in items):
                raise Unsupported(f"{fn.__name__}() over arrays compares their values (data-dependent); "
                                  f"use np.{'maximum' if fn is max else 'minimum'} or .{fn.__name__}()")
            raise Unsupported(f"{fn.__name__}() of non-constant values")
        # One iterable argument or several values, as called: CPython checks the combination
        # (e.g. default= with several positional arguments is a TypeError).
        real_args = [constants_of(items)] if len(args) == 1 else constants_of(items)
        value = tx.run_constant(fn, real_args, {k: v.as_python_constant() for k, v in kwargs.items()})
        return tx.output.wrap_constant_result(value, list(items) + list(kwargs.values()))
    return handler


def _abs(tx: Translator, args, kwargs):
    if len(args) == 1 and not kwargs:
        return unary_op(tx, "abs", args[0])


def _pow(tx: Translator, args, kwargs):
    if len(args) == 2 and not kwargs:
        return binary_op(tx, "pow", args[0], args[1])


def _bool(tx: Translator, args, kwargs):
    if kwargs:
        return None  # bool() takes no keyword arguments: the constant fold raises CPython's error
    if not args:
        return ConstantVariable(False)
    if len(args) == 1 and not kwargs:
        return ConstantVariable(args[0].truth(tx))


def _all_any(fn):
    def handler(tx: Translator, args, kwargs):
        if len(args) != 1 or kwargs:
            return None
        truths = (item.truth(tx) for item in args[0].unpack(tx))
        return ConstantVariable(fn(truths))
    return handler


def _getattr(tx: Translator, args, kwargs):
    if 2 <= len(args) <= 3 and not kwargs and args[1].is_python_constant():
        name = args[1].as_python_constant()
        if len(args) == 3:
            try:
                return tx.speculate_getattr(args[0], name)
            except AttributeError:
                return args[2]
        return args[0].getattr(tx, name)


def _hasattr(tx: Translator, args, kwargs):
    if len(args) == 2 and not kwargs and args[1].is_python_constant():
        try:
            tx.speculate_getattr(args[0], args[1].as_python_constant())
            return ConstantVariable(True)
        except AttributeError:
            return ConstantVariable(False)


def _slice(tx: Translator, args, kwargs):
    if not kwargs and 1 <= len(args) <= 3 and all_constant(args):
        # The real object: slice(...) called twice is two objects, copied it is itself.
        return ConstantVariable(tx.run_constant(slice, constants_of(args), {}))
    if not kwargs and 1 <= len(args) <= 3:
        parts = list(args) if len(args) > 1 else [ConstantVariable(None), args[0]]
        return SliceVariable(parts)


def _partial(tx: Translator, args, kwargs):
    if args:
        func = args[0]
        if isinstance(func, PartialVariable):
            if func.source is not None:
                return None  # CPython flattens it only without an instance __dict__: the real call decides
            # CPython flattens partial(partial(f, a), b) into partial(f, a, b).
            return PartialVariable(func.func, func.args + list(args[1:]), {**func.kwargs, **kwargs})
        if not func.is_python_constant() and not isinstance(func, (BaseUserFunctionVariable, BoundMethodVariable,
                                                                   BuiltinVariable)):
            return None  # the real partial checks callability (and flattens what it can see)
        if func.is_python_constant():
            # The real constructor's check, raised here inside the program's own try blocks
            # (not later, when the entry rebuilds the partial): partial(2) is a TypeError.
            tx.run_constant(functools.partial, [func.as_python_constant()], {})
        return PartialVariable(func, list(args[1:]), dict(kwargs))


def _print(tx: Translator, args, kwargs):
    """print() writes to sys.stdout, which other code may see at any moment (a logging
    handler, a tee): it runs natively, in program order, at a graph break."""
    raise Unsupported("print() writes to sys.stdout (I/O)")


def _callable(tx: Translator, args, kwargs):
    if len(args) == 1 and not kwargs:
        var = args[0]
        if var.is_python_constant():
            return ConstantVariable(callable(var.as_python_constant()))
        # callable(x) is whether x's type defines __call__ (asked of the type, as CPython does).
        tp = python_type_of(tx, var)
        return ConstantVariable(any("__call__" in vars(k) for k in tp.__mro__))


def _scalar_conversion(fn):
    def handler(tx: Translator, args, kwargs):
        if len(args) == 1 and _is_array(args[0]):
            raise Unsupported(f"{fn.__name__}() of an array reads its value (data-dependent)")
        return None
    return handler


def _contains(tx: Translator, args, kwargs):
    if len(args) == 2 and not kwargs:
        return ConstantVariable(contains_op(tx, args[1], args[0]))


def _is(tx: Translator, args, kwargs):
    if len(args) == 2 and not kwargs:
        return ConstantVariable(is_op(tx, args[0], args[1]))


def _is_not(tx: Translator, args, kwargs):
    if len(args) == 2 and not kwargs:
        return ConstantVariable(not is_op(tx, args[0], args[1]))


def _not(tx: Translator, args, kwargs):
    if len(args) == 1 and not kwargs:
        return ConstantVariable(not args[0].truth(tx))


def _getitem(tx: Translator, args, kwargs):
    if len(args) == 2 and not kwargs:
        return args[0].getitem(tx, args[1])


def _super(tx: Translator, args):
    return make_super(tx, args)


def _sorted(tx: Translator, args, kwargs):
    if len(args) != 1:
        return None
    items = args[0].unpack(tx)
    if not all_constant(items) or not all_constant(list(kwargs.values())):
        raise Unsupported("sorted() of non-constant values (or with a traced key function)")
    items = list(items)
    sort_trackers(tx, items, kwargs)
    return ListVariable(items)


def _reduce(tx: Translator, args, kwargs):
    if kwargs or not 2 <= len(args) <= 3:
        return None
    fn, items = args[0], args[1].unpack(tx)
    if len(args) == 3:
        acc = args[2]
    elif items:
        acc, items = items[0], items[1:]
    else:
        tx.raise_python_exception(TypeError("reduce() of empty iterable with no initial value"))
    for item in items:
        acc = fn.call(tx, [acc, item], {})
    return acc


_HANDLERS: Dict[Any, Callable] = {
    len: _len, isinstance: _isinstance, issubclass: _issubclass, type: _type, range: _range,
    enumerate: _enumerate, zip: _zip, map: _map, filter: _filter, reversed: _reversed,
    iter: _iter, next: _next, list: _list, tuple: _tuple, set: _set_like(set),
    frozenset: _set_like(frozenset), dict: _dict_like(dict),
    collections.OrderedDict: _dict_like(collections.OrderedDict),
    collections.defaultdict: _dict_like(collections.defaultdict),
    sum: _sum, min: _min_max(min), max: _min_max(max), abs: _abs, pow: _pow, bool: _bool,
    all: _all_any(all), any: _all_any(any), getattr: _getattr, hasattr: _hasattr,
    slice: _slice, functools.partial: _partial, print: _print, callable: _callable,
    int: _scalar_conversion(int), float: _scalar_conversion(float),
    complex: _scalar_conversion(complex), str: _scalar_conversion(str),
    operator.contains: _contains, operator.is_: _is, operator.is_not: _is_not,
    operator.not_: _not, operator.truth: _bool, operator.getitem: _getitem,
    sorted: _sorted, functools.reduce: _reduce, super: lambda tx, args, kwargs: None if kwargs else _super(tx, args),
}
_HANDLERS = {k: v for k, v in _HANDLERS.items() if v is not None}
