"""Containers: BUILD_*_UNPACK (3.8) versus LIST_EXTEND / SET_UPDATE / DICT_UPDATE /
DICT_MERGE / LIST_TO_TUPLE (3.9+), CONTAINS_OP / IS_OP (3.9+), UNPACK_EX, ROT_TWO versus
SWAP, BINARY_SLICE / STORE_SLICE (3.12), collections containers."""
import collections

from matrix.cases import case
from matrix.cases.inputs import arr, args

_Point = collections.namedtuple("_Point", ["x", "y"])


@case("containers", args(arr(4)))
def tuple_unpack(x):
    a, b = x * 2.0, x + 1.0
    return b, a


@case("containers", args(arr(4)))
def starred_unpack(x):
    first, *middle, last = (x, x * 2.0, x * 3.0, x * 4.0)
    return first + last + middle[0] + middle[1]


@case("containers", args(arr(3), [1.0, 2.0]))
def star_into_list_and_tuple(x, extra):
    items = [x, *extra, 5.0]
    packed = (*extra, x)
    return items[0] * items[1] + packed[-1], len(items), len(packed)


@case("containers", args(arr(3)))
def dict_merge_and_set_update(x):
    base = {"a": 1.0, "b": 2.0}
    merged = {**base, "c": 3.0, **{"a": 4.0}}
    keys = {*merged, "z"}
    return x * merged["a"] + merged["c"], len(keys)


@case("containers", args(arr(3), "b"), args(arr(3), "q"), recompiles=1)
def membership_tests(x, key):
    table = {"a": 1.0, "b": 2.0}
    if key in table:
        return x * table[key]
    if key not in ("p", "q"):
        return x
    return -x


@case("containers", args(arr(3), None), args(arr(3), 2.0), recompiles=1)
def identity_tests(x, scale):
    if scale is None:
        return x
    if scale is not None and x is not None:
        return x * scale
    return x


@case("containers", args(arr(4), [1.0, 2.0, 3.0]))
def list_mutation(x, values):
    values.append(4.0)
    values[0] = 10.0
    del values[1]
    values.extend([5.0])
    return x * values[0] + values[-1], values


@case("containers", args(arr(4), [1.0, 2.0, 3.0, 4.0]))
def list_slicing(x, values):
    head = values[1:3]
    values[0:2] = [9.0]
    return x * head[0] + x[1:3].sum(), values


@case("containers", args(arr(6), [1.0, 2.0, 3.0, 4.0], 1, 3))
def slicing_with_variable_bounds(x, values, i, j):
    """BINARY_SLICE / STORE_SLICE on 3.12+ (3.14 folds constant bounds into a slice constant)."""
    head = values[i:j]
    values[i:j] = [9.0]
    y = x.copy()
    y[i:j] = x[i:j] * 2.0
    return y + head[0], values


@case("containers", args(arr(4), arr(4, start=3.0)))
def swap_values(a, b):
    a, b = b, a
    c, d, e = b, a, b
    return a - b + c * d - e


@case("containers", args(arr(4)))
def namedtuple_and_collections(x):
    p = _Point(x, x * 2.0)
    od = collections.OrderedDict()
    od["k"] = p.y
    dd = collections.defaultdict(float)
    dd["n"] += 1.0
    return p.x + od["k"] * dd["n"], p[1]


@case("containers", args(arr(3)))
def dict_iteration(x):
    weights = {"a": 1.0, "b": 2.0, "c": 3.0}
    out = x * 0.0
    for name, w in weights.items():
        out = out + x * w
    return out, sorted(weights.keys())


@case("containers", args(arr(3), None), args(arr(3), 0.0), recompiles=1)
def boolean_operator_values(x, maybe):
    scale = maybe or 2.0
    both = maybe and 5.0
    return x * scale, both


@case("containers", args(arr(3), None))
def identity_values(x, other):
    same = x is x
    different = other is not None
    return x * same, different


@case("containers", args(arr(3)))
def walk_linked_tuples(x):
    link = (x, (x * 2.0, (x * 3.0, None)))
    total = x * 0.0
    while link is not None:
        total = total + link[0]
        link = link[1]
    return total
