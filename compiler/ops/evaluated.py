"""Rules that learn an op's result metadata by running NumPy on stand-ins of the full shape.

The breadth of the allowlist (compiler.ops.catalog) rests on one fact: for most NumPy
functions the result's shape, dtype and container (array, tuple, list, named tuple)
depend only on the arguments' shapes and dtypes and on the constant arguments, never on
the values.  For those, one run on stand-ins of the full shape is exact on every NumPy
release, without a hand-written shape rule per function.

What this module adds to ``standins.evaluate_full``:

* a choice of stand-in values: zeros, or identity matrices for linear algebra (an
  inverse of zeros raises where the real call need not);
* the result's container: a list or a named tuple (``np.split``, NumPy 2's ``EighResult``)
  is recorded on a ``SequenceMeta`` so the tracker rebuilds the same type as plain NumPy;
* refusals that keep stand-ins honest: callables among the arguments (they would run at
  trace time); 0-d integer values computed in the graph (NumPy may read one as a size);
  a result whose metadata changes when the stand-ins hold twos instead of zeros (the
  data-dependence probe, a safety net under the catalogue's classification); a Python
  warning on those other values; and, under NumPy 1.x value-based casting, a dtype that
  depends on a 0-d operand's value.

Its cost is the op's own cost on zeros of the full shape, twice (three or more times
under NumPy 1.x with 0-d operands), once per trace.

Functions whose result shape or dtype *does* depend on the values (``np.unique``,
``np.linalg.eig``) are never given these rules: compiler.ops.catalog lists them with why.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import numpy as np

from compiler.exc import Unsupported
from compiler.graph import TensorMeta
from compiler.ops import standins
from compiler.ops.rules import reject_kwargs
from compiler.ops.standins import VALUE_BASED_CASTING, map_metas, metas_in
from compiler.trace_time import WarningTrapped


class SequenceMeta(tuple):
    """Metadata of a result that is a sequence of arrays: one TensorMeta per item, and the
    Python type of the sequence itself (tuple, list or a named tuple class)."""

    container: type = tuple

    def __new__(cls, items: Any, container: type) -> "SequenceMeta":
        made = super().__new__(cls, items)
        made.container = container
        return made


def zeros_like_meta(meta: TensorMeta) -> Any:
    if meta.kind == "scalar":
        return meta.dtype.type(0)
    return np.zeros(meta.shape, meta.dtype)


def twos_like_meta(meta: TensorMeta) -> Any:
    """The second stand-in of the data-dependence probe (True for booleans)."""
    value = True if meta.dtype == np.bool_ else 2
    if meta.kind == "scalar":
        return meta.dtype.type(value)
    return np.full(meta.shape, value, meta.dtype)


def identity_like_meta(meta: TensorMeta, scale: int = 1) -> Any:
    """Stacks of identity matrices (times ``scale``) where the last two dimensions are
    square (an invertible, positive-definite, full-rank stand-in); zeros elsewhere."""
    if meta.kind == "array" and meta.ndim >= 2 and meta.shape[-1] == meta.shape[-2]:
        eye = np.eye(meta.shape[-1], dtype=meta.dtype) * meta.dtype.type(scale)
        return np.broadcast_to(eye, meta.shape).copy()
    return zeros_like_meta(meta) if scale == 1 else twos_like_meta(meta)


def scaled_identity_like_meta(meta: TensorMeta) -> Any:
    return identity_like_meta(meta, 2)


def reshaped_identity_like_meta(meta: TensorMeta, scale: int = 1) -> Any:
    """An n x n identity reshaped to the argument's shape when its size is a square n * n
    (np.linalg.tensorinv / tensorsolve invert the argument reshaped to a square matrix);
    zeros elsewhere."""
    n = int(round(meta.size ** 0.5)) if meta.kind == "array" else 0
    if meta.ndim >= 2 and n * n == meta.size:
        return (np.eye(n, dtype=meta.dtype) * meta.dtype.type(scale)).reshape(meta.shape)
    return zeros_like_meta(meta) if scale == 1 else twos_like_meta(meta)


def scaled_reshaped_identity_like_meta(meta: TensorMeta) -> Any:
    return reshaped_identity_like_meta(meta, 2)


# fill -> the second fill of the data-dependence probe
SECOND_FILL: Dict[Callable, Callable] = {
    zeros_like_meta: twos_like_meta, identity_like_meta: scaled_identity_like_meta,
    reshaped_identity_like_meta: scaled_reshaped_identity_like_meta}


def _refuse_callables(op: Any, args: tuple, kwargs: dict) -> None:
    def visit(value: Any) -> None:
        if isinstance(value, (tuple, list)):
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)
        elif callable(value) and not isinstance(value, (type, np.dtype, TensorMeta)):
            raise Unsupported(f"{op.name}: a callable argument would run on stand-ins at trace "
                              "time; the call runs natively")
    visit(args)
    visit(kwargs)


def _refuse_scalar_sizes(op: Any, args: tuple, kwargs: dict) -> None:
    """A 0-d integer value computed in the graph may be what NumPy uses as a count, a size
    or an offset (np.vander's N, np.diag's k, np.kaiser's M), which would make the result's
    shape depend on it; the stand-ins could not tell.  Such calls are refused (for ops that
    build arrays from parameters, 0-d values of any dtype)."""
    kinds = "biufc" if op.kind == "creation" else "biu"
    for meta in metas_in((args, kwargs)):
        if meta.shape == () and meta.dtype.kind in kinds:
            raise Unsupported(f"{op.name}: a 0-d {meta.dtype.name} value computed in the graph "
                              "may decide the result's shape (data-dependent); it runs natively")


def meta_of_sequence_or_array(result: Any, what: str) -> Any:
    """TensorMeta, or a SequenceMeta for a tuple / list / named tuple of arrays."""
    if isinstance(result, (tuple, list)):
        items = tuple(standins.meta_of_result(item, what) for item in result)
        if any(isinstance(item, tuple) for item in items):
            raise Unsupported(f"{what} returns nested sequences of arrays, which a graph "
                              "value cannot describe")
        return SequenceMeta(items, type(result))
    return standins.meta_of_result(result, what)


def run_on_stand_ins(op: Any, args: tuple, kwargs: dict,
                     fill: Callable[[TensorMeta], Any] = zeros_like_meta) -> Any:
    """The metadata of ``op.fn`` run on stand-ins of the full shape made by ``fill``."""
    result = standins.call_quietly(op.fn, map_metas(args, fill), map_metas(kwargs, fill))
    return meta_of_sequence_or_array(result, op.name)


def check_on_stand_ins(op: Any, args: tuple, kwargs: dict) -> None:
    """Run an op that writes into its arguments on fresh zero stand-ins, for NumPy's checks
    that do not depend on the values (shapes, casting); the result is not looked at."""
    _refuse_callables(op, args, kwargs)
    standins.call_quietly(op.fn, map_metas(args, zeros_like_meta), map_metas(kwargs, zeros_like_meta))


def _dtypes(meta: Any) -> Any:
    if isinstance(meta, tuple):
        return tuple(_dtypes(m) for m in meta)
    return meta.dtype


def _check_value_independent(op: Any, args: tuple, kwargs: dict, expected: Any,
                             fill: Callable[[TensorMeta], Any]) -> None:
    """NumPy 1.x casts by value where a 0-d operand meets n-d ones, and NumPy's Python
    functions meet such operands inside (np.polyval iterates its coefficients as scalars:
    a negative int8 coefficient turns a uint8 result into int16).  So every operand in turn
    holds the extreme values of its dtype, and the result dtypes must not change, else the
    call is refused.  A 0-d operand whose extreme values make the call fail is refused too;
    an n-d one teaches nothing then (an index array holding the largest integer)."""
    metas = metas_in((args, kwargs))
    if all(m.shape == () for m in metas):
        return
    for target in {id(m): m for m in metas}.values():
        for value in standins._extreme_values(target.dtype):
            def stand_in(meta: TensorMeta, value: Any = value, target: TensorMeta = target) -> Any:
                if meta is not target:
                    return fill(meta)
                return meta.dtype.type(value) if meta.kind == "scalar" else \
                    np.full(meta.shape, value, meta.dtype)
            try:
                got = _dtypes(run_on_stand_ins(op, args, kwargs, stand_in))
            except Exception:
                if target.shape != ():
                    continue
                got = None
            if got != _dtypes(expected):
                raise Unsupported(f"{op.name}: the result dtype depends on the value of a 0-d "
                                  f"operand ({target.dtype.name}) under NumPy {np.__version__}'s "
                                  "value-based casting")


def _same_metadata(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and \
            getattr(a, "container", tuple) is getattr(b, "container", tuple) and \
            all(_same_metadata(x, y) for x, y in zip(a, b))
    return a.same_value_type(b)


def _probe_data_dependence(op: Any, args: tuple, kwargs: dict, expected: Any,
                           fill: Callable[[TensorMeta], Any]) -> None:
    """A safety net under the catalogue's classification: the same call on other values
    (twos instead of zeros) must give the same metadata, else a value decides the result's
    shape or dtype (an array used as a count, a size, a condition) and the call is refused.
    Passing does not prove independence; the catalogue's exclusions do that."""
    if not metas_in((args, kwargs)):
        return
    try:
        other = run_on_stand_ins(op, args, kwargs, SECOND_FILL.get(fill, twos_like_meta))
    except WarningTrapped as trapped:  # a Python warning on these values and not on zeros
        raise Unsupported(f"{op.name} issues a warning depending on the values ({trapped}); "
                          "it runs natively") from None
    except Exception:  # these values are invalid (an index out of range): nothing learned
        return
    if not _same_metadata(expected, other):
        raise Unsupported(f"{op.name}: the result's shape or dtype depends on the values of an "
                          "array argument (data-dependent); it runs natively")


def evaluated_rule(fill: Callable[[TensorMeta], Any] = zeros_like_meta,
                   refuse: Optional[Callable[[Any, tuple, dict], None]] = None) -> Callable:
    """A rule running the op on full-shape stand-ins made by ``fill``; ``refuse(op, args,
    kwargs)`` raises Unsupported for argument combinations whose result shape or dtype
    would depend on the values (a data-dependent condition in np.compress, ...)."""
    def rule(op: Any, args: tuple, kwargs: dict) -> Any:
        reject_kwargs(op, kwargs, ("out",))
        _refuse_callables(op, args, kwargs)
        _refuse_scalar_sizes(op, args, kwargs)
        if refuse is not None:
            refuse(op, args, kwargs)
        meta = run_on_stand_ins(op, args, kwargs, fill)
        _probe_data_dependence(op, args, kwargs, meta, fill)
        if VALUE_BASED_CASTING:
            _check_value_independent(op, args, kwargs, meta, fill)
        return meta
    return rule


# -- refusals: arguments that make a result's shape depend on the values -------------
def refuse_array_argument(position: int, name: str, why: str) -> Callable:
    """Refuse the call when argument ``name`` (or positional ``position``) is an array
    computed at run time."""
    def refuse(op: Any, args: tuple, kwargs: dict) -> None:
        value = kwargs.get(name, args[position] if len(args) > position else None)
        if metas_in(value):
            raise Unsupported(f"{op.name}: {why} (data-dependent shape); it runs natively")
    return refuse


def refuse_string_bins(op: Any, args: tuple, kwargs: dict) -> None:
    bins = kwargs.get("bins", args[1] if len(args) > 1 else 10)
    if isinstance(bins, str):
        raise Unsupported(f"{op.name}: bins={bins!r} picks the number of bins from the data "
                          "(data-dependent shape); it runs natively")


def refuse_boolean_arrays(op: Any, args: tuple, kwargs: dict) -> None:
    if any(m.dtype == np.bool_ for m in metas_in((args, kwargs))):
        raise Unsupported(f"{op.name}: a boolean array argument is turned into the indices of "
                          "its true values (data-dependent shape); it runs natively")


def refuse_weights(op: Any, args: tuple, kwargs: dict) -> None:
    """np.cov warns "Degrees of freedom <= 0" from the sum of the weights (values)."""
    if any(kwargs.get(name) is not None for name in ("fweights", "aweights")) or len(args) > 5:
        raise Unsupported(f"{op.name}: with weights, its warnings depend on the values of the "
                          "weights; it runs natively")


def refuse_complex_or_square_roots(op: Any, args: tuple, kwargs: dict) -> None:
    """np.poly's result is complex or real depending on whether complex roots pair up (a
    complex argument, or the eigenvalues of a square matrix): only 1-d real roots."""
    if any(m.dtype.kind == "c" or m.ndim >= 2 for m in metas_in((args, kwargs))):
        raise Unsupported(f"{op.name}: complex roots or a square matrix give a real or complex "
                          "result depending on the values; it runs natively")


REFUSALS: Dict[str, Callable] = {
    "compress": refuse_array_argument(0, "condition", "an array condition selects a "
                                                      "data-dependent number of items"),
    "delete": refuse_array_argument(1, "obj", "an array of indices to delete may repeat items"),
    "insert": refuse_array_argument(1, "obj", "an array of positions decides where values go"),
    "split": refuse_array_argument(1, "indices_or_sections", "array split points"),
    "array_split": refuse_array_argument(1, "indices_or_sections", "array split points"),
    "hsplit": refuse_array_argument(1, "indices_or_sections", "array split points"),
    "vsplit": refuse_array_argument(1, "indices_or_sections", "array split points"),
    "dsplit": refuse_array_argument(1, "indices_or_sections", "array split points"),
    "histogram": refuse_string_bins,
    "histogram_bin_edges": refuse_string_bins,
    "ix_": refuse_boolean_arrays,
    "cov": refuse_weights,
    "poly": refuse_complex_or_square_roots,
}
