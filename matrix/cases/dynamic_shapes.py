"""Dynamic shapes: how many compiles a call sequence of changing sizes costs.

By default (automatic dynamic, as Dynamo) the first compile is static and the
recompile a changed size causes makes that dimension symbolic, so further sizes
hit it; ``dynamic=True`` is symbolic from the first call; ``dynamic=False`` compiles
once per size.  Sizes 0 and 1 are always specialized.  A size read into Python
(``x.shape[0]``, ``len(x)``) stays symbolic through arithmetic, as an operand and in a
reshape's target; a use that needs its value (``range(n)``) specializes with a guard.
"""
import numpy as np

from matrix.cases import case
from matrix.cases.inputs import arr, args

_LENGTHS = (4, 5, 6, 7, 8, 9, 10, 11)


def _norm(x):
    # keepdims: an array, not a NumPy scalar (torch.compile returns 0-d arrays for those)
    return (x * x).sum(keepdims=True) ** 0.5


@case("dynamic_shapes", *[args(arr(n)) for n in _LENGTHS], recompiles=1)
def automatic_dynamic_lengths(x):
    """8 lengths: a static compile, then one with the length symbolic."""
    return np.sin(x) * 2.0 + 1.0, _norm(x)


@case("dynamic_shapes", *[args(arr(n)) for n in _LENGTHS], options={"dynamic": True})
def dynamic_true_lengths(x):
    """8 lengths, dynamic=True: one compile."""
    return np.sin(x) * 2.0 + 1.0, _norm(x)


@case("dynamic_shapes", *[args(arr(n)) for n in _LENGTHS[:4]], recompiles=3, options={"dynamic": False})
def dynamic_false_lengths(x):
    """4 lengths, dynamic=False: one compile each."""
    return np.sin(x) * 2.0 + 1.0, _norm(x)


@case("dynamic_shapes", *[args(arr(n, 3), arr(n, 3)) for n in _LENGTHS[:5]], recompiles=1)
def dynamic_rows_broadcast(x, y):
    """Rows change: x + y needs the two row counts equal (a relation between symbols)."""
    return (x + y).mean(axis=0), x - y[:, :1]


@case("dynamic_shapes", *[args(arr(2 * n)) for n in _LENGTHS[:5]], recompiles=1)
def dynamic_views(x):
    """Slices, reshape(-1, 2) and a transpose over a dynamic length."""
    pairs = x.reshape(-1, 2).T
    return x[1:] - x[:-1], pairs.sum(axis=0), x[::3]


@case("dynamic_shapes", *[args(arr(n), arr(n + 2)) for n in _LENGTHS[:5]], recompiles=1)
def dynamic_concatenate(x, y):
    return np.concatenate([x, y, x]) * 0.5


@case("dynamic_shapes", *[args(arr(n)) for n in _LENGTHS[:4]], recompiles=1)
def size_read_into_python(x):
    """x.shape[0] used as a number: a graph input read from the call's array (symbolic)."""
    return x * x.shape[0]


@case("dynamic_shapes", *[args(arr(n)) for n in _LENGTHS], recompiles=1)
def size_divides_a_sum(x):
    """n = x.shape[0] in Python, then a NumPy value divided by it: 8 lengths, two compiles."""
    n = x.shape[0]
    return (x * 2).sum(keepdims=True) / n


@case("dynamic_shapes", *[args(arr(2 * n)) for n in _LENGTHS], recompiles=1)
def len_in_reshape_target(x):
    """x.reshape(len(x) // 2, 2): the target's size becomes -1 under the guard s0 % 2 == 0."""
    return x.reshape(len(x) // 2, 2).sum(0)


@case("dynamic_shapes", *[args(arr(n)) for n in _LENGTHS[:4]], recompiles=3, options={"dynamic": True})
def size_specialized_by_range(x):
    """range(len(x)) unrolls: the size is specialized (guarded), a compile per length."""
    total = x[:1] * 0.0
    for i in range(len(x)):
        total = total + x[i]
    return total


@case("dynamic_shapes", args(arr(5)), args(arr(1)), args(arr(0)), args(arr(7)), args(arr(1)), recompiles=2,
      options={"dynamic": True})
def sizes_zero_and_one_specialized(x):
    """dynamic=True: 0 and 1 get entries of their own; 5 and 7 share one."""
    return x * 2.0, x.sum(keepdims=True)
