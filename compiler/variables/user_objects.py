"""Modules, user classes and instances, and callables the tracer does not model.

Attribute reads resolve the way Python does for plain classes: the
instance ``__dict__`` first (data), then the class's MRO (functions become
bound methods, properties are inlined, other class attributes are values).
Classes that customise attribute access (``__getattr__``,
``__getattribute__``, descriptors other than property/staticmethod/
classmethod) are Unsupported.  Attribute stores are side effects: Unsupported.
"""
from __future__ import annotations

import types
from typing import Any

from ..exc import Unsupported
from ..sources import AttrSource, TypeSource
from .base import VariableTracker
from .constant import ConstantVariable

_MISSING = object()


class ModuleVariable(VariableTracker):
    def __init__(self, module: types.ModuleType, source=None) -> None:
        super().__init__(source)
        self.module = module

    def describe(self) -> str:
        return f"module {self.module.__name__}"

    def python_type(self) -> type:
        return types.ModuleType

    def getattr(self, tx, name: str) -> VariableTracker:
        from .builder import wrap_static_attr
        return wrap_static_attr(tx, self.module, name, self.source)


def _class_lookup(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return _MISSING


def _check_plain_class(cls: type) -> None:
    if _class_lookup(cls, "__getattr__") is not _MISSING or \
            _class_lookup(cls, "__getattribute__") is not object.__getattribute__:
        raise Unsupported(f"class {cls.__qualname__} customises attribute access")


class UserClassVariable(VariableTracker):
    def __init__(self, cls: type, source=None) -> None:
        super().__init__(source)
        self.cls = cls

    def describe(self) -> str:
        return f"class {self.cls.__qualname__}"

    def python_type(self) -> type:
        return type(self.cls)

    def is_python_constant(self) -> bool:
        return True

    def as_python_constant(self) -> Any:
        return self.cls

    def getattr(self, tx, name: str) -> VariableTracker:
        attr = _class_lookup(self.cls, name)
        if isinstance(attr, staticmethod):
            return tx.output.wrap(attr.__func__, AttrSource(self.source, name) if self.source else None)
        if isinstance(attr, classmethod):
            from .functions import BoundMethodVariable
            fn = tx.output.wrap(attr.__func__, AttrSource(AttrSource(self.source, name), "__func__")
                                if self.source else None)
            return BoundMethodVariable(fn, self)
        from .builder import wrap_static_attr
        return wrap_static_attr(tx, self.cls, name, self.source)

    def call(self, tx, args, kwargs) -> VariableTracker:
        raise Unsupported(f"creating an instance of {self.cls.__qualname__} (object construction "
                          "is not traced)")


class NamedTupleClassVariable(UserClassVariable):
    def call(self, tx, args, kwargs) -> VariableTracker:
        from .containers import NamedTupleVariable
        from .functions import bind_arguments
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

    def getattr(self, tx, name: str) -> VariableTracker:
        if name == "_make":
            outer = self

            class _Make(VariableTracker):
                def call(self, tx, args, kwargs):
                    return outer.call(tx, args[0].unpack(tx), {})
            return _Make()
        return super().getattr(tx, name)


class UserObjectVariable(VariableTracker):
    """An instance of a user class that came from outside (guarded on its type)."""

    def __init__(self, value: Any, source=None) -> None:
        super().__init__(source)
        self.value = value

    def describe(self) -> str:
        return f"{type(self.value).__qualname__} object"

    def python_type(self) -> type:
        return type(self.value)

    def truth(self, tx) -> bool:
        cls = type(self.value)
        if _class_lookup(cls, "__bool__") is not _MISSING or _class_lookup(cls, "__len__") is not _MISSING:
            raise Unsupported(f"truth value of {self.describe()} (custom __bool__/__len__)")
        return True

    def getattr(self, tx, name: str) -> VariableTracker:
        if self.source is None:
            raise Unsupported(f"attribute of {self.describe()} without a source")
        cls = type(self.value)
        _check_plain_class(cls)
        class_attr = _class_lookup(cls, name)
        is_data_descriptor = hasattr(type(class_attr), "__set__") or hasattr(type(class_attr), "__delete__")
        if not is_data_descriptor:
            instance_dict = getattr(self.value, "__dict__", None)
            if instance_dict is not None and name in instance_dict:
                return tx.output.wrap(instance_dict[name], AttrSource(self.source, name))
        if class_attr is _MISSING:
            tx.raise_python_exception(AttributeError(f"{cls.__name__!r} object has no attribute {name!r}"))
        type_source = TypeSource(self.source)
        if isinstance(class_attr, property):
            if class_attr.fget is None:
                raise Unsupported(f"property {name!r} without a getter")
            getter = tx.output.wrap(class_attr.fget, AttrSource(AttrSource(type_source, name), "fget"))
            return getter.call(tx, [self], {})
        if isinstance(class_attr, types.FunctionType):
            from .functions import BoundMethodVariable
            fn = tx.output.wrap(class_attr, AttrSource(type_source, name))
            return BoundMethodVariable(fn, self)
        if isinstance(class_attr, staticmethod):
            return tx.output.wrap(class_attr.__func__, AttrSource(type_source, name))
        if isinstance(class_attr, classmethod):
            from .functions import BoundMethodVariable
            fn = tx.output.wrap(class_attr.__func__, AttrSource(AttrSource(type_source, name), "__func__"))
            return BoundMethodVariable(fn, tx.output.wrap(cls, type_source))
        if is_data_descriptor or hasattr(type(class_attr), "__get__") and not isinstance(
                class_attr, (type, types.BuiltinFunctionType)):
            raise Unsupported(f"descriptor {name!r} of {cls.__qualname__}")
        return tx.output.wrap(class_attr, AttrSource(type_source, name))

    def call(self, tx, args, kwargs) -> VariableTracker:
        call = _class_lookup(type(self.value), "__call__")
        if isinstance(call, types.FunctionType):
            from .functions import BoundMethodVariable
            fn = tx.output.wrap(call, AttrSource(TypeSource(self.source), "__call__"))
            return BoundMethodVariable(fn, self).call(tx, args, kwargs)
        return super().call(tx, args, kwargs)


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

    def getattr(self, tx, name: str) -> VariableTracker:
        from .builder import wrap_static_attr
        return wrap_static_attr(tx, self.value, name, self.source)

    def call(self, tx, args, kwargs) -> VariableTracker:
        raise Unsupported(f"call to {self.describe()}: {self.why}")
