"""Operators on arrays: binary, reflected, in-place on temporaries, comparisons, unary, ``@``."""
import numpy as np

from .registry import case


@case(calls=lambda a: [(a.f(10),), (a.f(10),), (a.f(3, 4),), (a.f(10, dtype=np.float32),)], nodes=2)
def add_then_square(x):
    y = x + x
    z = y * y
    return z


@case(calls=lambda a: [(a.f(4, 3), a.f(3, 2), a.f(2)), (a.f(6, 3), a.f(3, 2), a.f(2)),
                       (a.f(5, 3, dtype=np.float32), a.f(3, 2, dtype=np.float32), a.f(2, dtype=np.float32))],
      nodes=2)
def affine(x, w, b):
    return x @ w + b


@case(calls=lambda a: [(a.pos(5),), (a.pos(2, 3),), (a.pos(4, dtype=np.float32),)], nodes=4)
def reflected_operators(x):
    return 1.0 - x, 2 * x, 3 / (x + 4)


@case(calls=lambda a: [(a.f(6),), (a.f(2, 5),), (a.f(6, dtype=np.float32),)], nodes=4)
def inplace_on_temporaries(x):
    y = x * 2
    y += 1
    y *= x
    y -= 0.5
    return y


@case(calls=lambda a: [(a.i(8, lo=0, hi=4), a.i(8, lo=0, hi=4)), (a.f(3, 3), a.f(3, 3)),
                       (a.i(2, 4, lo=0, hi=3, dtype=np.int32), a.i(4, lo=0, hi=3, dtype=np.int32))],
      nodes=6)
def all_comparisons(x, y):
    return x < y, x <= y, x == y, x != y, x > y, x >= y


@case(calls=lambda a: [(a.f(7),), (a.i(3, 3),), (a.f(2, 2, dtype=np.float32),)], nodes=3)
def unary_operators(x):
    return -x, +x, abs(x)


@case(calls=lambda a: [(a.i(6, lo=0, hi=64), a.i(6, lo=0, hi=64)),
                       (a.i(2, 3, lo=0, hi=16, dtype=np.int32), a.i(3, lo=0, hi=16, dtype=np.int32))],
      nodes=6)
def bitwise_on_ints(a, b):
    return (a & b) | (a ^ b), ~a, a << 2, b >> 1


@case(calls=lambda a: [(a.i(9, lo=-20, hi=20), a.i(9, lo=1, hi=6)), (a.f(4), a.pos(4)),
                       (a.i(2, 2, lo=-9, hi=9, dtype=np.int16), a.i(2, 2, lo=1, hi=4, dtype=np.int16))],
      nodes=3)
def floor_div_mod_pow(a, b):
    q = a // b
    r = a % b
    p = a ** 2
    return q, r, p


@case(calls=lambda a: [(a.i(5), a.f(5)), (a.i(2, 3, dtype=np.int32), a.f(3, dtype=np.float32)),
                       (a.b(4), a.f(4))],
      nodes=2)
def mixed_dtype_promotion(ints, floats):
    return ints + floats, ints * 2.5


@case(calls=lambda a: [(a.pos(6),), (a.pos(3, 2, dtype=np.float32),)], nodes=3)
def fractional_and_integer_powers(x):
    return x ** 0.5 + x ** 2


@case(calls=lambda a: [(a.f(3, 4), a.f(4, 5), a.f(5, 2)), (a.f(1, 2), a.f(2, 2), a.f(2, 3))], nodes=2)
def matmul_chain(a, b, c):
    return a @ b @ c


@case(calls=lambda a: [(a.f(8),), (a.f(2, 3),), (a.i(4),), (a.f(5, dtype=np.float32),)], nodes=3,
      promotion_sensitive=[3])
def numpy_scalar_arithmetic(x):
    s = x.sum()
    return s * 2 + 1


@case(calls=lambda a: [(np.array(2.5), a.f(3)), (np.array(-1.0, dtype=np.float32), a.f(2, 2, dtype=np.float32)),
                       (np.array(3), a.i(4))],
      nodes=2, promotion_sensitive=[1])
def zero_d_array_operands(x0, y):
    return x0 * y, x0 + 1


@case(calls=lambda a: [(a.f(10),), (a.f(3, 3),)], nodes=6)
def boolean_mask_logic(x):
    m = (x > 0) & (x < 1)
    return ~m | (x == 0)


@case(calls=lambda a: [(a.i(6), a.i(6, lo=1, hi=5)), (a.i(2, 2, dtype=np.int32), a.i(2, 2, lo=1, hi=3, dtype=np.int32))],
      nodes=1)
def true_division_of_ints(a, b):
    return a / b


@case(calls=lambda a: [(a.f(3, 5),), (a.f(4, 4),), (a.f(2, 6, dtype=np.float32),)], nodes=2)
def gram_matrix(x):
    return x @ x.T


@case(calls=lambda a: [(a.f(4), a.f(4)), (a.f(2, 3), a.f(2, 3))], nodes=5)
def complex_parts(x, y):
    z = x + 1j * y
    return z.real, z.imag, abs(z)


@case(calls=lambda a: [(a.f(5),), (a.f(5, dtype=np.float32),), (a.f(2, 2),)], nodes=3)
def inplace_divide_and_power(x):
    y = x * 3
    y /= 2
    y **= 2
    return y


@case(calls=lambda a: [(a.i(6, lo=0, hi=50),), (a.i(3, 2, lo=0, hi=50, dtype=np.int32),)], nodes=4)
def inplace_integer_ops(x):
    y = x + 7
    y //= 3
    y %= 5
    y <<= 1
    return y
