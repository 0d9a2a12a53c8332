"""Operators: BINARY_* / INPLACE_* (3.8-3.10) versus BINARY_OP (3.11+), unary operators, comparisons."""
import math

import numpy as np

from matrix.cases import case
from matrix.cases.inputs import arr, args, ints


@case("arithmetic", args(arr(8)), args(arr(8)), args(arr(3, 4)), recompiles=1)
def add_mul_chain(x):
    return x + x * 2.0 - 1.0


@case("arithmetic", args(arr(6), arr(6)), args(arr(6, dtype="float32"), arr(6, dtype="float32")), recompiles=1)
def all_float_binary_ops(a, b):
    return a + b, a - b, a * b, a / b, a // b, a % b, a ** 2


@case("arithmetic", args(ints(8), ints(8)))
def int_bitwise_ops(a, b):
    return a & b, a | b, a ^ b, a << 1, b >> 1, ~a


@case("arithmetic", args(arr(5)))
def unary_ops(x):
    y = -x
    z = +x
    return y, z, abs(y), ~(x > 2.0)


@case("arithmetic", args(arr(7)))
def inplace_on_temporary(x):
    y = x * 1.0
    y += 1.0
    y *= 2.0
    y -= x
    y /= 3.0
    y **= 2
    return y


@case("arithmetic", args(arr(4)))
def reflected_ops(x):
    return 2.0 - x, 3.0 / (x + 1.0), 1 + x, 2 ** x, 10 // x


@case("arithmetic", args(arr(9)))
def array_comparisons(x):
    mask = (x > 1.5) & (x <= 4.0)
    return mask, x == 2.0, x != 2.0, x < 3.0, x >= 3.0


@case("arithmetic", args(arr(3, 4), arr(4, 2)), args(arr(2, 3), arr(3, 5)), recompiles=1)
def matmul_operator(a, b):
    return a @ b


@case("arithmetic", args(arr(4), 3), args(arr(4), 4), recompiles=1)
def python_scalar_math(x, n):
    k = n * 2 + 1
    scale = math.sqrt(16.0) / k
    return x * scale + (n % 3) - (n // 2) + n ** 2


@case("arithmetic", args(ints(5)), args(arr(5)), recompiles=1)
def dtype_promotion(x):
    return x * 2.5 + np.float32(1.0)


@case("arithmetic", args(arr(6)))
def chained_scalar_comparison(x):
    n = x.shape[0]
    if 0 < n < 10:
        return x * 2.0
    return x


@case("arithmetic", args(ints(6), ints(6)))
def inplace_int_ops(a, b):
    y = a + 0
    y &= b
    y |= 8
    y ^= a
    y <<= 1
    y >>= 1
    y //= 2
    y %= 5
    return y


class _Mat:
    """No __imatmul__: `@=` falls back to __matmul__ (INPLACE_MATRIX_MULTIPLY <= 3.10)."""

    def __init__(self, data):
        self.data = data

    def __matmul__(self, other):
        return _Mat(self.data @ other.data)


@case("arithmetic", args(arr(2, 3), arr(3, 2)))
def inplace_matmul_fallback(a, b):
    m = _Mat(a)
    m @= _Mat(b)
    return m.data
