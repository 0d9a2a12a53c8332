"""Argument builders for the ops of the generic families (compiler.ops.catalog, queries,
inplace, ufunc_methods): each draws one realistic call (arrays of many dtypes and shapes,
0 and 1 sizes included) for the differential and inference tests."""
from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

import numpy as np
from hypothesis import strategies as st

from tests.graph import arrays as A

Builder = Callable[[Any], Tuple[tuple, dict]]
SMALL = st.integers(0, 4)


def _array(draw, shape=None, dtype=None, scalar_ok=False):
    return A.array(draw, shape, dtype, scalar_ok=scalar_ok)


def _vector(draw, dtype=None, n=None):
    return _array(draw, (draw(SMALL) if n is None else n,), dtype)


def _float_vector(draw, n=None):
    return _vector(draw, draw(st.sampled_from(A.FLOAT_DTYPES + [np.dtype(np.int64)])), n)


def _numeric(draw):
    return draw(st.sampled_from([d for d in A.DTYPES if d.kind != "b"]))


def unary(draw):
    return (_array(draw),), {}


def unary_nonempty(draw):
    return (_array(draw, draw(A.nonempty_shapes)),), {}


def one_d(draw):
    return (_vector(draw),), {}


def binary(draw):
    x = _array(draw)
    return (x, _array(draw, A.broadcastable(draw, np.shape(x)))), {}


def two_vectors(draw):
    return (_vector(draw, _numeric(draw)), _vector(draw, _numeric(draw))), {}


def square(draw, min_n=0):
    n = draw(st.integers(min_n, 3))
    batch = draw(st.sampled_from([(), (), (2,)]))
    dtype = draw(st.sampled_from([np.float64, np.float32, np.complex128, np.int64]))
    return _array(draw, batch + (n, n), dtype)


def matrix_unary(draw):
    return (square(draw),), {}


def solve(draw):
    a = square(draw)
    b = _array(draw, a.shape[:-1] + (draw(st.integers(1, 2)),), draw(st.sampled_from([np.float64, np.float32])))
    return (a, b), {}


def axis_kw(draw, ndim):
    return {"axis": draw(st.integers(-ndim, ndim - 1))} if ndim and draw(st.booleans()) else {}


def with_axis(draw):
    x = _array(draw, draw(A.nonempty_shapes), _numeric(draw))
    return (x,), axis_kw(draw, x.ndim)


def percentile(draw):
    x = _array(draw, draw(A.nonempty_shapes), draw(st.sampled_from(A.REAL_DTYPES[1:])))
    q = draw(st.sampled_from([50, [10, 90], 0.0, 100]))
    if draw(st.booleans()):
        q = np.array(q, dtype=np.float64)
    return (x, q), axis_kw(draw, x.ndim)


def quantile(draw):
    (x, q), kw = percentile(draw)
    return (x, np.asarray(q) / 100 if isinstance(q, np.ndarray) else q / 100
            if not isinstance(q, list) else [v / 100 for v in q]), kw


def take(draw):
    x = _array(draw, draw(A.nonempty_shapes))
    idx = draw(st.sampled_from([[0], 0, [[0, -1]]]))
    if draw(st.booleans()):
        idx = np.array(idx, dtype=np.int64)
    return (x, idx), axis_kw(draw, x.ndim)


def take_along_axis(draw):
    x = _array(draw, draw(A.nonempty_shapes))
    idx = np.zeros(x.shape[:-1] + (draw(st.integers(0, 2)),), np.int64)
    return (x, idx, -1), {}


def sorted_vector(draw):
    return np.sort(_vector(draw, np.dtype(np.float64), draw(st.integers(1, 4))))


def searchsorted(draw):
    return (sorted_vector(draw), _array(draw, dtype=np.float64)), {}


def digitize(draw):
    return (_array(draw, dtype=np.float64), sorted_vector(draw)), {}


def interp(draw):
    xp = np.unique(sorted_vector(draw))
    return (_array(draw, dtype=np.float64), xp, _vector(draw, np.dtype(np.float64), len(xp))), {}


