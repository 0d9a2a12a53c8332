"""Loops: FOR_ITER with JUMP_ABSOLUTE (<=3.10) versus JUMP_BACKWARD (3.11+) and END_FOR
(3.12); while loops, break / continue / else, GET_ITER over static iterables."""
import numpy as np

from matrix.cases import case
from matrix.cases.inputs import arr, args


@case("loops", args(arr(5)), args(arr(7)), recompiles=1)
def for_range_accumulate(x):
    out = x
    for i in range(4):
        out = out + x * i
    return out


@case("loops", args(arr(5)))
def while_counter(x):
    i = 0
    out = x
    while i < 3:
        out = out * 2.0
        i += 1
    return out


@case("loops", args(arr(5)))
def break_continue_else(x):
    out = x
    for i in range(10):
        if i % 2 == 0:
            continue
        if i > 6:
            break
        out = out + i
    else:
        out = out * 0.0
    for j in range(2):
        out = out + j
    else:
        out = out - 1.0
    return out


@case("loops", args(arr(4), arr(4, start=2.0)))
def enumerate_and_zip(a, b):
    out = a * 0.0
    for i, (u, v) in enumerate(zip((a, b), (b, a))):
        out = out + (u - v) * (i + 1)
    return out


@case("loops", args(arr(3)))
def nested_loops(x):
    out = x
    for i in range(3):
        for j in range(2):
            out = out + i * j
    return out


@case("loops", args(arr(2, 3)))
def loop_over_shape(x):
    total = x[0] * 0.0
    for i in range(x.shape[0]):
        total = total + x[i]
    return total


@case("loops", args([arr(3)(), arr(3, start=2.0)(), arr(3, start=5.0)()]))
def loop_over_list_of_arrays(arrays):
    out = arrays[0] * 0.0
    for a in arrays:
        out = np.maximum(out, a)
    return out


@case("loops", args(arr(4)))
def while_true_break(x):
    out = x
    n = 0
    while True:
        n += 1
        out = out + 1.0
        if n >= 3:
            break
    return out


@case("loops", args(arr(4)))
def while_value_is_none(x):
    found = None
    i = 0
    while found is None:
        if i == 2:
            found = x * i
        i += 1
    return found
