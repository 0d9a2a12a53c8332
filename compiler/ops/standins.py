"""Evaluating an op on stand-in data to learn its result dtype and kind exactly.

Why evaluate at all: the result dtype of a NumPy call depends on NumPy's
promotion rules, which changed in NumPy 2 (NEP 50: Python scalars are "weak",
0-d arrays no longer cast by value).  Asking NumPy itself on tiny stand-ins is
the one method that is exact on every release.

Two kinds of stand-in:

* *miniature*: ``np.zeros`` with every dimension clipped to 1 (0 stays 0), so
  the call costs nothing; it gives dtype, kind (array vs NumPy scalar) and
  ndim, while shapes come from rules (``shapes.py``).
* *zero-strided*: the full shape over one element (``np.broadcast_to``), so a
  call that returns a view (reshape, transpose, indexing) gives the exact
  shape too without touching memory.  Only for ops that never copy.

NumPy 1.x casts by *value* when 0-d operands meet n-d ones
(``int8_array + np.array(300)`` is int16).  There the dtype is data-dependent;
``evaluate`` tries extreme values for the 0-d operands and raises
``Unsupported`` when they disagree.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import numpy as np

from compiler import symbolic_views, trace_time
from compiler.exc import Unsupported
from compiler.graph import TensorMeta
from compiler.graph_text import python_scalar_type


def _probe_value_based_casting() -> bool:
    small = np.zeros(1, np.int8)
    return np.result_type(small, np.array(1, np.int64)) == np.int8


# True on NumPy < 2 (legacy promotion), False under NEP 50.
VALUE_BASED_CASTING: bool = _probe_value_based_casting()


def map_metas(value: Any, fn: Callable[[TensorMeta], Any]) -> Any:
    """``value`` (a nesting of tuples/lists/dicts/slices) with every TensorMeta
    replaced by ``fn(meta)``."""
    if isinstance(value, TensorMeta):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(map_metas(v, fn) for v in value)
    if isinstance(value, list):
        return [map_metas(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_metas(v, fn) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(map_metas(value.start, fn), map_metas(value.stop, fn), map_metas(value.step, fn))
    return value


def metas_in(value: Any) -> List[TensorMeta]:
    found: List[TensorMeta] = []
    map_metas(value, lambda m: found.append(m))
    return found


def mini_shape(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    # Plain ints also for dynamic sizes (a SymInt compares, never lands in the miniature).
    return tuple(0 if d == 0 else 1 for d in shape)


def python_stand_in(meta: TensorMeta) -> Any:
    """A Python scalar standing for a "python" graph input (a dynamic int or float): under
    NEP 50 any value of the type gives the same result dtype; under value-based casting any
    value of the class ``meta.dtype`` names does (compiler.variables.scalars.value_class: the
    input is guarded on it), and the extreme of that class is one."""
    dtype = meta.dtype
    tp = python_scalar_type(dtype)
    if not VALUE_BASED_CASTING:
        return tp(0)
    if dtype.kind == "i":
        return int(np.iinfo(dtype).min)
    if dtype.kind == "u":
        # An unsigned class holds only values that fit the signed type of the same size
        # (compiler.variables.scalars.value_class): its largest is that type's maximum.
        return int(np.iinfo(np.dtype(f"i{dtype.itemsize}")).max)
    return tp(np.finfo(dtype).max)


def mini(meta: TensorMeta, value: Any = 0) -> Any:
    """A writable miniature of ``meta``: same dtype, ndim and kind, size <= 1."""
    if meta.kind == "python":
        return python_stand_in(meta)
    if meta.kind == "scalar":
        return meta.dtype.type(value)
    out = np.zeros(mini_shape(meta.shape), meta.dtype)
    if value != 0 and out.size:
        out[...] = value
    return out


def zero_strided(meta: TensorMeta) -> Any:
    """A read-only stand-in with the full shape over a single element."""
    if meta.kind == "python":
        return python_stand_in(meta)
    if meta.kind == "scalar":
        return meta.dtype.type(0)
    return np.broadcast_to(np.zeros((), meta.dtype), meta.shape)


def meta_of_result(result: Any, what: str) -> Any:
    if isinstance(result, tuple):
        return tuple(meta_of_result(r, what) for r in result)
    if isinstance(result, np.ndarray):
        return TensorMeta(result.shape, result.dtype, "array", "A")
    if isinstance(result, np.generic):
        return TensorMeta((), result.dtype, "scalar", "A")
    raise Unsupported(f"{what} returns a {type(result).__name__}, not an array; "
                      "it cannot be a graph value")


def call_quietly(fn: Callable, args: tuple, kwargs: Dict[str, Any]) -> Any:
    """fn(*args, **kwargs) with floating-point errors ignored (stand-in values are zeros:
    what they signal says nothing about the real data) and any Python warning raised as
    compiler.trace_time.WarningTrapped: a warning that depends only on metadata (a
    ComplexWarning from a cast, "Mean of empty slice") would be issued by the graph at run
    time too, where it cannot be put back in its place, so such an op is not captured."""
    return trace_time.call_quietly(fn, args, kwargs, fp="ignore")


def _extreme_values(dtype: np.dtype) -> List[Any]:
    if dtype.kind == "b":
        return [True]
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        return [int(info.min), int(info.max)]
    if dtype.kind == "u":
        return [int(np.iinfo(dtype).max)]
    if dtype.kind in "fc":
        return [float(np.finfo(dtype).max), -float(np.finfo(dtype).max)]
    return []


# (fn, miniature key of the arguments) -> metadata: the result of a miniature
# evaluation depends on nothing else, and tracing asks the same questions
# over and over (x + y on float64 arrays).
_CACHE: Dict[Any, Any] = {}
_CACHE_LIMIT = 4096


class _Uncacheable(Exception):
    pass


def _key(value: Any) -> Any:
    if isinstance(value, TensorMeta):
        return ("meta", mini_shape(value.shape), value.dtype.str, value.kind)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__,) + tuple(_key(v) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple((k, _key(value[k])) for k in sorted(value))
    if isinstance(value, slice):
        return ("slice", _key(value.start), _key(value.stop), _key(value.step))
    if value is None or isinstance(value, (bool, int, float, complex, str, np.generic, np.dtype, type)):
        return (type(value), value)
    raise _Uncacheable


def evaluate(fn: Callable, args: tuple, kwargs: Dict[str, Any], what: str) -> Any:
    """The metadata (dtype, kind, ndim; shape of the miniature) of ``fn`` on
    miniature stand-ins of the TensorMeta arguments."""
    try:
        key: Any = (id(fn), fn, _key(args), _key(kwargs))
        cached = _CACHE.get(key)
    except (_Uncacheable, TypeError):  # unhashable constants
        key, cached = None, None
    if cached is not None:
        return cached
    result = meta_of_result(call_quietly(fn, map_metas(args, mini), map_metas(kwargs, mini)), what)
    if VALUE_BASED_CASTING:
        _check_value_independent(fn, args, kwargs, what, result)
    if key is not None and len(_CACHE) < _CACHE_LIMIT:
        _CACHE[key] = result
    return result


def _check_value_independent(fn: Callable, args: tuple, kwargs: Dict[str, Any], what: str,
                             expected: Any) -> None:
    metas = metas_in((args, kwargs))
    zero_d = [m for m in metas if m.shape == ()]
    if not zero_d or all(m.shape == () for m in metas):
        return  # value-based casting needs 0-d operands mixed with n-d ones
    for target in {id(m): m for m in zero_d}.values():
        for value in _extreme_values(target.dtype):
            def stand_in(meta: TensorMeta, value=value, target=target) -> Any:
                return mini(meta, value) if meta is target else mini(meta)
            try:
                got = meta_of_result(call_quietly(fn, map_metas(args, stand_in),
                                                  map_metas(kwargs, stand_in)), what)
            except Exception:  # the extreme value overflowed: dtype depends on data
                got = None
            if _dtypes(got) != _dtypes(expected):
                raise Unsupported(
                    f"{what}: the result dtype depends on the value of a 0-d operand "
                    f"({target.dtype.name}) under NumPy {np.__version__}'s value-based casting")


def _dtypes(meta: Any) -> Any:
    if isinstance(meta, tuple):
        return tuple(_dtypes(m) for m in meta)
    return None if meta is None else meta.dtype


def evaluate_view(fn: Callable, args: tuple, kwargs: Dict[str, Any], what: str) -> Any:
    """Exact metadata of an op that returns a view, from zero-strided stand-ins."""
    if symbolic_views.has_symbolic_metas(metas_in((args, kwargs))):
        return symbolic_views.evaluate_view(_evaluate_view_exact, fn, args, kwargs, what, map_metas)
    return _evaluate_view_exact(fn, args, kwargs, what)


def _evaluate_view_exact(fn: Callable, args: tuple, kwargs: Dict[str, Any], what: str) -> Any:
    result = call_quietly(fn, map_metas(args, zero_strided), map_metas(kwargs, zero_strided))
    return meta_of_result(result, what)


def evaluate_full(fn: Callable, args: tuple, kwargs: Dict[str, Any], what: str) -> Any:
    """Exact metadata from a real run on ``np.zeros`` stand-ins of the full
    shape.  Costs what the op costs on that much data: used only for ops with
    no practical rule (documented per op) and for ``allow_in_graph``."""
    def full(meta: TensorMeta) -> Any:
        if meta.kind == "python":
            return python_stand_in(meta)
        if meta.kind == "scalar":
            return meta.dtype.type(0)
        return np.zeros(meta.shape, meta.dtype)
    return meta_of_result(call_quietly(fn, map_metas(args, full), map_metas(kwargs, full)), what)