def select(draw):
    x = _array(draw, dtype=_numeric(draw))
    cond = _array(draw, np.shape(x), np.bool_)
    return ([cond], [x]), {}


def choose(draw):
    shape = draw(A.shapes)
    return (np.zeros(shape, np.int64), [_array(draw, shape), _array(draw, shape)]), {}


def partition(draw):
    x = _array(draw, draw(A.nonempty_shapes), draw(st.sampled_from(A.REAL_DTYPES)))
    return (x, 0), {}


def lexsort(draw):
    n = draw(SMALL)
    return ((_vector(draw, n=n), _vector(draw, n=n)),), {}


def append(draw):
    x = _array(draw)
    return (x, _array(draw)), {}


def block(draw):
    rows = draw(st.integers(1, 3))
    return ([_array(draw, (rows, draw(SMALL))), _array(draw, (rows, draw(SMALL)))],), {}


def resize(draw):
    return (_array(draw), draw(st.sampled_from([(3,), (2, 2), 0, (0, 3)]))), {}


def delete(draw):
    x = _vector(draw, n=draw(st.integers(1, 4)))
    return (x, draw(st.sampled_from([0, [0], slice(0, 1)]))), {}


def insert(draw):
    x = _vector(draw)
    return (x, 0, draw(st.sampled_from([1, 2.5, [1, 2]]))), {}


def compress(draw):
    x = _vector(draw, n=3)
    cond = [True, False, True]
    if draw(st.integers(0, 3)) == 0:
        cond = np.array(cond)  # an array condition: refused (data-dependent)
    return (cond, x), {}


def pad(draw):
    return (_array(draw), draw(st.sampled_from([1, (0, 2)]))), {
        "mode": draw(st.sampled_from(["constant", "edge", "wrap"]))}


def cov(draw):
    return (_array(draw, (draw(st.integers(1, 3)), draw(st.integers(2, 4))), np.float64),), {}


def histogram(draw):
    x = _array(draw, dtype=np.float64)
    bins = draw(st.sampled_from([3, [0.0, 1.0, 5.0], "auto"]))
    return (x, bins), {"range": (0.0, 5.0)} if draw(st.booleans()) else {}


def histogram2d(draw):
    n = draw(SMALL)
    return (_vector(draw, np.dtype(np.float64), n), _vector(draw, np.dtype(np.float64), n)), {
        "bins": draw(st.sampled_from([2, 3])), "range": [[0, 5], [0, 5]]}


def gradient(draw):
    return (_array(draw, tuple(draw(st.lists(st.integers(2, 4), min_size=1, max_size=2))),
                   np.float64),), {}


def ix(draw):
    return (_vector(draw, np.dtype(np.int64)), _vector(draw, np.dtype(np.int64))), {}


def unravel_index(draw):
    return (np.zeros(draw(A.shapes), np.int64), (2, 3)), {}


def ravel_multi_index(draw):
    shape = draw(A.shapes)
    return ((np.zeros(shape, np.int64), np.ones(shape, np.int64)), (2, 3)), {}


def meshgrid(draw):
    return (_vector(draw), _vector(draw)), {"indexing": draw(st.sampled_from(["xy", "ij"]))}


def packbits(draw):
    return (_array(draw, dtype=draw(st.sampled_from([np.bool_, np.uint8]))),), {}


def unpackbits(draw):
    return (_array(draw, dtype=np.uint8),), {}


def cross(draw):
    return (_array(draw, (2, 3), np.float64), _array(draw, (3,), np.int64)), {}


def vander(draw):
    return (_vector(draw),), {"N": draw(st.integers(0, 3))}


def polyder(draw):
    return (_vector(draw, _numeric(draw), draw(st.integers(1, 4))),), {}


def polyval(draw):
    return (_vector(draw, _numeric(draw), draw(st.integers(1, 4))), _array(draw, dtype=_numeric(draw))), {}


def cumulative(draw):
    x = _array(draw, draw(st.sampled_from([(3,), (0,), (2, 3)])), _numeric(draw))
    return (x,), ({"axis": -1} if x.ndim > 1 else {})


