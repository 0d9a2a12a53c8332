"""Structural pattern matching (3.10+ syntax; loaded only where the running table has
MATCH_CLASS): MATCH_SEQUENCE / MAPPING / KEYS / CLASS, GET_LEN, COPY_DICT_WITHOUT_KEYS
(3.10), ROT_N (3.10) versus COPY / SWAP."""
from matrix.cases import case
from matrix.cases.inputs import arr, args


class _Pair:
    __match_args__ = ("left", "right")

    def __init__(self, left, right):
        self.left = left
        self.right = right


@case("pattern_matching", args(arr(3), (1.0, 2.0)), args(arr(3), {"k": 3.0, "z": 1.0}), recompiles=1)
def match_sequence_and_mapping(x, spec):
    match spec:
        case (a, b):
            return x * a + b
        case {"k": k, **rest}:
            return x * k + len(rest)
        case _:
            return x


@case("pattern_matching", args(arr(3)))
def match_class_pattern(x):
    match _Pair(2.0, 3.0):
        case _Pair(left, right=r) if left > 1:
            return x * left + r
        case [first, *others]:
            return x + first + len(others)
    return x


@case("pattern_matching", args(arr(3), {"a": 1.0, "b": 2.0}))
def match_mapping_two_captures(x, spec):
    match spec:
        case {"a": a, "b": b}:
            return x * a - b
    return x
