"""Lookup tables of the allowlist, built once at import."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from compiler.ops import (catalog, creation, elementwise, inplace, linalg, methods, operators,
                         queries, reductions, rules, shape)
from compiler.ops.opinfo import OpInfo

# Attributes the tracer answers from TensorMeta, without a graph node.
ARRAY_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size", "itemsize", "nbytes"})

# NumPy spellings that are another name for a canonical entry (the same object
# on some releases, a thin wrapper on others).  They are recorded under the
# canonical name so the graph text does not depend on the NumPy release.
ALIASES = (
    ("abs", "absolute"), ("mod", "remainder"), ("true_divide", "divide"), ("conj", "conjugate"),
    ("bitwise_not", "invert"), ("amax", "max"), ("amin", "min"), ("around", "round"),
    ("round_", "round"), ("acos", "arccos"), ("asin", "arcsin"), ("atan", "arctan"),
    ("atan2", "arctan2"), ("acosh", "arccosh"), ("asinh", "arcsinh"), ("atanh", "arctanh"),
    ("pow", "power"), ("bitwise_left_shift", "left_shift"),
    ("bitwise_right_shift", "right_shift"), ("bitwise_invert", "invert"),
    ("concat", "concatenate"), ("permute_dims", "transpose"),
    # NumPy 1.x spellings, deprecated from 1.25 (a call that warns is refused at trace time)
    ("product", "prod"), ("cumproduct", "cumprod"), ("alltrue", "all"), ("sometrue", "any"),
)

# id(fn) -> (fn, OpInfo); fn is kept so the id cannot be reused.
_FUNCTIONS: Dict[int, Tuple[object, OpInfo]] = {}
_METHODS: Dict[str, OpInfo] = {}
_OPERATORS: Dict[str, OpInfo] = {}


def _register_function(fn: object, op: OpInfo) -> None:
    _FUNCTIONS.setdefault(id(fn), (fn, op))


def _build() -> None:
    by_name: Dict[str, OpInfo] = {}
    for family in (elementwise, reductions, shape, creation, linalg):
        for op in family.ops():
            by_name[op.name] = op
    # The generic families come last and never replace a hand-written entry (by name, or
    # by identity: NumPy 2's np.linalg.tensordot is np.tensordot).
    for family in (catalog, queries):
        for op in family.ops():
            by_name.setdefault(op.name, op)
    for alias, canonical in ALIASES:
        if f"numpy.{alias}" in by_name:  # both spellings are entries (np.round and np.around)
            alias_op = by_name.pop(f"numpy.{alias}")
            by_name[f"numpy.{alias}"] = _renamed(alias_op, f"numpy.{canonical}")
    for op in by_name.values():
        _register_function(op.fn, op)
    for fn, op in inplace.entries():  # the op runs a wrapper returning the written array
        _register_function(fn, op)
    for alias, canonical in ALIASES:
        fn = getattr(np, alias, None)
        target = by_name.get(f"numpy.{canonical}")
        if fn is not None and target is not None:
            _register_function(fn, _renamed(target, target.name, fn))
    for op in methods.ops():
        _METHODS[op.method] = op
    for op in operators.ops():
        _OPERATORS[op.name.split(".", 1)[1]] = op


def _renamed(op: OpInfo, name: str, fn: Optional[Callable] = None) -> OpInfo:
    fn = op.fn if fn is None else fn
    return OpInfo(name, fn, op.kind, op.rule, ufunc=fn if isinstance(fn, np.ufunc) and op.ufunc
                  else None, source=op.source, method=op.method, inplace=op.inplace,
                  lowerable=op.lowerable, doc=op.doc)


def lookup_function(fn: object) -> Optional[OpInfo]:
    """The allow-listed op for a NumPy function (or a user function registered
    with allow_in_graph), by identity; None if it is not allow-listed."""
    entry = _FUNCTIONS.get(id(fn))
    return entry[1] if entry is not None and entry[0] is fn else None


def lookup_method(name: str) -> Optional[OpInfo]:
    """The op for ``ndarray.<name>`` (a method, or one of the attributes T, real, imag)."""
    return _METHODS.get(name)


def lookup_attribute(name: str) -> Optional[OpInfo]:
    """The op computing attribute ``name`` ("T", "real", "imag"), else None."""
    op = _METHODS.get(name)
    return op if op is not None and op.source.startswith("attr:") else None


def lookup_operator(name: str) -> OpInfo:
    """The op of a Python operator by its ``operator`` module name ("add",
    "iadd", "getitem", "neg", ...).  Raises KeyError naming the accepted names."""
    try:
        return _OPERATORS[name]
    except KeyError:
        raise KeyError(f"no array operator {name!r}; accepted: {', '.join(sorted(_OPERATORS))}") \
            from None


def all_ops() -> List[OpInfo]:
    """Every registered op, functions first (canonical entries only), then methods and operators."""
    seen: Dict[str, OpInfo] = {}
    for fn, op in _FUNCTIONS.values():
        seen.setdefault(op.name, op)
    return list(seen.values()) + list(_METHODS.values()) + list(_OPERATORS.values())


def allow_in_graph(fn: Callable, name: Optional[str] = None) -> OpInfo:
    """Register a user function as a graph op.  Its metadata is inferred by
    running it on zero-filled stand-ins of the full shape (so it should be
    cheap and free of side effects); it must return an array or NumPy scalar
    (or a tuple of them).  The graph names it ``<module>.<qualname>``."""
    if not callable(fn):
        raise TypeError(f"allow_in_graph expects a callable, got {type(fn).__name__}")
    existing = lookup_function(fn)
    if existing is not None:
        return existing
    target = name or f"{getattr(fn, '__module__', None) or 'user'}." \
                     f"{getattr(fn, '__qualname__', None) or getattr(fn, '__name__', 'function')}"
    op = OpInfo(target, fn, "other", rules.full_eval_rule,
                doc="user function registered with allow_in_graph")
    _register_function(fn, op)
    return op


def remove_function(fn: Callable) -> None:
    """Forget a function registered with allow_in_graph (for tests and compiler.reset)."""
    entry = _FUNCTIONS.get(id(fn))
    if entry is not None and entry[0] is fn and entry[1].doc.startswith("user function"):
        del _FUNCTIONS[id(fn)]


_build()
