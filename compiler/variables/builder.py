"""Turning real Python values into trackers, installing the guards they need.

``wrap(output, value, source)`` is the one place where a value from outside
the trace enters it; the guards installed here are exactly what the trace
may depend on: an array's type/dtype/shape/layout, a constant's value, a
container's type and length (its items are wrapped in turn), a function's or
module's identity, a user object's type.
"""
from __future__ import annotations

import builtins
import collections
import contextlib
import functools
import types
import weakref
from typing import Any, Iterator, Optional

import numpy as np

from opcode_tables.resume import is_generated_code

from .. import config, symbolic_shapes, trace_rules
from ..exc import Unsupported
from ..graph import TensorMeta
from ..sources import AttrSource, ItemSource, Source, has_instance_dict
from .array import ArrayVariable
from .base import VariableTracker
from .builtins import BuiltinVariable
from .constant import ConstantVariable
from .draws import GeneratorVariable
from .containers import DictVariable, ListVariable, NamedTupleVariable, SetVariable, TupleVariable
from .errstate import ErrstateClassVariable
from .functions import BoundMethodVariable, LocalFunctionVariable, PartialVariable, UserFunctionVariable
from .numpy_functions import InlinedNumpyFunctionVariable, NumpyFunctionVariable, lookup_numpy_op
from .scalars import DynamicScalarVariable, dynamic_dtype
from .resume_prologue import NullCarrierClassVariable, OpaqueArrayVariable, TypedOpaqueVariable
from .user_objects import (ModuleVariable, NamedTupleClassVariable, OpaqueCallableVariable, UserClassVariable,
                           UserObjectVariable)

# Immutable values that are specialised as constants (guarded by type and value).
_CONSTANT_TYPES = (int, float, complex, str, bytes, bool, type(None), type(Ellipsis),
                   range, slice, np.dtype, type(NotImplemented))

_BUILTIN_CALLABLE_TYPES = frozenset({
    int, float, bool, str, complex, tuple, list, dict, set, frozenset, range, enumerate, zip,
    map, filter, reversed, slice, type, object, bytes, super,
    collections.OrderedDict, collections.defaultdict, functools.partial,
})


# Builtin types the tracer does not model that a frame may still receive (an argument, a
# continuation's stack value): passed along as the object itself, guarded by type; any use
# is a graph break.  (Cells, frames and the like stay refused: the frame runs natively.)
# Weak references too: calling one is a break, and a guard holding one by identity would keep
# it alive (a weak reference cannot itself be weakly referenced): its callback would still run
# after the program dropped it, and weakref.getweakrefcount would count it.  (By type, a
# new one made on every call and handed to a continuation compiles nothing again.)
_PASSED_ALONG = frozenset({types.CodeType, types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType,
                           weakref.ReferenceType, weakref.ProxyType, weakref.CallableProxyType})

def wrap(output, value: Any, source: Optional[Source]) -> VariableTracker:
    """A tracker for ``value`` read from ``source`` (guards recorded on ``output.guards``)."""
    guards = output.guards if source is not None else None
    vt = _wrap(output, value, source, guards)
    return vt


def _is_value_key(key: Any) -> bool:
    """A key compared by value (a number, a string, a tuple of those ...), which a guard may
    hold: the guard on a dict's keys or a set's elements keeps a copy of them."""
    tp = type(key)
    if tp in _CONSTANT_TYPES:
        return True
    return tp in (tuple, frozenset) and all(_is_value_key(k) for k in key)


def _check_value_keys(value: Any, source: Optional[Source], what: str) -> None:
    """Dicts and sets are guarded by their keys; an object key (compared by identity) would be
    held by the cache forever (it could never die: CPython's test_set container iterator
    cycle), so such a container is not traced: the frame breaks or runs natively."""
    for key in value:
        if not _is_value_key(key):
            where = source.name() if source is not None else "the trace"
            raise Unsupported(f"{what} of type {type(key).__name__} in {where}: only keys compared "
                              "by value are traced (a guard would keep the object alive)")


def _check_size(value: Any, source: Optional[Source]) -> None:
    """Tracing cost stays bounded: a container above the limit is not taken apart."""
    if len(value) > config.max_container_items:
        where = source.name() if source is not None else "the trace"
        raise Unsupported(f"{type(value).__name__} of {len(value)} items from {where} (above "
                          f"compiler.config.max_container_items = {config.max_container_items})")