def spaced(draw):
    return (1.0, 100.0), {"num": draw(SMALL)}


def window(draw):
    return (draw(st.integers(0, 5)),), {}


def kaiser(draw):
    return (draw(st.integers(0, 5)), 2.5), {}


def indices(draw):
    return (draw(st.sampled_from([(2, 3), (0,), (1, 2, 2)])),), {}


def n_only(draw):
    return (draw(SMALL),), {}


def square_from(draw):
    n = draw(st.integers(0, 3))
    return (_array(draw, (n, n)),), {}


def nanarg(draw):
    x = _array(draw, draw(A.nonempty_shapes), np.float64)
    if draw(st.booleans()) and x.size:
        x.flat[0] = np.nan
    return (x,), axis_kw(draw, x.ndim)


def gufunc_matvec(draw):
    n, m = draw(SMALL), draw(SMALL)
    return (_array(draw, (n, m), _numeric(draw)), _array(draw, (m,), _numeric(draw))), {}


def gufunc_vecmat(draw):
    n, m = draw(SMALL), draw(SMALL)
    return (_array(draw, (n,), _numeric(draw)), _array(draw, (n, m), _numeric(draw))), {}


def vecdot(draw):
    n = draw(SMALL)
    return (_array(draw, (2, n), _numeric(draw)), _array(draw, (n,), _numeric(draw))), {}


def multi_dot(draw):
    n, m, k = (draw(st.integers(1, 3)) for _ in range(3))
    return ([_array(draw, (n, m), np.float64), _array(draw, (m, k), np.float64),
             _array(draw, (k, 2), np.float64)],), {}


def matrix_power(draw):
    return (square(draw), draw(st.integers(-2, 3))), {}


def tensordot(draw):
    return (_array(draw, (2, 3), np.float64), _array(draw, (3, 2), np.float64)), {"axes": 1}


def tensorinv(draw):
    n = draw(st.integers(1, 2))
    return (_array(draw, (n, 2, 2 * n), np.float64),), {"ind": 2}


def tensorsolve(draw):
    n = draw(st.integers(1, 2))
    return (_array(draw, (2, n, 2 * n), np.float64), _array(draw, (2, n), np.float64)), {}


def linalg_cross(draw):
    return (_array(draw, (2, 3), np.float64), _array(draw, (2, 3), np.float64)), {}


def linalg_trace(draw):
    return (square(draw),), {}


def norms(draw):
    return (square(draw, 1),), {}


def empty(draw):
    return (draw(st.sampled_from([3, (2, 0), (1, 4)])),), {
        "dtype": draw(st.sampled_from([np.float64, np.int32, bool]))}


def empty_like(draw):
    return (_array(draw),), {}


def any_array(draw):
    """An array or NumPy scalar of any dtype and shape."""
    return (A.array(draw),), {}


def array_and_operand(draw):
    """An array and a broadcastable operand (an array, a NumPy or a Python scalar)."""
    x = A.array(draw)
    return (x, A.operand(draw, np.shape(x))), {}


def can_cast(draw):
    return (A.array(draw), draw(st.sampled_from([np.float32, np.int8, np.complex128]))), {}


def common_type(draw):
    return (_array(draw, dtype=draw(st.sampled_from([np.float32, np.float64, np.int16, np.complex64]))),), {}


def mintypecode(draw):
    return (["f", "d"],), {}


def issubdtype(draw):
    return (draw(st.sampled_from([np.float32, np.int8, np.bool_])), np.floating), {}


def promote_types(draw):
    return (np.float32, np.int16), {}


def broadcast_shapes(draw):
    return ((2, 1), (3,)), {}


def typename(draw):
    return ("d",), {}


def scalar_type(draw):
    return (np.float64,), {}


# -- in-place writers ------------------------------------------------------------------
def put(draw):
    x = _vector(draw, _numeric(draw), draw(st.integers(1, 4))).copy()
    return (x, [0, -1], _array(draw, (2,), x.dtype)), {}


