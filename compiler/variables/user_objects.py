"""Modules, user classes and instances, and callables the tracer does not model.

Attribute reads resolve the way Python does for plain classes: the
instance ``__dict__`` first (data), then the class's MRO (functions become
bound methods, properties are inlined, other class attributes are values).
Classes that customise attribute access (``__getattr__``,
``__getattribute__``, descriptors other than property/staticmethod/
classmethod) are Unsupported.  Attribute stores are side effects: Unsupported.
"""
from __future__ import annotations

import abc
import types
from typing import Any, Dict, Optional

from .. import trace_rules
from ..exc import Unsupported
from ..side_effects import DELETED
from ..sources import AttrSource, ItemSource, TypeSource
from .base import FixedObjectVariable, Translator, VariableTracker
from .constant import ConstantVariable, wrap_static_attr
from .containers import NamedTupleVariable
from .functions import BoundMethodVariable, UserFunctionVariable

_MISSING = object()
_PLAIN_METACLASSES = (type, abc.ABCMeta)


class ModuleVariable(VariableTracker):
    def __init__(self, module: types.ModuleType, source=None) -> None:
        super().__init__(source)
        self.module = module

    def describe(self) -> str:
        return f"module {self.module.__name__}"

    def python_type(self) -> type:
        return types.ModuleType

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if module_read_runs_code(self.module, name):
            raise Unsupported(f"reading {name!r} of {self.describe()} calls the module's __getattr__ "
                              "(Python code, which may warn or import): it runs natively")
        return wrap_static_attr(tx, self.module, name, self.source)


def module_read_runs_code(module: types.ModuleType, name: str) -> bool:
    """Whether ``module.name`` would run Python code: a module ``__getattr__`` (PEP 562) answers
    names missing from the module's dict, and a module subclass can customise every read.
    Such a read is not folded at trace time (a deprecation warning would come from the
    compiler, once, instead of from the caller on every call) nor guarded (the guard would
    run it again on every call)."""
    if type(module) is not types.ModuleType:
        return True
    namespace = vars(module)
    if name in namespace or _class_lookup(types.ModuleType, name) is not _MISSING:
        return False
    return "__getattr__" in namespace


