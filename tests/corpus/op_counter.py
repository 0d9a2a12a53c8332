"""An independent count of the NumPy operations a corpus call performs on arrays, without the compiler.

Every array argument is wrapped in a ``Counted`` proxy that counts each operation applied to it (operators,
methods, ``T``/``real``/``imag``, NumPy functions and ufuncs through ``__array_function__`` /
``__array_ufunc__``, indexing, iteration) and wraps the result, so a chain is followed through.  Static
facts (``shape``, ``ndim``, ``dtype``, ``size``, ``itemsize``, ``nbytes``, ``len``) are not counted.  NumPy
creation functions that take no array (``np.arange(n)``, ``np.eye(n)``...) are counted by patching them for
the duration of the call.  Only operations made by the user code count: NumPy's own internals run on the
unwrapped arrays.

This cross-checks the ``nodes=`` declarations, which are reasoned out by hand from each program.
"""
from __future__ import annotations

import contextlib
import dataclasses
import operator
from typing import Any, Callable, Dict, Iterator

import numpy as np

STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size", "itemsize", "nbytes"})
ATTRIBUTE_OPS = frozenset({"T", "real", "imag"})
CREATION_FUNCTIONS = ("array", "arange", "linspace", "eye", "zeros", "ones", "full", "empty", "identity")


class DataDependent(Exception):
    """The program asked for an array's value in Python (bool, float, iteration over values)."""


class _Counter:
    def __init__(self) -> None:
        self.count = 0
        self.depth = 0   # > 0 while NumPy itself runs: its internal calls are not the user's

    @contextlib.contextmanager
    def inside_numpy(self) -> Iterator[None]:
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def apply(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if self.depth == 0:
            self.count += 1
        with self.inside_numpy():
            result = fn(*unwrap(args), **unwrap(kwargs))
        return self.wrap(result)

    def wrap(self, value: Any) -> Any:
        if isinstance(value, (np.ndarray, np.generic)) and self.depth == 0:
            return Counted(value, self)
        if isinstance(value, tuple) and type(value) is tuple:
            return tuple(self.wrap(v) for v in value)
        return value


def unwrap(value: Any) -> Any:
    if isinstance(value, Counted):
        return value._value
    if type(value) in (list, tuple):
        return type(value)(unwrap(v) for v in value)
    if type(value) is dict:
        return {k: unwrap(v) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(unwrap(value.start), unwrap(value.stop), unwrap(value.step))
    return value


class Counted:
    """Stands in for an ndarray or NumPy scalar and counts what is done to it."""

    __array_priority__ = 1000

    def __init__(self, value: Any, counter: _Counter) -> None:
        object.__setattr__(self, "_value", value)
        object.__setattr__(self, "_counter", counter)

    def __getattr__(self, name: str) -> Any:
        value = self._value
        if name in STATIC_ATTRIBUTES:
            return getattr(value, name)
        if name in ATTRIBUTE_OPS:
            return self._counter.apply(getattr, value, name)
        method = getattr(value, name)
        if not callable(method):
            raise AttributeError(f"op_counter: attribute {name!r} is not modelled")
        return lambda *args, **kwargs: self._counter.apply(getattr(value, name), *args, **kwargs)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return self._counter.apply(getattr(ufunc, method), *inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return self._counter.apply(func, *args, **kwargs)

    def __len__(self) -> int:
        return len(self._value)

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self._value)):
            yield self[i]

    def __getitem__(self, index: Any) -> Any:
        return self._counter.apply(operator.getitem, self._value, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        self._counter.apply(operator.setitem, self._value, index, value)

    def __bool__(self) -> bool:
        raise DataDependent("truth value of an array")

    def __float__(self) -> float:
        raise DataDependent("float() of an array")

    def __int__(self) -> int:
        raise DataDependent("int() of an array")

    def __index__(self) -> int:
        raise DataDependent("an array used as an index")

    __hash__ = None  # type: ignore[assignment]


def _binary(fn: Callable[[Any, Any], Any], reflected: bool = False) -> Callable[[Counted, Any], Any]:
    if reflected:
        return lambda self, other: self._counter.apply(fn, other, self._value)
    return lambda self, other: self._counter.apply(fn, self._value, other)


def _inplace(fn: Callable[[Any, Any], Any]) -> Callable[[Counted, Any], Any]:
    def method(self: Counted, other: Any) -> Any:
        result = self._counter.apply(fn, self._value, other)
        object.__setattr__(self, "_value", result._value if isinstance(result, Counted) else result)
        return self
    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
              "lshift", "rshift"):
    _fn = getattr(operator, _name + "_" if _name in ("and", "or") else _name)
    setattr(Counted, f"__{_name}__", _binary(_fn))
    setattr(Counted, f"__r{_name}__", _binary(_fn, reflected=True))
    setattr(Counted, f"__i{_name}__", _inplace(getattr(operator, f"i{_name}")))
for _name in ("lt", "le", "eq", "ne", "gt", "ge"):
    setattr(Counted, f"__{_name}__", _binary(getattr(operator, _name)))
for _name in ("neg", "pos", "abs", "invert"):
    setattr(Counted, f"__{_name}__", (lambda fn: lambda self: self._counter.apply(fn, self._value))(
        getattr(operator, _name)))


def wrap_arguments(value: Any, counter: _Counter) -> Any:
    """Arrays anywhere in the arguments (containers, namedtuples, dataclasses, plain objects) become Counted."""
    if isinstance(value, np.ndarray):
        return Counted(value, counter)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(wrap_arguments(v, counter) for v in value))
    if type(value) in (list, tuple):
        return type(value)(wrap_arguments(v, counter) for v in value)
    if type(value) is dict:
        return {k: wrap_arguments(v, counter) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: wrap_arguments(getattr(value, f.name), counter)
                                             for f in dataclasses.fields(value)})
    if hasattr(value, "__dict__") and not callable(value) and not isinstance(value, type) \
            and type(value).__module__.startswith("tests.corpus"):
        clone = object.__new__(type(value))
        clone.__dict__.update({k: wrap_arguments(v, counter) for k, v in vars(value).items()})
        return clone
    return value


@contextlib.contextmanager
def _counted_creation(counter: _Counter) -> Iterator[None]:
    originals: Dict[str, Any] = {name: getattr(np, name) for name in CREATION_FUNCTIONS}

    def counted(fn: Callable[..., Any]) -> Callable[..., Any]:
        def creation(*args: Any, **kwargs: Any) -> Any:
            if counter.depth > 0:
                return fn(*args, **kwargs)
            return counter.apply(fn, *args, **kwargs)
        return creation

    try:
        for name, fn in originals.items():
            setattr(np, name, counted(fn))
        yield
    finally:
        for name, fn in originals.items():
            setattr(np, name, fn)


def count_ops(fn: Callable[..., Any], args: Any, kwargs: Any) -> int:
    """NumPy operations ``fn(*args, **kwargs)`` performs on arrays (raises DataDependent where it reads values)."""
    counter = _Counter()
    wrapped_args = wrap_arguments(args, counter)
    wrapped_kwargs = wrap_arguments(kwargs, counter)
    with _counted_creation(counter):
        fn(*wrapped_args, **wrapped_kwargs)
    return counter.count
