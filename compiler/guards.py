"""Guards: checks on a frame's inputs that make a cache entry valid.

Each guard is one Python boolean expression over the sources of the values
the trace depended on, with a name that says what it checks
(``L['x'].dtype == float64``).  All guards of a cache entry are compiled
into one function together with the graph call (compiler.entry_codegen);
on a miss, ``first_failing`` evaluates them one by one so the failing guard
can be named (the recompile reason).
"""
from __future__ import annotations

import builtins
import math
import struct
import sys
import types
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .generated_code import compile_generated, unique_filename
from .sources import LocalSource, Source
from .symbolic_shapes import MIN_DYNAMIC_SIZE


class Namespace:
    """Objects the generated code refers to by name (constants, types, graphs)."""

    def __init__(self) -> None:
        self.values: Dict[str, Any] = {}
        self._by_id: Dict[int, str] = {}
        self.version = 0  # bumped by every write: scopes built from the values know they are stale

    def const(self, obj: Any, hint: str = "k") -> str:
        key = id(obj)
        name = self._by_id.get(key)
        if name is None:
            name = f"_{hint}{len(self.values)}"
            self.values[name] = obj
            self.version += 1
            self._by_id[key] = name
        return name

    def bind(self, name: str, obj: Any) -> str:
        self.values[name] = obj
        self.version += 1
        return name


@dataclass(frozen=True)
class Guard:
    name: str      # readable, stable: the recompile reason when it fails
    code: str      # a Python expression over the entry's parameters and namespace
    # For the cheap checks on a parameter that cache-entry dispatch keys on
    # (compiler.guard_dispatch): (parameter, "type" | "dtype" | "shape", expected value).
    key: Optional[Tuple[str, str, Any]] = None
    # The source (by name) of the Python int or float whose value this guard pins: when it
    # fails, the recompile makes that source a dynamic scalar (compiler.variables.scalars).
    pins_scalar: Optional[str] = None


# Objects that live as long as the interpreter: identity guards hold them (a C function only
# when unbound or bound to sys or builtins: see held_weakly).
_IMMORTAL = (types.BuiltinFunctionType, np.ufunc)


def held_weakly(obj: Any) -> bool:
    """Whether a guard on ``obj`` holds it through a weak reference: everything the program can
    let go of and Python can refer to weakly.  ufuncs, the sys and builtins modules and their
    functions live as long as the interpreter (held); every other module, and a C function bound
    to one, may die; classes and functions defined at module level as long as their module (held
    strongly: their guards are on every call's path, and a dereference costs); classes and
    functions made at run time (a nested def, a lambda, a class built in a function) die
    like any object."""
    tp = type(obj)  # asked of the type: isinstance() would read obj.__class__ (user code)
    if issubclass(tp, types.BuiltinFunctionType):
        # A C function lives as long as what it is bound to: a module or an object, which
        # may die (CPython's test_struct: import_fresh_module("_struct").calcsize must not
        # keep its module alive), or nothing, sys or builtins, which do not.
        owner = obj.__self__
        if owner is None or owner is builtins or owner is sys:
            return False
    elif issubclass(tp, _IMMORTAL):
        return False
    if obj is builtins or obj is sys:
        return False  # the interpreter's own: every other module can die (a fresh import, a
        # module made with ModuleType(), one removed from sys.modules and let go)
    if issubclass(tp, (type, types.FunctionType)):
        qualname = getattr(obj, "__qualname__", "")
        if "<locals>" not in qualname and "<lambda>" not in qualname:
            return False
    try:
        weakref.ref(obj)
    except TypeError:  # not weakly referenceable: the cache holds it
        return False
    return True


def _has_zero_part(value: Any) -> bool:
    if isinstance(value, (float, np.floating)):
        return value == 0
    if isinstance(value, (complex, np.complexfloating)):
        return value.real == 0 or value.imag == 0
    return False


def _has_nan_part(value: Any) -> bool:
    if isinstance(value, (float, np.floating)):
        return value != value
    if isinstance(value, (complex, np.complexfloating)):
        return value.real != value.real or value.imag != value.imag
    return False


def _value_bits(value: Any) -> bytes:
    """The bytes of a float, complex or NumPy scalar (sign of zero and NaN payload included)."""
    if isinstance(value, np.generic):
        return np.asarray(value).tobytes()
    if isinstance(value, complex):
        return struct.pack("<dd", value.real, value.imag)
    return struct.pack("<d", value)


def _zero_signs(value: Any) -> tuple:
    """The signs (copysign of 1.0) of a float's or a complex number's parts."""
    if isinstance(value, (complex, np.complexfloating)):
        return (math.copysign(1.0, value.real), math.copysign(1.0, value.imag))
    return (math.copysign(1.0, value),)