@contextlib.contextmanager
def _building(output, value: Any, source: Optional[Source], var: VariableTracker) -> Iterator[None]:
    """While a container's items are wrapped: the container is already its tracker (see
    OutputGraph.adopt), and a container reached again with no source (a cycle among values
    computed at trace time) is refused instead of recursing without end."""
    output.adopt(value, source, var)
    building = output.building
    if id(value) in building:
        raise Unsupported(f"a {type(value).__name__} that contains itself, computed at trace time")
    if len(building) >= config.max_inline_depth:
        raise Unsupported(f"containers nested deeper than {config.max_inline_depth}")
    building.add(id(value))
    try:
        yield
    finally:
        building.discard(id(value))


# Callables whose tracker depends on which object it is (a function, a class, a C function
# the tracer models, a method or partial taken apart by its parts).
_CALLABLES_BY_IDENTITY = (type, types.FunctionType, types.BuiltinFunctionType, types.BuiltinMethodType,
                          types.MethodType, functools.partial, np.ufunc)


def _known_by_type(value: Any) -> bool:
    """A callable object the trace knows only through its type: an instance of a class that
    defines ``__call__`` (a user class, operator.itemgetter ...).  Its tracker
    (UserObjectVariable) calls the class's ``__call__`` (guarded then) and reads attributes
    through their own sources, so identity adds nothing; not one registered by identity
    (allow_in_graph, disable) or a NumPy object."""
    tp = type(value)
    if issubclass(tp, _CALLABLES_BY_IDENTITY) or tp.__module__ == "builtins":
        return False
    return trace_rules.allowed_opinfo(value) is None and not trace_rules.is_disabled(value) and \
        lookup_numpy_op(value) is None and not trace_rules.is_numpy_object(value)


def _item(output, value: Any, source: Optional[Source]) -> VariableTracker:
    """An item of a container being wrapped: through ``output.wrap`` (one tracker per
    mutable object, aliases guarded), so that two references to one list inside an
    argument stay one list in the trace."""
    if source is None:
        return _wrap(output, value, None, None)
    return output.wrap(value, source)


def _traced_shape(output, value: np.ndarray, source: Optional[Source]) -> Optional[tuple]:
    """The shape an input array is traced with: a symbol for each dimension the frame's
    policy makes dynamic (compiler.symbolic_shapes), None when all are static."""
    if source is None:
        return None
    dynamic = symbolic_shapes.current_policy().dynamic_dims(source.name(), value.shape)
    if not any(dynamic):
        return None
    env = output.shape_env
    expr = source.expr(output.ns.const)
    return tuple(env.create_symbol(f"{source.name()}.shape[{i}]", f"{expr}.shape[{i}]", d) if is_dynamic else d
                 for i, (d, is_dynamic) in enumerate(zip(value.shape, dynamic)))


