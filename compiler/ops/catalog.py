"""The breadth of the allowlist: NumPy functions captured by generic rules, generated from
NumPy's own namespaces where NumPy's metadata says enough, and listed by name where it
does not.

Generated from metadata:

* every ``np.ufunc`` in ``numpy`` that the hand-written families do not name: an
  elementwise op when it has no core signature, an evaluated op for a generalized ufunc
  (``np.matvec``); the ufunc methods are compiler.ops.ufunc_methods;
* every public function of ``numpy.fft``.

Listed by name (NumPy has no metadata saying whether a result's shape depends on the
values, so each function was classified by reading it):

* ``EVALUATED``: the result's metadata depends only on shapes, dtypes and constant
  arguments; one run on zero stand-ins of the full shape (compiler.ops.evaluated) is exact;
* ``LINALG``: the same for ``numpy.linalg``, on identity-matrix stand-ins;
* ``QUERIES``: functions of metadata only (``np.shape``, ``np.result_type``), answered at
  trace time as constants (compiler.ops.queries);
* ``EXCLUDED``: every other public callable, with the reason it is not captured
  (data-dependent shapes or dtypes, Python callables, I/O, ...).

``INLINED`` functions are traced through their own source (np.fromfunction).  Functions
that write into an argument are compiler.ops.inplace; ``np.empty`` and
``np.empty_like`` are compiler.ops.creation.
  compiler.ops.coverage reports them.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import numpy as np

from compiler.ops import evaluated
from compiler.ops.queries import DEPRECATED_HERE
from compiler.ops.opinfo import OpInfo

# name -> kind (the kind says whether the result can share memory with an argument:
# "shape" may return a view or the argument itself; "other" is treated the same way;
# "linalg" and "creation" always return new arrays).
EVALUATED: Dict[str, str] = {
    # joining, splitting, rearranging
    "append": "other", "block": "other", "resize": "other", "rollaxis": "shape",
    "require": "shape", "asfortranarray": "shape", "asanyarray": "shape",
    "asarray_chkfinite": "shape", "astype": "shape", "matrix_transpose": "shape",
    "unstack": "shape", "broadcast_arrays": "shape", "split": "shape", "array_split": "shape",
    "hsplit": "shape", "vsplit": "shape", "dsplit": "shape", "delete": "other",
    "insert": "other", "compress": "other", "pad": "other", "take": "other",
    "take_along_axis": "other", "choose": "other", "select": "other", "trapezoid": "other",
    # NumPy 1.x names (deprecated from 1.25: where a call warns, it is refused at trace time)
    "trapz": "other", "in1d": "other", "asfarray": "shape",
    # sorting and searching with static result shapes
    "partition": "other", "argpartition": "other", "lexsort": "other", "searchsorted": "other",
    "digitize": "other", "sort_complex": "other", "nanargmax": "other", "nanargmin": "other",
    "isin": "other",
    # statistics
    "percentile": "other", "quantile": "other", "cov": "other", "corrcoef": "other",
    "histogram": "other", "histogram_bin_edges": "other", "histogram2d": "other",
    "cumulative_sum": "other", "cumulative_prod": "other",
    # elementwise-like and numerical functions
    "interp": "other", "unwrap": "other", "gradient": "other", "i0": "other",
    "iscomplex": "other", "isreal": "other", "isneginf": "other", "isposinf": "other",
    "convolve": "other", "correlate": "other", "cross": "other", "kron": "other",
    "ediff1d": "other", "diag": "other", "diagflat": "other", "vander": "other",
    "packbits": "other", "unpackbits": "other", "ix_": "other",
    "unravel_index": "other", "ravel_multi_index": "other",
    "polyadd": "other", "polysub": "other", "polymul": "other", "polyder": "other",
    "polyint": "other", "polyval": "other",
    # arrays made from constants or from an argument's shape alone
    "geomspace": "creation", "logspace": "creation", "bartlett": "creation",
    "blackman": "creation", "hamming": "creation", "hanning": "creation", "kaiser": "creation",
    "indices": "creation", "diag_indices": "creation", "tril_indices": "creation",
    "triu_indices": "creation", "diag_indices_from": "creation",
    "tril_indices_from": "creation", "triu_indices_from": "creation",
    # meshgrid(..., copy=False) returns views of its arguments
    "meshgrid": "shape",
    # views of an argument's memory (an array's buffer or DLPack capsule)
    "frombuffer": "shape", "from_dlpack": "shape",
    # parsed from a constant string (sep != "")
    "fromstring": "creation",
    # 1-d real roots only (refusals: compiler.ops.evaluated)
    "poly": "other",
}

# numpy.linalg, on identity stand-ins: name -> kind
LINALG: Dict[str, str] = {
    "inv": "linalg", "solve": "linalg", "det": "linalg", "slogdet": "linalg",
    "eigh": "linalg", "eigvalsh": "linalg", "cholesky": "linalg", "qr": "linalg",
    "svd": "linalg", "svdvals": "linalg", "pinv": "linalg", "matrix_rank": "linalg",
    "matrix_power": "other",  # matrix_power(a, 1) returns a itself
    "cond": "linalg", "multi_dot": "linalg",
    "matrix_norm": "linalg", "vector_norm": "linalg", "vecdot": "linalg", "outer": "linalg",
    "cross": "linalg", "matmul": "linalg", "tensordot": "linalg", "trace": "linalg",
    "diagonal": "shape", "matrix_transpose": "shape",
}
# numpy.linalg functions that invert an array reshaped to a square matrix: their stand-in is
# an identity matrix reshaped to the argument's shape
TENSOR_LINALG = ("tensorinv", "tensorsolve")

# numpy.fft functions that build an array from constants only
_FFT_CREATION = ("fftfreq", "rfftfreq")

# NumPy functions written in Python whose own source the tracer inlines (compiler.trace_rules),
# because all they do is the program's work in a NumPy spelling: ``np.fromfunction(f, shape)``
# is ``f(*np.indices(shape))``; ``np.apply_over_axes(f, a, axes)`` calls ``f(a, axis)`` per
# axis with ``np.expand_dims``.  name -> (position, keyword) of the one argument NumPy's
# ``__array_function__`` dispatch looks at, or None where the function is not dispatched:
# the implementation is inlined only where NumPy itself would call it (an ndarray, a Python
# value), never for an object that overrides the dispatch.
INLINED: Dict[str, Optional[Tuple[int, str]]] = {"fromfunction": None, "apply_over_axes": (1, "a")}

EXCLUDED: Dict[str, str] = {}


def _exclude(reason: str, *names: str) -> None:
    for name in names:
        EXCLUDED[name] = reason


_exclude("the result's shape depends on the values", "nonzero", "flatnonzero", "argwhere",
         "extract", "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
         "intersect1d", "setdiff1d", "setxor1d", "union1d", "trim_zeros", "bincount",
         "polydiv", "roots", "linalg.lstsq")
_exclude("its result nests a list of arrays in a tuple, which graph values do not describe",
         "histogramdd")
_exclude("the result's dtype depends on the values (real or complex)", "real_if_close",
         "linalg.eig", "linalg.eigvals")
_exclude("it issues a Python warning depending on the values", "polyfit", "nanpercentile",
         "nanquantile")
_exclude("it calls a Python function (which would run on stand-ins at trace time)",
         "apply_along_axis", "frompyfunc", "piecewise",
         "mask_indices", "vectorize")
_exclude("deprecated on the NumPy releases that have it (it warns; use the function it names)",
         "row_stack", "fastCopyAndTranspose", "msort")
_exclude("string arrays are not traced", "compare_chararrays")
_exclude("it reads memory addresses or memory layout, which stand-ins do not have",
         "may_share_memory", "shares_memory", "isfortran", "byte_bounds")
_exclude("it returns a Python object computed from the values (str, bool, iterator)",
         "array2string", "array_repr", "array_str", "array_equal", "array_equiv", "allclose",
         "nested_iters", "asscalar")
_exclude("the result is an ndarray subclass (np.matrix)", "asmatrix", "bmat", "mat")
_exclude("input / output or external memory", "fromfile", "fromiter", "fromregex",
         "genfromtxt", "load", "loadtxt", "save", "savetxt", "savez",
         "savez_compressed", "recfromcsv", "recfromtxt", "fromregex")
_exclude("it returns an array of strings (datetime and string arrays are not traced)",
         "datetime_as_string")
_exclude("configuration, documentation or introspection of the interpreter, not array work",
         "get_printoptions", "getbufsize", "geterr", "geterrcall", "printoptions",
         "set_printoptions", "setbufsize", "seterr", "seterrcall", "show_config",
         "show_runtime", "info", "test", "lookfor", "who", "source", "disp", "deprecate",
         "deprecate_with_doc", "add_newdoc", "add_docstring",
         "add_newdoc_ufunc", "set_string_function", "get_array_wrap", "set_numeric_ops",
         "geterrobj", "seterrobj",
         "linalg.test", "fft.test")


def _ufuncs() -> List[OpInfo]:
    """Every ufunc of the numpy namespace; the registry keeps the hand-written entry where
    one exists (compiler.ops.elementwise), so this adds the rest."""
    from compiler.ops import rules
    found = []
    for name in sorted(dir(np)):
        ufunc = getattr(np, name, None)
        if name.startswith("_") or not isinstance(ufunc, np.ufunc) or ufunc.__name__ != name:
            continue  # aliases (np.abs, NumPy 2's np.acos) are mapped by the registry
        if ufunc.signature is None:
            found.append(OpInfo(f"numpy.{name}", ufunc, "elementwise", rules.elementwise_rule,
                                ufunc=ufunc if ufunc.nout == 1 else None, source=f"numpy.{name}"))
        else:  # a generalized ufunc: core dimensions, its own shape rule
            found.append(OpInfo(f"numpy.{name}", ufunc, "linalg", evaluated.evaluated_rule(),
                                source=f"numpy.{name}"))
    return found


def _evaluated() -> List[OpInfo]:
    found = []
    for name, kind in EVALUATED.items():
        fn = getattr(np, name, None)
        if fn is None or isinstance(fn, np.ufunc) or name in DEPRECATED_HERE:
            continue  # not on this NumPy release (or deprecated there: every call warns)
        rule = evaluated.evaluated_rule(refuse=evaluated.REFUSALS.get(name))
        found.append(OpInfo(f"numpy.{name}", fn, kind, rule, source=f"numpy.{name}"))
    for name, kind in LINALG.items():
        fn = getattr(np.linalg, name, None)
        if fn is None:
            continue
        found.append(OpInfo(f"numpy.linalg.{name}", fn, kind,
                            evaluated.evaluated_rule(evaluated.identity_like_meta),
                            source=f"numpy.linalg.{name}"))
    for name in TENSOR_LINALG:
        found.append(OpInfo(f"numpy.linalg.{name}", getattr(np.linalg, name), "linalg",
                            evaluated.evaluated_rule(evaluated.reshaped_identity_like_meta),
                            source=f"numpy.linalg.{name}"))
    for name in public_names(np.fft):
        if f"fft.{name}" in EXCLUDED:
            continue
        kind = "creation" if name in _FFT_CREATION else "linalg"
        found.append(OpInfo(f"numpy.fft.{name}", getattr(np.fft, name), kind,
                            evaluated.evaluated_rule(), source=f"numpy.fft.{name}"))
    return found


def public_names(module: object) -> List[str]:
    """Public callables of a module (functions and ufuncs; classes and submodules are not
    callables in this sense)."""
    import types
    names = []
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        try:
            value = getattr(module, name)
        except Exception:  # deprecated attributes may raise on access
            continue
        if callable(value) and not isinstance(value, (type, types.ModuleType)):
            names.append(name)
    return names


def ops() -> List[OpInfo]:
    return _ufuncs() + _evaluated()