def putmask(draw):
    x = _array(draw, dtype=_numeric(draw)).copy()
    return (x, _array(draw, x.shape, np.bool_), _array(draw, (draw(st.integers(1, 3)),), x.dtype)), {}


def place(draw):
    x = _array(draw, dtype=_numeric(draw)).copy()
    return (x, _array(draw, x.shape, np.bool_), _array(draw, (draw(st.integers(1, 3)),), x.dtype)), {}


def copyto(draw):
    x = _array(draw, dtype=_numeric(draw)).copy()
    return (x, _array(draw, A.broadcastable(draw, x.shape), draw(st.sampled_from(A.DTYPES)))), {}


def fill_diagonal(draw):
    n = draw(st.integers(0, 3))
    return (_array(draw, (n, n), _numeric(draw)).copy(), draw(st.sampled_from([1, 2.5, -3]))), {}


def put_along_axis(draw):
    x = _array(draw, draw(A.nonempty_shapes), _numeric(draw)).copy()
    idx = np.zeros(x.shape[:-1] + (1,), np.int64)
    return (x, idx, _array(draw, idx.shape, x.dtype), -1), {}


# -- ufunc methods -----------------------------------------------------------------------
def ufunc_reduce(draw):
    x = _array(draw, draw(A.nonempty_shapes), _numeric(draw))
    return (x,), axis_kw(draw, x.ndim)


def ufunc_outer(draw):
    return (_array(draw, dtype=_numeric(draw)), _array(draw, dtype=_numeric(draw))), {}


def ufunc_reduceat(draw):
    x = _vector(draw, _numeric(draw), draw(st.integers(1, 4)))
    return (x, [0, len(x) - 1]), {}


def ufunc_at(draw):
    x = _vector(draw, np.dtype(draw(st.sampled_from([np.float64, np.int64]))),
                draw(st.integers(1, 4))).copy()
    return (x, [0, 0, -1], draw(st.sampled_from([1, 2]))), {}


UFUNC_METHOD_BUILDERS: Dict[str, Builder] = {
    "reduce": ufunc_reduce, "accumulate": ufunc_reduce, "outer": ufunc_outer,
    "reduceat": ufunc_reduceat, "at": ufunc_at,
}