def _wrap(output, value, source, guards) -> VariableTracker:

    tp = type(value)
    if tp is np.ndarray:
        if value.dtype.kind not in "biufc":
            if source is None:
                raise Unsupported(f"array of dtype {value.dtype} from the trace "
                                  "(only boolean and numeric arrays are traced)")
            # From outside (an argument, a continuation's value): passed along as it is,
            # guarded by type and dtype kind; any use of it breaks the graph (runs natively).
            if guards is not None:
                guards.type_match(source, tp)
                expr = source.expr(guards.ns.const)
                guards.add(f"{source.name()}.dtype.kind == {value.dtype.kind!r}",
                           f"{expr}.dtype.kind == {value.dtype.kind!r}")
            return OpaqueArrayVariable(value.dtype, source)
        meta = TensorMeta.of(value, _traced_shape(output, value, source))
        if guards is not None:
            guards.array_match(source, value, meta.layout, meta.shape)
        return ArrayVariable(meta, None, source, example=value)
    if issubclass(tp, np.ndarray):
        raise Unsupported(f"ndarray subclass {tp.__name__} (only plain numpy.ndarray is traced)")
    if issubclass(tp, np.generic):
        if value.dtype.kind not in "biufc" and source is not None:
            # A string, object or date scalar from outside: carried along by type, as such arrays.
            if guards is not None:
                guards.type_match(source, tp)
            return TypedOpaqueVariable(tp, source)
        if value.dtype.kind not in "biufc":
            raise Unsupported(f"NumPy scalar of dtype {value.dtype}")
        if guards is not None:
            guards.constant_match(source, value)
        return ConstantVariable(value, source)
    if (tp is int or tp is float) and source is not None and source.name() in output.dynamic_scalars:
        dtype = dynamic_dtype(value)
        if dtype is not None:
            guards.type_match(source, tp)
            return DynamicScalarVariable(value, source, guards, dtype)
    if tp in _CONSTANT_TYPES:
        if guards is not None:
            guards.constant_match(source, value)
        return ConstantVariable(value, source)
    if tp is tuple or tp is list:
        _check_size(value, source)
        if guards is not None:
            guards.type_match(source, tp)
            guards.length_match(source, len(value))
        seq = (TupleVariable if tp is tuple else ListVariable)([], source)
        with _building(output, value, source, seq):
            seq.items = [_item(output, v, ItemSource(source, i) if source is not None else None)
                         for i, v in enumerate(value)]
        return seq
    if issubclass(tp, tuple) and hasattr(tp, "_fields"):
        _check_size(value, source)
        if guards is not None:
            guards.type_match(source, tp)
        named = NamedTupleVariable([], tp, source)
        with _building(output, value, source, named):
            named.items = [_item(output, v, AttrSource(source, f) if source is not None else None)
                           for f, v in zip(tp._fields, value)]
        return named
    if tp in (dict, collections.OrderedDict, collections.defaultdict):
        _check_size(value, source)
        _check_value_keys(value, source, "dict key")
        if guards is not None:
            guards.type_match(source, tp)
            guards.dict_keys_match(source, list(value.keys()))
        mapping = DictVariable({}, source, cls=tp)
        with _building(output, value, source, mapping):
            for k, v in value.items():
                try:
                    hash(k)
                except TypeError:
                    raise Unsupported("dict with unhashable keys") from None
                mapping.items[k] = _item(output, v, ItemSource(source, k) if source is not None else None)
            if tp is collections.defaultdict and value.default_factory is not None:
                mapping.default_factory = _item(output, value.default_factory,
                                                AttrSource(source, "default_factory") if source is not None else None)
        if source is not None:
            mapping.initial = dict(mapping.items)  # what the replay of its changes starts from
        return mapping
    if tp is frozenset and all(type(v) in _CONSTANT_TYPES for v in value):
        if guards is not None:
            guards.constant_match(source, value)
        return ConstantVariable(value, source)
    if tp in (set, frozenset):
        _check_size(value, source)
        _check_value_keys(value, source, "set element")
        if guards is not None:
            guards.type_match(source, tp)
            guards.add(f"{source.name()} == {sorted(map(repr, value))}",
                       f"{source.expr(guards.ns.const)} == {guards.ns.const(frozenset(value), 'c')}")
        return SetVariable(set(value), tp, source)
    if tp is types.ModuleType:
        if guards is not None:
            guards.id_match(source, value)
        return ModuleVariable(value, source)

    if tp is types.FunctionType and source is not None and \
            ("<locals>" in value.__qualname__ or value.__name__ == "<lambda>") and \
            trace_rules.original_of_compiled(value) is None and not trace_rules.is_disabled(value) and \
            trace_rules.allowed_opinfo(value) is None and lookup_numpy_op(value) is None:
        # A lambda or a function made inside another function: often a new object on every
        # call of its maker, so it is guarded by its code; its defaults and closure
        # cells are read (and guarded) through the source.
        if guards is not None:
            guards.type_match(source, tp)
            guards.add(f"{source.name()}.__code__ is {value.__code__.co_name}",
                       f"{source.expr(guards.ns.const)}.__code__ is {guards.ns.const(value.__code__)}")
        return LocalFunctionVariable(value, source)

    # -- callables: identity-guarded --------------------------------------
    if guards is not None and (callable(value) or issubclass(tp, type)) and tp not in _PASSED_ALONG:
        if tp is functools.partial:
            guards.type_match(source, tp)
        elif tp is types.MethodType:
            guards.type_match(source, tp)
        elif _known_by_type(value):
            # By its class (below): every instance is the same program, and the cache holds no
            # instance (a new callable per call).
            pass
        else:
            guards.id_match(source, value)

    allowed = trace_rules.allowed_opinfo(value)
    if allowed is not None:
        return NumpyFunctionVariable(value, allowed, source)
    inlined = trace_rules.inlined_numpy_function(value)
    if inlined is not None:
        return InlinedNumpyFunctionVariable(value, inlined[1], source)
    if trace_rules.is_disabled(value):
        return OpaqueCallableVariable(value, source, "disabled with compiler.disable")
    if tp is types.FunctionType:
        original = trace_rules.original_of_compiled(value)
        if original is not None and not output.inline_compiled:
            return OpaqueCallableVariable(value, source, "a compiled function called from an unobserved "
                                                         "compilation runs as it is")
        if original is not None:  # a compiled function called from a compiled one: inline the original
            return UserFunctionVariable(original, AttrSource(source, "_tracematrix_original") if source else None)
        op = lookup_numpy_op(value)
        if op is not None:
            return NumpyFunctionVariable(value, op, source)
        if trace_rules.is_numpy_object(value):
            return OpaqueCallableVariable(value, source, "a NumPy function that is not in the allowlist")
        if is_generated_code(value.__code__):
            return OpaqueCallableVariable(value, source, "code the compiler built (a break stub or continuation) "
                                                         "runs natively, never inlined or compiled again")
        if trace_rules.is_library_function(value):
            return OpaqueCallableVariable(value, source, "library code (the standard library or an installed "
                                                         "package) runs natively, never inlined")
        return UserFunctionVariable(value, source)
    if tp is types.MethodType:
        fn = _wrap(output, value.__func__, AttrSource(source, "__func__") if source else None, guards)
        obj = _wrap(output, value.__self__, AttrSource(source, "__self__") if source else None, guards)
        return BoundMethodVariable(fn, obj, source)
    if tp is functools.partial:
        src = source
        fn = _wrap(output, value.func, AttrSource(src, "func") if src else None, guards)
        if guards is not None:
            guards.length_match(AttrSource(src, "args"), len(value.args))
            guards.dict_keys_match(AttrSource(src, "keywords"), list(value.keywords))
        args = [_wrap(output, a, ItemSource(AttrSource(src, "args"), i) if src else None, guards)
                for i, a in enumerate(value.args)]
        kwargs = {k: _wrap(output, v, ItemSource(AttrSource(src, "keywords"), k) if src else None, guards)
                  for k, v in value.keywords.items()}
        return PartialVariable(fn, args, kwargs, source)
    if value is np.errstate:
        return ErrstateClassVariable(source)   # traced as a context manager
    if issubclass(tp, type):
        if value in _BUILTIN_CALLABLE_TYPES:
            return BuiltinVariable(value, source)
        if issubclass(value, np.generic) or value is np.ndarray or value is np.dtype:
            return ConstantVariable(value, source)
        if issubclass(value, tuple) and hasattr(value, "_fields"):
            return NamedTupleClassVariable(value, source)
        if issubclass(value, BaseException):
            return BuiltinVariable(value, source)
        if value.__module__ == "builtins":
            return ConstantVariable(value, source)
        return UserClassVariable(value, source)
    if callable(value):
        op = lookup_numpy_op(value)
        if op is not None:
            return NumpyFunctionVariable(value, op, source)
        if tp in (types.BuiltinFunctionType, types.BuiltinMethodType) or issubclass(tp, np.ufunc):
            if trace_rules.is_numpy_object(value) or issubclass(tp, np.ufunc):
                return OpaqueCallableVariable(value, source, "a NumPy function that is not in the allowlist")
            if BuiltinVariable.handles(value):
                return BuiltinVariable(value, source)
            return OpaqueCallableVariable(value, source, "a C function the tracer does not model")
    if callable(value) and trace_rules.is_numpy_object(value):
        return OpaqueCallableVariable(value, source, "a NumPy function that is not in the allowlist")
    if tp in _PASSED_ALONG or tp.__module__ == "builtins" and not has_instance_dict(tp):
        if source is None or tp not in _PASSED_ALONG:
            raise Unsupported(f"value of type {tp.__name__} from {source.name() if source else 'the trace'}")
        # From outside (an argument, a continuation's stack value): the object itself, by type.
        if guards is not None:
            guards.type_match(source, tp)
        return TypedOpaqueVariable(tp, source)
    if guards is not None:
        guards.type_match(source, tp)
    if tp is np.random.Generator and source is not None:
        return GeneratorVariable(value, source)   # its draws are graph ops
    return UserObjectVariable(value, source)


def wrap_constant_result(value: Any) -> VariableTracker:
    """A value computed at trace time (no source): constants and fresh containers."""
    from opcode_tables.resume import NullCarrier
    if value is NullCarrier:
        return NullCarrierClassVariable(None)
    tp = type(value)
    if tp in _CONSTANT_TYPES or issubclass(tp, (np.generic, type)):
        return ConstantVariable(value)
    if tp is tuple:
        return TupleVariable([wrap_constant_result(v) for v in value], origin=value)
    if tp is frozenset:
        return ConstantVariable(value)  # immutable: the real object, its identity and methods
    if tp is list:
        return ListVariable([wrap_constant_result(v) for v in value])
    if tp is dict:
        return DictVariable({k: wrap_constant_result(v) for k, v in value.items()})
    if tp in (set, frozenset):
        return SetVariable(value, tp)
    raise Unsupported(f"trace-time result of type {tp.__name__}")


BUILTINS_DICT = vars(builtins)