def short_repr(value: Any) -> str:
    """At most 60 characters of ``repr(value)``, computed in time bounded by that, not by the
    value (a guard on a 10 MB string argument must not cost a 10 MB repr per compile; the
    repr of an int past 4,300 digits raises)."""
    if type(value) in (str, bytes) and len(value) > 60:
        return repr(value[:57])[:57] + f"... ({len(value)} {'characters' if type(value) is str else 'bytes'})"
    if type(value) is int and value.bit_length() > 190:
        return f"<int of {value.bit_length()} bits>"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type_name(tp: type) -> str:
    module = getattr(tp, "__module__", "")
    return tp.__qualname__ if module in ("builtins", "") else f"{module}.{tp.__qualname__}"


# Types whose values are compared with == in a CONSTANT_MATCH guard.
_EQ_TYPES = (int, float, complex, str, bytes, np.generic)


class GuardSet:
    """The guards collected while tracing one frame, in the order they were made
    (a value's type guard always precedes guards on its attributes)."""

    def __init__(self, ns: Namespace) -> None:
        self.ns = ns
        self._guards: List[Guard] = []
        self._seen: set = set()

    def __len__(self) -> int:
        return len(self._guards)

    @property
    def guards(self) -> List[Guard]:
        return list(self._guards)

    def add(self, name: str, code: str, key: Optional[Tuple[str, str, Any]] = None,
            pins_scalar: Optional[str] = None) -> None:
        if code in self._seen:
            return
        self._seen.add(code)
        self._guards.append(Guard(name, code, key, pins_scalar))

    def _e(self, source: Source) -> str:
        return source.expr(self.ns.const)

    # -- guard kinds ------------------------------------------------------
    def type_match(self, source: Source, tp: type) -> None:
        weakly = held_weakly(tp)
        held = f"{self.ns.const(weakref.ref(tp), 'w')}()" if weakly else self.ns.const(tp, 't')
        self.add(f"type({source.name()}) is {_type_name(tp)}", f"type({self._e(source)}) is {held}",
                 None if weakly else _param_key(source, "type", tp))

    def id_match(self, source: Source, obj: Any) -> None:
        label = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
        if not held_weakly(obj):
            self.add(f"{source.name()} is {label}", f"{self._e(source)} is {self.ns.const(obj, 'i')}")
            return
        # Held weakly: the cache must not keep alive an object the program let go (its
        # finalizer, weak references); once it is gone the guard fails (a new object is not it).
        self.add(f"{source.name()} is {label}", f"{self._e(source)} is {self.ns.const(weakref.ref(obj), 'w')}()")

    def constant_match(self, source: Source, value: Any, why: str = "") -> None:
        """Value equality for immutable constants (types checked first: 1 == 1.0 == True).
        ``why``: appended to the value guard's name (why a dynamic scalar was specialized)."""
        if value is None or value is Ellipsis or value is NotImplemented or isinstance(value, bool):
            self.add(f"{source.name()} is {value!r}", f"{self._e(source)} is {self.ns.const(value, 'c')}")
            return
        self.type_match(source, type(value))
        # A Python int or float pinned by value becomes a graph input if the value changes.
        pins = source.name() if type(value) in (int, float) else None
        if _has_nan_part(value):
            # NaN != NaN, and NaNs differ in sign and payload: the value is guarded bit for bit.
            key = _value_bits(value)
            self.add(f"{source.name()} is {short_repr(value)} (bit for bit){why}",
                     f"{self.ns.const(_value_bits, 'f')}({self._e(source)}) == {key!r}", pins_scalar=pins)
            return
        self.add(f"{source.name()} == {short_repr(value)}{why}",
                 f"{self._e(source)} == {self._compared_with(value)}", pins_scalar=pins)
        if _has_zero_part(value):
            # 0.0 == -0.0: the sign of a zero is guarded too (1/x, copysign, atan2 see it).
            key = _zero_signs(value)
            self.add(f"signs of zeros in {source.name()} are {key}",
                     f"{self.ns.const(_zero_signs, 'f')}({self._e(source)}) == {key!r}", pins_scalar=pins)

    def scalar_class_match(self, source: Source, dtype: np.dtype, classify: Callable[[Any], Any]) -> None:
        """Under NumPy 1.x value-based casting the dtype a Python scalar takes when it meets
        arrays is decided by its value's class (``classify``: numpy.min_scalar_type, and
        whether a non-negative int fits the signed type of its size): a dynamic scalar is
        guarded on it."""
        self.add(f"numpy.min_scalar_type({source.name()}) == {dtype}"
                 f"{' and it fits the signed type of that size' if dtype.kind == 'u' else ''}"
                 " (NumPy's value-based casting)",
                 f"{self.ns.const(classify, 'f')}({self._e(source)}) == {self.ns.const(dtype, 'd')}")

    def _compared_with(self, value: Any) -> str:
        """What a value guard compares with.  A str, bytes or int is spelled as a literal: the
        entry's code then holds an equal object of its own, not the program's (whose
        reference count sys.getrefcount shows, and whose lifetime the cache must not extend).
        Other constants are held as objects (floats keep their bits; a repr is never trusted)."""
        # (the length is checked first: a repr costs as much as the value is long)
        if type(value) in (str, bytes) and len(value) <= _LITERAL_LIMIT or \
                type(value) is int and value.bit_length() <= _LITERAL_LIMIT * 3:
            literal = repr(value)
            if len(literal) <= _LITERAL_LIMIT:
                return literal
        return self.ns.const(value, "c")

    def no_weak_references(self, source: Source) -> None:
        """The object has no weak reference (so no callback can observe when it goes)."""
        count = self.ns.const(weakref.getweakrefcount, "f")
        self.add(f"{source.name()} has no weak references", f"{count}({self._e(source)}) == 0")

    def length_match(self, source: Source, length: int) -> None:
        self.add(f"len({source.name()}) == {length}", f"len({self._e(source)}) == {length}")

    def dict_keys_match(self, source: Source, keys: Sequence[Any]) -> None:
        keys = list(keys)
        self.add(f"list({source.name()}.keys()) == {short_repr(keys)}",
                 f"list({self._e(source)}) == {self.ns.const(keys, 'c')}")

    def array_match(self, source: Source, value: np.ndarray, layout: str,
                    shape: Optional[Sequence[Any]] = None) -> None:
        """type, dtype, shape and memory layout of an ndarray (Dynamo's TENSOR_MATCH, split
        into parts so that a recompile reason says which one changed).  ``shape``: the
        traced shape where some dimensions are dynamic (SymInts): those are guarded to be
        at least 2, the others equal, and no dispatch key is given (any size may hit)."""
        e = self._e(source)
        self.type_match(source, type(value))
        dt = value.dtype
        dname = self.ns.const(dt, "d")
        # Builtin dtypes are singletons, so `is` answers almost always; == covers the rest.
        self.add(f"{source.name()}.dtype == {dt}", f"({e}.dtype is {dname} or {e}.dtype == {dname})",
                 _param_key(source, "dtype", dt))
        if shape is not None and any(not isinstance(d, int) for d in shape):
            self._dynamic_shape_match(source, e, shape)
        else:
            self.add(f"{source.name()}.shape == {value.shape}", f"{e}.shape == {value.shape!r}",
                     _param_key(source, "shape", value.shape))
        if layout == "C":
            self.add(f"{source.name()} is C-contiguous", f"{e}.flags.c_contiguous")
        elif layout == "F":
            self.add(f"{source.name()} is F-contiguous", f"{e}.flags.f_contiguous")
        else:
            self.add(f"{source.name()}.strides == {value.strides}", f"{e}.strides == {value.strides!r}")

    def _dynamic_shape_match(self, source: Source, e: str, shape: Sequence[Any]) -> None:
        """One guard for rank and sizes: a symbol's size >= 2 (0 and 1 are specialized),
        the static sizes equal."""
        parts = [f"len({e}.shape) == {len(shape)}"]
        legend = []
        for index, dim in enumerate(shape):
            if isinstance(dim, int):
                parts.append(f"{e}.shape[{index}] == {dim}")
            else:
                parts.append(f"{e}.shape[{index}] >= {MIN_DYNAMIC_SIZE}")
                legend.append(f"{dim} >= {MIN_DYNAMIC_SIZE}")
        text = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
        self.add(f"{source.name()}.shape == ({text}) with {', '.join(legend)}", " and ".join(parts))


# Longer str/bytes/int values are compared with a held object rather than spelled out in the
# entry's source.
_LITERAL_LIMIT = 200


def _param_key(source: Source, part: str, value: Any) -> Optional[Tuple[str, str, Any]]:
    """The dispatch key of a check on a parameter of the frame itself (not on what it holds)."""
    if isinstance(source, LocalSource):
        return (source.expr(str), part, value)
    return None


def compile_check(guard: Guard, params: Sequence[str], ns: Namespace):
    """A function (*params) -> bool for one guard, for naming the failing one."""
    src = f"def _check({', '.join(params)}):\n    return bool({guard.code})\n"
    scope = dict(ns.values)
    exec(compile_generated(src, unique_filename(f"guard check {guard.name}")), scope)
    return scope["_check"]


def first_failing(guards: Sequence[Guard], params: Sequence[str], ns: Namespace,
                  args: Sequence[Any]) -> Optional[Guard]:
    """The first guard that does not hold for ``args`` (an exception counts as failing)."""
    for guard in guards:
        try:
            ok = compile_check(guard, params, ns)(*args)
        except Exception:
            ok = False
        if not ok:
            return guard
    return None