BREADTH: Dict[str, Builder] = {
    "numpy.empty": empty, "numpy.empty_like": empty_like, "numpy.matvec": gufunc_matvec,
    "numpy.vecmat": gufunc_vecmat, "numpy.vecdot": vecdot, "numpy.append": append,
    "numpy.block": block, "numpy.resize": resize, "numpy.delete": delete,
    "numpy.insert": insert, "numpy.compress": compress, "numpy.pad": pad, "numpy.take": take,
    "numpy.take_along_axis": take_along_axis, "numpy.choose": choose, "numpy.select": select,
    "numpy.trapezoid": with_axis, "numpy.partition": partition, "numpy.argpartition": partition,
    "numpy.lexsort": lexsort, "numpy.searchsorted": searchsorted, "numpy.digitize": digitize,
    "numpy.sort_complex": one_d, "numpy.nanargmax": nanarg, "numpy.nanargmin": nanarg,
    "numpy.isin": binary, "numpy.percentile": percentile, "numpy.quantile": quantile,
    "numpy.cov": cov, "numpy.corrcoef": cov, "numpy.histogram": histogram,
    "numpy.histogram_bin_edges": histogram, "numpy.histogram2d": histogram2d,
    "numpy.cumulative_sum": cumulative, "numpy.cumulative_prod": cumulative,
    "numpy.interp": interp, "numpy.unwrap": with_axis, "numpy.gradient": gradient,
    "numpy.i0": unary, "numpy.iscomplex": unary, "numpy.isreal": unary,
    "numpy.isneginf": unary, "numpy.isposinf": unary, "numpy.convolve": two_vectors,
    "numpy.correlate": two_vectors, "numpy.cross": cross, "numpy.kron": binary,
    "numpy.ediff1d": unary, "numpy.diag": unary, "numpy.diagflat": unary, "numpy.vander": vander,
    "numpy.packbits": packbits, "numpy.unpackbits": unpackbits, "numpy.ix_": ix,
    "numpy.unravel_index": unravel_index, "numpy.ravel_multi_index": ravel_multi_index,
    "numpy.polyadd": two_vectors, "numpy.polysub": two_vectors, "numpy.polymul": two_vectors,
    "numpy.polyder": polyder, "numpy.polyint": polyder, "numpy.polyval": polyval,
    "numpy.geomspace": spaced, "numpy.logspace": spaced, "numpy.bartlett": window,
    "numpy.blackman": window, "numpy.hamming": window, "numpy.hanning": window,
    "numpy.kaiser": kaiser, "numpy.indices": indices, "numpy.diag_indices": n_only,
    "numpy.tril_indices": n_only, "numpy.triu_indices": n_only,
    "numpy.diag_indices_from": square_from, "numpy.tril_indices_from": square_from,
    "numpy.triu_indices_from": square_from, "numpy.meshgrid": meshgrid,
    "numpy.linalg.inv": matrix_unary, "numpy.linalg.solve": solve,
    "numpy.linalg.det": matrix_unary, "numpy.linalg.slogdet": matrix_unary,
    "numpy.linalg.eigh": matrix_unary, "numpy.linalg.eigvalsh": matrix_unary,
    "numpy.linalg.cholesky": matrix_unary, "numpy.linalg.qr": matrix_unary,
    "numpy.linalg.svd": matrix_unary, "numpy.linalg.svdvals": matrix_unary,
    "numpy.linalg.pinv": matrix_unary, "numpy.linalg.matrix_rank": matrix_unary,
    "numpy.linalg.matrix_power": matrix_power, "numpy.linalg.cond": norms,
    "numpy.linalg.multi_dot": multi_dot, "numpy.linalg.matrix_norm": norms,
    "numpy.linalg.vector_norm": unary, "numpy.linalg.vecdot": vecdot,
    "numpy.linalg.outer": two_vectors, "numpy.linalg.cross": linalg_cross,
    "numpy.linalg.matmul": (lambda draw: (tuple(multi_dot(draw)[0][0][:2]), {})),
    "numpy.linalg.tensordot": tensordot, "numpy.linalg.trace": linalg_trace,
    "numpy.linalg.diagonal": linalg_trace, "numpy.linalg.matrix_transpose": linalg_trace,
    "numpy.matrix_transpose": linalg_trace, "numpy.unstack": unary_nonempty,
    "numpy.broadcast_arrays": binary, "numpy.split": (lambda draw: ((_vector(draw, n=4), 2), {})),
    "numpy.array_split": (lambda draw: ((_array(draw), 3), {})),
    "numpy.hsplit": (lambda draw: ((_array(draw, (2, 4)), 2), {})),
    "numpy.vsplit": (lambda draw: ((_array(draw, (2, 4)), 2), {})),
    "numpy.dsplit": (lambda draw: ((_array(draw, (1, 2, 4)), 2), {})),
    "numpy.rollaxis": (lambda draw: ((_array(draw, (2, 3, 1)), 2), {})),
    "numpy.require": (lambda draw: ((_array(draw),), {"requirements": "C"})),
    "numpy.asfortranarray": unary, "numpy.asanyarray": unary, "numpy.asarray_chkfinite": unary,
    "numpy.astype": (lambda draw: ((_array(draw), np.float32), {})),
    "numpy.shape": any_array, "numpy.ndim": any_array, "numpy.size": any_array,
    "numpy.iscomplexobj": any_array, "numpy.isrealobj": any_array,
    "numpy.isscalar": any_array, "numpy.iterable": any_array,
    "numpy.result_type": array_and_operand, "numpy.can_cast": can_cast,
    "numpy.promote_types": promote_types, "numpy.min_scalar_type": any_array,
    "numpy.common_type": common_type, "numpy.mintypecode": mintypecode,
    "numpy.issubdtype": issubdtype, "numpy.isdtype": (lambda draw: ((np.float32, "real floating"), {})),
    "numpy.typename": typename, "numpy.broadcast_shapes": broadcast_shapes,
    "numpy.issctype": scalar_type, "numpy.obj2sctype": scalar_type,
    "numpy.sctype2char": scalar_type, "numpy.maximum_sctype": scalar_type,
    "numpy.issubsctype": (lambda draw: ((np.float64, np.floating), {})),
    "numpy.issubclass_": (lambda draw: ((np.float64, np.floating), {})),
    "numpy.linalg.tensorinv": tensorinv, "numpy.linalg.tensorsolve": tensorsolve,
    "numpy.trapz": with_axis, "numpy.in1d": (lambda draw: ((_vector(draw), _vector(draw)), {})),
    "numpy.asfarray": unary,
    "numpy.find_common_type": (lambda draw: (([np.float32, np.int64], []), {})),
    "numpy.einsum_path": (lambda draw: (("ij,jk,kl->il", _array(draw, (2, 3)), _array(draw, (3, 4)),
                                           _array(draw, (4, draw(st.integers(1, 5))))), {})),
    "numpy.binary_repr": (lambda draw: ((draw(st.integers(-9, 9)),), {"width": 8})),
    "numpy.base_repr": (lambda draw: ((draw(st.integers(0, 99)), draw(st.integers(2, 16))), {})),
    "numpy.format_float_positional": (lambda draw: ((draw(st.floats(-1e3, 1e3)),), {"precision": 3})),
    "numpy.format_float_scientific": (lambda draw: ((draw(st.floats(-1e3, 1e3)),), {"precision": 3})),
    "numpy.datetime_data": (lambda draw: ((draw(st.sampled_from(["M8[s]", "m8[3D]", "M8"])),), {})),
    "numpy.busday_count": (lambda draw: (("2011-01-0" + str(draw(st.integers(1, 9))), "2011-02-01"), {})),
    "numpy.busday_offset": (lambda draw: (("2011-06-2" + str(draw(st.integers(0, 9))), draw(SMALL)),
                                          {"roll": "forward"})),
    "numpy.is_busday": (lambda draw: (("2011-07-0" + str(draw(st.integers(1, 9))),), {})),
    "numpy.get_include": (lambda draw: ((), {})),
    "numpy.safe_eval": (lambda draw: ((draw(st.sampled_from(["1", "[1, 2.5]", "(3, 'a')"])),), {})),
    "numpy.frombuffer": (lambda draw: ((_array(draw, draw(A.nonempty_shapes)),),
                                       {"dtype": draw(st.sampled_from([np.uint8, np.int8]))})),
    "numpy.from_dlpack": unary,
    "numpy.fromstring": (lambda draw: ((" ".join(str(v) for v in draw(st.lists(SMALL, max_size=4))),),
                                       {"sep": " ", "dtype": draw(st.sampled_from([float, np.int32]))})),
    "numpy.poly": (lambda draw: ((_array(draw, (draw(SMALL),), draw(st.sampled_from(
        [np.float64, np.float32, np.int64]))),), {})),
    "numpy.put": put, "numpy.putmask": putmask, "numpy.place": place, "numpy.copyto": copyto,
    "numpy.fill_diagonal": fill_diagonal, "numpy.put_along_axis": put_along_axis,
}

for _name in ("fft", "ifft", "rfft", "ihfft", "fftn", "ifftn", "rfftn", "fft2", "ifft2", "rfft2",
              "irfft", "hfft", "irfftn", "irfft2", "fftshift", "ifftshift"):
    BREADTH[f"numpy.fft.{_name}"] = unary_nonempty if "2" not in _name else (
        lambda draw: ((_array(draw, (draw(st.integers(1, 3)), draw(st.integers(1, 3)))),), {}))
BREADTH["numpy.fft.fftfreq"] = BREADTH["numpy.fft.rfftfreq"] = (
    lambda draw: ((draw(st.integers(1, 5)),), {"d": draw(st.sampled_from([1.0, 0.5]))}))
