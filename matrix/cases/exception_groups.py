"""except* (3.11+ syntax; loaded only where the running table has CHECK_EG_MATCH):
CHECK_EG_MATCH, PREP_RERAISE_STAR (3.11) / CALL_INTRINSIC_2 (3.12+)."""
from matrix.cases import case
from matrix.cases.inputs import arr, args


@case("exception_groups", args(arr(3)))
def except_star_caught(x):
    try:
        raise ExceptionGroup("planned", [ValueError("v"), KeyError("k")])
    except* ValueError:
        y = x * 2.0
    except* KeyError:
        y = x * 3.0
    return y
