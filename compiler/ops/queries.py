"""Functions of metadata only, answered at trace time as constants: ``np.shape(x)``,
``np.ndim``, ``np.size``, ``np.result_type``, ``np.can_cast``, ``np.iscomplexobj``,
``np.einsum_path`` (a contraction order chosen from the operands' shapes) ...

Pure functions of Python values (``np.binary_repr``, ``np.format_float_positional``,
``np.busday_count`` of date strings, ``np.datetime_data`` of a dtype, ``np.safe_eval`` of
a literal, ``np.get_include()`` of nothing) are here too: on constants they are folded like any NumPy call on constants; on values
computed in the graph their answer depends on the values, which the check below refuses.

Their answer depends on the arguments' shapes, dtypes and kinds (NumPy scalar or array),
which the input guards fix, so a constant is exact for every call the cache entry
serves.  They are computed by calling NumPy on zero-strided stand-ins (the full shape
over one element).  Under NumPy 1.x value-based casting, ``result_type``,
``can_cast`` and ``min_scalar_type`` look at the *values* of 0-d operands: each
answer is checked against stand-ins holding the extreme values of every operand's
dtype, and refused when they differ.
"""
from __future__ import annotations

from typing import Any, List

import numpy as np

from compiler.exc import Unsupported
from compiler.graph import TensorMeta
from compiler.ops import standins
from compiler.ops.opinfo import OpInfo
from compiler.ops.standins import map_metas, metas_in
from compiler.trace_time import WarningTrapped

QUERY_NAMES = ("shape", "ndim", "size", "iscomplexobj", "isrealobj", "isscalar", "iterable",
               "result_type", "can_cast", "promote_types", "min_scalar_type", "common_type",
               "mintypecode", "issubdtype", "isdtype", "typename", "broadcast_shapes",
               "issctype", "obj2sctype", "sctype2char", "maximum_sctype", "issubsctype",
               "issubclass_", "find_common_type", "einsum_path", "binary_repr", "base_repr",
               "format_float_positional", "format_float_scientific",
               # pure functions of Python values and dtypes: folded on constants (datetime
               # arrays are not traced, so on graph values they are refused)
               "datetime_data", "busday_count", "busday_offset", "is_busday", "get_include",
               "safe_eval")

# (NumPy scalars: np.busday_count's np.int64, np.busday_offset's np.datetime64)
_CONSTANT_TYPES = (bool, int, float, str, np.dtype, type(None), np.generic)


def _filled(meta: TensorMeta, value: Any) -> Any:
    if meta.kind == "scalar":
        return meta.dtype.type(value)
    return np.broadcast_to(np.array(value, meta.dtype), meta.shape)


def _answer(op: OpInfo, args: tuple, kwargs: dict, target: Any, value: Any) -> Any:
    def stand_in(meta: TensorMeta) -> Any:
        return _filled(meta, value if meta is target else 0)
    return standins.call_quietly(op.fn, map_metas(args, stand_in), map_metas(kwargs, stand_in))


def _is_constant(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_is_constant(v) for v in value)
    return isinstance(value, _CONSTANT_TYPES) or (isinstance(value, type)
                                                  and issubclass(value, np.generic))


def query_rule(op: OpInfo, args: tuple, kwargs: dict) -> Any:
    """The constant answer (not a TensorMeta: the caller folds it into the trace)."""
    answer = _answer(op, args, kwargs, None, 0)
    if isinstance(answer, np.bool_):
        answer = bool(answer)
    if not _is_constant(answer):
        raise Unsupported(f"{op.name} returned a {type(answer).__name__}, not a constant")
    for target in {id(m): m for m in metas_in((args, kwargs))}.values():
        for value in standins._extreme_values(target.dtype):
            try:
                other = _answer(op, args, kwargs, target, value)
            except Exception:
                other = None
            if other != answer:
                raise Unsupported(f"{op.name}: the answer depends on the value of a "
                                  f"{target.dtype.name} operand (data-dependent under NumPy "
                                  f"{np.__version__}); it runs natively")
    return answer


# name -> a call that warns where NumPy deprecates the function (np.typename from 2.5, the
# 1.x spellings np.trapz and np.in1d on the 2.x releases that still have them): such a
# function is left out of the allowlist (every call would be refused anyway)
_DEPRECATION_PROBES = {"typename": ("d",), "trapz": (np.zeros(2),), "in1d": (np.zeros(1), np.zeros(1)),
                       "safe_eval": ("1",)}


def _deprecated_here(name: str) -> bool:
    probe = _DEPRECATION_PROBES.get(name)
    if probe is None or getattr(np, name, None) is None:
        return False
    try:  # trapped without warnings.catch_warnings, which would reset warning registries
        standins.call_quietly(getattr(np, name), probe, {})
    except WarningTrapped:
        return True
    return False


# Left out on this NumPy, with the reason (compiler.ops.coverage reports it).
DEPRECATED_HERE = {name: f"deprecated in NumPy {np.__version__} (it warns)"
                   for name in _DEPRECATION_PROBES if _deprecated_here(name)}


def ops() -> List[OpInfo]:
    return [OpInfo(f"numpy.{name}", getattr(np, name), "query", query_rule,
                   source=f"numpy.{name}")
            for name in QUERY_NAMES
            if callable(getattr(np, name, None)) and name not in DEPRECATED_HERE]
