"""Graph breaks: a call the tracer must not put in the graph (print, a function outside
the allowlist), a branch on array data, a break inside a loop."""
import numpy as np

from matrix.cases import case
from matrix.cases.inputs import arr, args


def _opaque(values):
    return [v * 2.0 for v in values.tolist()]


@case("graph_breaks", args(arr(4)))
def print_in_the_middle(x):
    y = x * 2.0
    print("between graphs", y.shape)
    return y + 1.0


@case("graph_breaks", args(arr(4)), args(arr(4, start=-10.0)))
def data_dependent_branch(x):
    y = x + 1.0
    if y.sum() > 0:
        return y * 2.0
    return y - 2.0


@case("graph_breaks", args(arr(4)))
def call_outside_allowlist(x):
    y = x * 3.0
    values = _opaque(y)
    return y + len(values)


@case("graph_breaks", args(arr(4)))
def data_dependent_shape(x):
    idx = np.nonzero(x > 2.0)[0]
    return x[idx] * 2.0


@case("graph_breaks", args(arr(4)))
def break_inside_loop(x):
    out = x
    for i in range(2):
        out = out + 1.0
        print("step", i)
    return out * 2.0


@case("graph_breaks", args(arr(4)))
def two_breaks(x):
    a = x * 2.0
    print("first")
    b = a + 1.0
    print("second")
    return b * a
