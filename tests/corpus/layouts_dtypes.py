"""Inputs in every memory layout (C, Fortran, transposed and strided views) and less common dtypes (uint8
images, float16, int8 wrap-around, complex, bool).  NumPy keeps an elementwise result in its input's layout
and returns views where it can: the compiled function must give the same layout, dtype and aliasing."""
import numpy as np

from .registry import case


def _layouts(a, rows, cols, dtype=np.float64):
    """The same kind of matrix as C-ordered, Fortran-ordered, a transposed view and a strided view."""
    return [(a.f(rows, cols, dtype=dtype),), (np.asfortranarray(a.f(rows, cols, dtype=dtype)),),
            (a.f(cols, rows, dtype=dtype).T,), (a.f(2 * rows, 2 * cols, dtype=dtype)[::2, ::2],)]


@case(calls=lambda a: _layouts(a, 3, 4), nodes=2)
def elementwise_keeps_layout(x):
    return x * 2 + 1


@case(calls=lambda a: _layouts(a, 3, 4) + _layouts(a, 2, 5, np.float32), nodes=2)
def reductions_over_layouts(x):
    return x.sum(axis=0), x.mean(axis=1)


@case(calls=lambda a: _layouts(a, 3, 4), nodes=4)
def reshape_view_or_copy(x):
    return x.reshape(-1), x.ravel(), x.T.reshape(x.shape[1], -1)


@case(calls=lambda a: _layouts(a, 2, 3), nodes=4)
def matmul_with_own_transpose(x):
    return x @ x.T, x.T @ x


@case(calls=lambda a: [(a.i(4, 4, 3, lo=0, hi=256, dtype=np.uint8),), (a.i(2, 3, 3, lo=0, hi=256, dtype=np.uint8),)],
      nodes=5)
def normalise_uint8_image(img):
    mean = np.array([0.485, 0.456, 0.406], dtype=np.float32)
    return (img.astype(np.float32) / 255.0 - mean) / 0.25


@case(calls=lambda a: [(a.f(5, dtype=np.float16),), (a.f(2, 3, dtype=np.float16),)], nodes=3)
def half_precision(x):
    return x * 2 - x.astype(np.float32), x.dtype


@case(calls=lambda a: [(a.i(6, lo=-128, hi=128, dtype=np.int8), a.i(6, lo=-128, hi=128, dtype=np.int8)),
                       (a.i(2, 2, lo=0, hi=256, dtype=np.uint8), a.i(2, 2, lo=0, hi=256, dtype=np.uint8))],
      nodes=4)
def small_integers_wrap_around(a, b):
    return a + b, a * b, (a - b).astype(np.int32)


@case(calls=lambda a: [(a.f(4) + 1j * a.f(4),), ((a.f(2, 2) + 1j * a.f(2, 2)).astype(np.complex64),)], nodes=5)
def complex_power_spectrum(z):
    return np.abs(z) ** 2, (np.conj(z) * z).real


@case(calls=lambda a: [(a.b(6),), (a.b(3, 4),)], nodes=4)
def boolean_reductions(m):
    return m.sum(), m.mean(), m.any(axis=0), np.count_nonzero(m)


@case(calls=lambda a: [(a.f(3, 4),), (np.asfortranarray(a.f(3, 4)),), (a.f(4, 3).T,)], nodes=3)
def copy_and_transpose_copy(x):
    return x.copy(), x.T.copy()