def _class_lookup(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return _MISSING


def _check_plain_class(cls: type) -> None:
    if _class_lookup(cls, "__getattr__") is not _MISSING or \
            _class_lookup(cls, "__getattribute__") is not object.__getattribute__:
        raise Unsupported(f"class {cls.__qualname__} customises attribute access")


class UserClassVariable(FixedObjectVariable):
    def __init__(self, cls: type, source=None) -> None:
        super().__init__(source)
        self.cls = cls

    def describe(self) -> str:
        return f"class {self.cls.__qualname__}"

    def fixed_object(self) -> Any:
        return self.cls

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        attr = _class_lookup(self.cls, name)
        if isinstance(attr, staticmethod):
            return tx.output.wrap(attr.__func__, AttrSource(self.source, name) if self.source else None)
        if isinstance(attr, classmethod):
            fn = tx.output.wrap(attr.__func__, AttrSource(AttrSource(self.source, name), "__func__")
                                if self.source else None)
            return BoundMethodVariable(fn, self)
        return wrap_static_attr(tx, self.cls, name, self.source)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        cls = self.cls
        if type(cls) not in _PLAIN_METACLASSES or getattr(cls, "__abstractmethods__", None):
            raise Unsupported(f"creating an instance of {cls.__qualname__} (metaclass "
                              f"{type(cls).__name__})")
        # Any __new__ in a class dict, even object.__new__ itself, makes CPython call it through
        # the type's slot, which checks the arguments differently (B(3) with __new__ =
        # object.__new__ and an __init__ is a TypeError): the real call decides.
        if any("__new__" in vars(k) for k in cls.__mro__ if k is not object) or \
                "__slots__" in vars(cls) or issubclass(cls, BaseException) or \
                any(k.__module__ == "builtins" and k is not object for k in cls.__mro__):
            raise Unsupported(f"creating an instance of {cls.__qualname__} (custom __new__, "
                              "__slots__ or a builtin base)")
        _check_plain_class(cls)
        if _class_lookup(cls, "__del__") is not _MISSING:
            # Its finalizer runs when the last reference goes: the object must be real.
            raise Unsupported(f"creating an instance of {cls.__qualname__}, which has a __del__ finalizer")
        if trace_rules.is_library_class(cls):
            raise Unsupported(f"creating an instance of {cls.__qualname__}: library classes run natively "
                              "(compiler.trace_rules)")
        obj = TracedObjectVariable(cls, self)
        init = _class_lookup(cls, "__init__")
        if init is not object.__init__:
            if not isinstance(init, types.FunctionType):
                raise Unsupported(f"{cls.__qualname__}.__init__ is not a Python function")
            owner = next(k for k in cls.__mro__ if "__init__" in vars(k))
            source = AttrSource(self.source, "__init__") if self.source is not None and owner is cls else None
            init_var = tx.output.wrap(init, source) if source is not None else None
            if init_var is None:
                init_var = UserFunctionVariable(init, None)
            result = init_var.call(tx, [obj, *args], kwargs)
            if not (result.is_python_constant() and result.as_python_constant() is None):
                tx.raise_python_exception(TypeError("__init__() should return None"))
        elif args or kwargs:
            tx.raise_python_exception(TypeError(f"{cls.__name__}() takes no arguments"))
        return obj


class NamedTupleClassVariable(UserClassVariable):
    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        fields = self.cls._fields
        defaults = getattr(self.cls, "_field_defaults", {})
        values = list(args)
        if len(values) > len(fields):
            tx.raise_python_exception(TypeError(f"{self.cls.__name__} takes {len(fields)} arguments"))
        for field in fields[len(values):]:
            if field in kwargs:
                values.append(kwargs.pop(field))
            elif field in defaults:
                values.append(tx.output.wrap(defaults[field], None))
            else:
                tx.raise_python_exception(TypeError(f"{self.cls.__name__} missing argument {field!r}"))
        if kwargs:
            tx.raise_python_exception(TypeError(f"{self.cls.__name__} got unexpected {sorted(kwargs)}"))
        return NamedTupleVariable(values, self.cls)

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if name == "_make":
            outer = self

            class _Make(VariableTracker):
                def call(self, tx: Translator, args, kwargs):
                    return outer.call(tx, args[0].unpack(tx), {})
            return _Make()
        return super().getattr(tx, name)


def _is_data_descriptor(attr: Any) -> bool:
    return hasattr(type(attr), "__set__") or hasattr(type(attr), "__delete__")


def class_attribute(tx: Translator, obj: VariableTracker, cls: type, cls_source, name: str,
                    class_attr: Any) -> VariableTracker:
    """``obj.name`` resolved on the class (the instance dict did not have it)."""
    src = (lambda *path: _attr_path(cls_source, name, *path)) if cls_source is not None else (lambda *p: None)
    if class_attr is _MISSING:
        tx.raise_python_exception(AttributeError(f"{cls.__name__!r} object has no attribute {name!r}"))
    if isinstance(class_attr, property):
        if class_attr.fget is None:
            raise Unsupported(f"property {name!r} without a getter")
        return tx.output.wrap(class_attr.fget, src("fget")).call(tx, [obj], {})
    if isinstance(class_attr, types.FunctionType):
        return BoundMethodVariable(tx.output.wrap(class_attr, src()), obj)
    if isinstance(class_attr, staticmethod):
        return tx.output.wrap(class_attr.__func__, src())
    if isinstance(class_attr, classmethod):
        cls_var = tx.output.wrap(cls, cls_source) if cls_source is not None else UserClassVariable(cls)
        return BoundMethodVariable(tx.output.wrap(class_attr.__func__, src("__func__")), cls_var)
    if _is_data_descriptor(class_attr) or hasattr(type(class_attr), "__get__") and not isinstance(
            class_attr, (type, types.BuiltinFunctionType)):
        raise Unsupported(f"descriptor {name!r} of {cls.__qualname__}")
    if cls_source is None:
        raise Unsupported(f"class attribute {name!r} of {cls.__qualname__} without a source")
    return tx.output.wrap(class_attr, src())


def _attr_path(base, name: str, *path: str):
    source = AttrSource(base, name)
    for part in path:
        source = AttrSource(source, part)
    return source


class UserObjectVariable(VariableTracker):
    """An instance of a user class that came from outside (guarded on its type)."""

    def __init__(self, value: Any, source=None) -> None:
        super().__init__(source)
        self.value = value

    def describe(self) -> str:
        return f"{type(self.value).__qualname__} object"

    def python_type(self) -> type:
        return type(self.value)

    def truth(self, tx: Translator) -> bool:
        cls = type(self.value)
        if _class_lookup(cls, "__bool__") is not _MISSING or _class_lookup(cls, "__len__") is not _MISSING:
            raise Unsupported(f"truth value of {self.describe()} (custom __bool__/__len__)")
        return True

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if self.source is None:
            raise Unsupported(f"attribute of {self.describe()} without a source")
        cls = type(self.value)
        _check_plain_class(cls)
        if name == "__dict__":
            # The instance dict is the attributes themselves: modelled as a dict of its own,
            # its changes and the attribute stores would be replayed separately (one undoing
            # the other).
            raise Unsupported(f"__dict__ of {self.describe()} (the attributes seen as a dict)")
        class_attr = _class_lookup(cls, name)
        if not _is_data_descriptor(class_attr):
            stored = tx.output.side_effects.lookup("attr", self.value, name)
            if stored is not None:
                if stored.value is not DELETED:
                    return stored.value
            else:
                instance_dict = _string_keyed_dict(self.value)
                if instance_dict is not None and name in instance_dict:
                    return tx.output.wrap(instance_dict[name], AttrSource(self.source, name))
                if instance_dict is not None:
                    # Guarded by type, not identity: another instance (or this one, changed)
                    # may shadow the class's attribute with its own.
                    expr = self.source.expr(tx.output.ns.const)
                    tx.output.guards.add(f"{name!r} not in {self.source.name()}.__dict__",
                                         f"({name!r} in {expr}.__dict__) is False")
        return class_attribute(tx, self, cls, TypeSource(self.source), name, class_attr)

    def setattr(self, tx: Translator, name: str, value: Optional[VariableTracker]) -> None:
        """An attribute store (value) or delete (None) on an outside object, replayed by the
        cache entry; only plain instance-dict attributes are modelled."""
        cls = type(self.value)
        what = f"attribute {'store' if value is not None else 'delete'} .{name}"
        if self.source is None or _string_keyed_dict(self.value) is None or \
                _class_lookup(cls, "__setattr__") is not object.__setattr__ or \
                _class_lookup(cls, "__delattr__") is not object.__delattr__ or \
                _is_data_descriptor(_class_lookup(cls, name)):
            raise Unsupported(f"{what} on {self.describe()} (custom attribute access)")
        tx.output.note_mutation(self, what)
        effects = tx.output.side_effects
        stored = effects.lookup("attr", self.value, name)
        existed = name in _string_keyed_dict(self.value) if stored is None else stored.existed
        exists_now = existed if stored is None else stored.value is not DELETED
        if value is None and not exists_now:
            tx.raise_python_exception(AttributeError(name))
        if stored is None:
            expr = self.source.expr(tx.output.ns.const)
            tx.output.guards.add(f"{name!r} {'in' if existed else 'not in'} {self.source.name()}.__dict__",
                                 f"({name!r} in {expr}.__dict__) is {existed}")
        effects.store("attr", self.value, self.source, name, existed, DELETED if value is None else value)

    def delattr(self, tx: Translator, name: str) -> None:
        self.setattr(tx, name, None)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        call = _class_lookup(type(self.value), "__call__")
        if isinstance(call, types.FunctionType):
            fn = tx.output.wrap(call, AttrSource(TypeSource(self.source), "__call__"))
            return BoundMethodVariable(fn, self).call(tx, args, kwargs)
        return super().call(tx, args, kwargs)


_C_METHOD_TYPES = (types.MethodDescriptorType, types.WrapperDescriptorType, types.BuiltinFunctionType)
_HEAP_TYPE = 1 << 9   # Py_TPFLAGS_HEAPTYPE: a class made by a class statement (or type())


def _is_c_method(cls: type, method: Any) -> bool:
    """A method implemented in C that binding runs no Python code for: CPython's own method
    descriptors, or a Cython function defined on a static extension type (a
    ``np.random.Generator`` method: Cython binds it like a C function)."""
    if isinstance(method, _C_METHOD_TYPES):
        return True
    return type(method).__name__ == "cython_function_or_method" and not cls.__flags__ & _HEAP_TYPE and \
        all(not klass.__flags__ & _HEAP_TYPE for klass in cls.__mro__)


def native_method(obj: VariableTracker, name: str) -> Optional[VariableTracker]:
    """``obj.name`` for a method the tracer cannot model, implemented in C on the type of an
    object that came from outside (``buf.write``, ``h.hexdigest``): loading it is a plain
    type lookup with no user code, so it is kept as a value and the graph breaks at the
    call instead (the bound method is rebuilt for the native call).  None where looking
    the method up could run user code."""
    value = getattr(obj, "value", None)
    if not isinstance(obj, UserObjectVariable) or obj.source is None:
        return None
    cls = type(value)
    if cls.__getattribute__ is not object.__getattribute__ or _class_lookup(cls, "__getattr__") is not _MISSING:
        return None
    if not _is_c_method(cls, _class_lookup(cls, name)):
        return None
    if name in (_string_keyed_dict(value) or {}):
        return None
    return NativeMethodVariable(obj, name)


def _string_keyed_dict(value: Any) -> Optional[dict]:
    """``value.__dict__`` (None without one), for looking attribute names up at trace time.
    A key that is not a str could run its own ``__eq__`` (or ``__hash__``) during such a
    lookup -- user code at trace time (CPython's test_descr.test_vicious_descriptor_nonsense
    deletes a class attribute from it): refused instead."""
    # Read through the type's descriptor: getattr would run a class's own __getattribute__.
    descriptor = _class_lookup(type(value), "__dict__")
    if type(descriptor) not in (types.GetSetDescriptorType, types.MemberDescriptorType):
        return None  # no instance dict (or one a Python-level descriptor computes)
    instance_dict = descriptor.__get__(value, type(value))
    if instance_dict is not None and not all(type(k) is str for k in instance_dict):
        raise Unsupported(f"the attributes of a {type(value).__name__} object include keys that are not "
                          "strings (looking a name up could run their __eq__)")
    return instance_dict


class NativeMethodVariable(VariableTracker):
    def __init__(self, obj: VariableTracker, name: str) -> None:
        super().__init__(None)
        self.obj = obj
        self.name = name

    def describe(self) -> str:
        return f"method {type(self.obj.value).__qualname__}.{self.name}"

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        raise Unsupported(f"call to {self.describe()} (implemented in C; not modelled)")

    def reconstruct(self, cg) -> str:
        return f"{self.obj.reconstruct(cg)}.{self.name}"


class OpaqueCallableVariable(VariableTracker):
    """A callable the tracer will not enter: calling it is Unsupported (a future graph break)."""

    def __init__(self, value: Any, source, why: str) -> None:
        super().__init__(source)
        self.value = value
        self.why = why

    def describe(self) -> str:
        name = getattr(self.value, "__qualname__", None) or getattr(self.value, "__name__", repr(self.value))
        module = getattr(self.value, "__module__", None)
        return f"{module}.{name}" if module and module != "builtins" else name

    def is_python_constant(self) -> bool:
        return True

    def as_python_constant(self) -> Any:
        return self.value

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        return wrap_static_attr(tx, self.value, name, self.source)

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        # Raised without a local naming it: a frame holding its own exception (whose traceback
        # holds the frame) is a cycle that keeps every value of the trace alive until the next
        # garbage collection.
        raise self._unsupported_call()

    def _unsupported_call(self) -> Unsupported:
        error = Unsupported(f"call to {self.describe()}: {self.why}")
        # A function calling this must stay a real frame under its caller's (trace_rules).
        error.frame_sensitive = trace_rules.is_frame_sensitive(self.value)  # type: ignore[attr-defined]
        # A clock read makes the whole frame run natively (compiler.convert_frame).
        error.reads_clock = trace_rules.reads_clock(self.value) and self.describe()  # type: ignore[attr-defined]
        return error


class TracedObjectVariable(VariableTracker):
    """An instance of a plain user class created by the traced code: its ``__dict__`` is
    tracked symbolically (``__init__`` is inlined, attribute stores update the tracker)."""

    def __init__(self, cls: type, cls_var: VariableTracker) -> None:
        super().__init__(None)
        self.cls = cls
        self.cls_var = cls_var
        self.attrs: Dict[str, VariableTracker] = {}

    def describe(self) -> str:
        return f"{self.cls.__qualname__} object (made in the trace)"

    def python_type(self) -> type:
        return self.cls

    def truth(self, tx: Translator) -> bool:
        if _class_lookup(self.cls, "__bool__") is not _MISSING or _class_lookup(self.cls, "__len__") is not _MISSING:
            raise Unsupported(f"truth value of {self.describe()} (custom __bool__/__len__)")
        return True

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        class_attr = _class_lookup(self.cls, name)
        if not _is_data_descriptor(class_attr) and name in self.attrs:
            return self.attrs[name]
        if name == "__class__":
            return self.cls_var
        if name == "__dict__":
            raise Unsupported("__dict__ of an object made in the trace")
        return class_attribute(tx, self, self.cls, self.cls_var.source, name, class_attr)

    def setattr(self, tx: Translator, name: str, value: VariableTracker) -> None:
        tx.output.note_mutation(self, f"attribute store .{name}")
        if _is_data_descriptor(_class_lookup(self.cls, name)) or \
                _class_lookup(self.cls, "__setattr__") is not object.__setattr__:
            raise Unsupported(f"attribute store {name!r} through a descriptor or __setattr__")
        self.attrs[name] = value

    def delattr(self, tx: Translator, name: str) -> None:
        if name not in self.attrs or _is_data_descriptor(_class_lookup(self.cls, name)) or \
                _class_lookup(self.cls, "__delattr__") is not object.__delattr__:
            raise Unsupported(f"attribute delete {name!r} (a descriptor, __delattr__ or a missing attribute: "
                              "the native run does it, with CPython's own error)")
        tx.output.note_mutation(self, f"attribute delete .{name}")
        del self.attrs[name]

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        call = _class_lookup(self.cls, "__call__")
        if isinstance(call, types.FunctionType):
            return class_attribute(tx, self, self.cls, self.cls_var.source, "__call__", call).call(tx, args, kwargs)
        return super().call(tx, args, kwargs)

    def reconstruct(self, cg) -> str:
        # Made first, then given its attributes: an attribute may be the object itself.
        def create() -> str:
            return f"{cg.const(object.__new__)}({self.cls_var.reconstruct(cg)})"

        def fill(name: str) -> str:
            values = "(" + "".join(f"{v.reconstruct(cg)}, " for v in self.attrs.values()) + ")"
            return f"{cg.const(set_instance_attributes)}({name}, {cg.const(tuple(self.attrs))}, {values})"
        return cg.shared_filled(self, create, fill)


def set_instance_attributes(obj: Any, names: tuple, values: tuple) -> None:
    """Set ``obj``'s attributes one by one in its ``__dict__``, in the order the traced code
    first set them (called by generated entry code).  Item by item, as attribute stores do,
    the dict keeps sharing its class's keys (a split table); ``update`` from another dict
    would copy that dict's combined table (CPython's test_dict.test_splittable_setattr_after_pop
    sees it)."""
    namespace = obj.__dict__
    for name, value in zip(names, values):
        namespace[name] = value


class SuperVariable(VariableTracker):
    """``super(cls, obj)`` (or zero-argument ``super()`` in a traced method)."""

    def __init__(self, cls_var: VariableTracker, obj: VariableTracker) -> None:
        super().__init__(None)
        self.cls_var = cls_var
        self.obj = obj

    def describe(self) -> str:
        return "super object"

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        if not self.cls_var.is_python_constant():
            raise Unsupported("super() with a non-constant class")
        start = self.cls_var.as_python_constant()
        obj_type = self.obj.python_type()
        mro = obj_type.__mro__
        if start not in mro:
            tx.raise_python_exception(TypeError("super(type, obj): obj must be an instance or subtype of type"))
        type_source = getattr(self.obj, "cls_var", None)
        type_source = type_source.source if type_source is not None else (
            TypeSource(self.obj.source) if self.obj.source is not None else None)
        for index in range(mro.index(start) + 1, len(mro)):
            klass = mro[index]
            if name in vars(klass):
                owner_source = ItemSource(AttrSource(type_source, "__mro__"), index) \
                    if type_source is not None else None
                return class_attribute(tx, self.obj, klass, owner_source, name, vars(klass)[name])
        tx.raise_python_exception(AttributeError(f"'super' object has no attribute {name!r}"))


def make_super(tx: Translator, args) -> SuperVariable:
    if len(args) == 2:
        return SuperVariable(args[0], args[1])
    if args:
        raise Unsupported("super() with one argument")
    code = tx.code
    if "__class__" not in code.co_freevars or not code.co_varnames or code.co_argcount == 0:
        tx.raise_python_exception(RuntimeError("super(): no arguments"))
    cls_var = tx.cells["__class__"].load(tx)
    first = code.co_varnames[0]
    obj = tx.locals.get(first) or tx.cells[first].load(tx)
    return SuperVariable(cls_var, obj)
