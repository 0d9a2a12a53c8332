"""Constants reach generated code exactly: every kind of constant, through every backend that
runs here, in a function's code and as an argument, compared bit for bit with the plain call
(the sign of a zero, a NaN's payload, complex parts, NumPy scalar types, huge ints)."""
from __future__ import annotations

import math
import struct
import types
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compiler

BACKENDS = ["eager", "numpy"]
_PLACEHOLDER = 98765.4321  # the literal in each program's source that the constant replaces

_NAN_PAYLOADS = [struct.unpack("<d", struct.pack("<Q", bits))[0]
                 for bits in (0x7FF8000000000001, 0xFFF8000000000000, 0x7FF4000000000000, 0x7FFFFFFFFFFFFFFF)]
_DTYPES = [np.float16, np.float32, np.float64, np.complex64, np.complex128, np.int8, np.int16, np.int32,
           np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]

python_constants = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, math.inf, -math.inf] + _NAN_PAYLOADS),
    st.complex_numbers(allow_nan=True, allow_infinity=True),
    st.sampled_from([complex(0.0, -2.0), complex(-0.0, 2.0), complex(-0.0, -0.0), complex(math.nan, -0.0)]),
    st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
    st.sampled_from([10 ** 30, -(10 ** 40) - 7, 2 ** 63, 2 ** 64 - 1, True, False, None]),
    st.text(max_size=6), st.binary(max_size=6),
)
numpy_constants = st.sampled_from(_DTYPES).flatmap(
    lambda dtype: hnp.from_dtype(np.dtype(dtype)).map(lambda v, t=dtype: t(v)))
constants = st.one_of(python_constants, numpy_constants)


def _bits(value: Any) -> Any:
    """A value as something == compares bit for bit (type included)."""
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:  # the bytes are pointers: compare the elements
            return ("ndarray", value.dtype.str, value.shape, tuple(_bits(v) for v in value.ravel().tolist()))
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.generic):
        return (type(value).__name__, np.asarray(value).tobytes())
    if isinstance(value, float):
        return ("float", struct.pack("<d", value))
    if isinstance(value, complex):
        return ("complex", struct.pack("<dd", value.real, value.imag))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_bits(v) for v in value))
    return (type(value).__name__, repr(value))


def _with_constant(fn: types.FunctionType, constant: Any) -> types.FunctionType:
    """``fn`` with the placeholder literal in its code replaced by ``constant`` itself."""
    consts = tuple(constant if type(c) is float and c == _PLACEHOLDER else c for c in fn.__code__.co_consts)
    assert any(a is not b for a, b in zip(consts, fn.__code__.co_consts))
    made = types.FunctionType(fn.__code__.replace(co_consts=consts), fn.__globals__, fn.__name__)
    made.__qualname__ = fn.__qualname__
    return made


def _return_it(x):
    return 98765.4321


def _in_an_array_op(x):
    return x * 0 + 98765.4321, 98765.4321


def _in_a_container(x):
    return [98765.4321, (98765.4321, x.shape)], {"k": 98765.4321}


def _into_numpy(x):
    return np.full(2, 98765.4321), np.asarray(98765.4321)


def _as_an_argument(x, k):
    return x + k, k


def _outcome(fn, *args):
    try:
        return ("value", _bits(fn(*args)))
    except Exception as error:  # the plain call's exception is its behaviour
        return ("raised", type(error).__name__, str(error))


@settings(max_examples=120, deadline=None)
@given(constant=constants)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("program", [_return_it, _in_an_array_op, _in_a_container, _into_numpy],
                         ids=lambda p: p.__name__[1:])
def test_a_constant_in_the_code_is_the_same_object_bit_for_bit(program, backend, constant):
    compiler.reset()
    plain = _with_constant(program, constant)
    compiled = compiler.compile(_with_constant(program, constant), backend=backend)
    x = np.arange(3.0)
    with np.errstate(all="ignore"):
        want = _outcome(plain, x)
        assert _outcome(compiled, x) == want
        assert _outcome(compiled, x) == want  # the cache hit too


@settings(max_examples=120, deadline=None)
@given(constant=constants, other=constants)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_constant_argument_is_the_same_object_bit_for_bit(backend, constant, other):
    compiler.reset()  # per example: past the cache limit the function would run natively
    compiled = compiler.compile(_as_an_argument, backend=backend)
    x = np.arange(3.0)
    with np.errstate(all="ignore"):
        for k in (constant, other, constant):  # a second value, then the first again (guards)
            assert _outcome(compiled, x, k) == _outcome(_as_an_argument, x, k)
    assert all(e.fallback_reason is None for e in compiler.events()), [e.fallback_reason for e in compiler.events()]
