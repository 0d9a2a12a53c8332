"""Comprehensions: nested code objects called with an iterator (<=3.11) versus inlined
with LOAD_FAST_AND_CLEAR / SWAP (3.12, PEP 709); generator expressions stay separate
code objects (GEN_START 3.10, RETURN_GENERATOR 3.11+)."""
import numpy as np

from matrix.cases import case
from matrix.cases.inputs import arr, args


@case("comprehensions", args(arr(4)))
def list_comprehension(x):
    parts = [x * k for k in range(3)]
    return parts[0] + parts[1] + parts[2]


@case("comprehensions", args(arr(4)))
def dict_comprehension(x):
    table = {name: x + i for i, name in enumerate(("a", "b", "c"))}
    return table["a"] * table["c"]


@case("comprehensions", args(arr(4)))
def set_comprehension_of_constants(x):
    sizes = {k % 3 for k in range(10)}
    return x * len(sizes)


@case("comprehensions", args(arr(4)))
def generator_expression_sum(x):
    return sum(x * k for k in range(1, 4))


@case("comprehensions", args(arr(2, 3)))
def nested_comprehension(x):
    rows = [[x[i, j] * 2.0 for j in range(3)] for i in range(2)]
    return rows[1][2] + rows[0][0]


@case("comprehensions", args(arr(5)))
def filtered_comprehension(x):
    picked = [x * i for i in range(6) if i % 2 == 0]
    return np.stack(picked)


@case("comprehensions", args(arr(3)))
def comprehension_reads_closure_cell(x):
    factor = 3.0

    def scaled(values):
        return [v * factor for v in values]
    return scaled([x, x + 1.0])[1]


@case("comprehensions", args(arr(3)))
def tuple_of_generator(x):
    return tuple(x + k for k in range(3))


def _chain(first, second):
    yield from first
    yield from second


@case("comprehensions", args(arr(3)))
def generator_with_yield_from(x):
    """A generator function delegating with `yield from` (SEND / JUMP_BACKWARD_NO_INTERRUPT)."""
    parts = list(_chain((x, x * 2.0), (x * 3.0,)))
    return parts[0] + parts[1] * parts[2]
