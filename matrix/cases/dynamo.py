"""PyTorch Dynamo's two `test_ir_count` functions, as upstream defines them.

ir_count 10 / 6 on 3.8-3.10 and 11 / 7 on 3.11+ (the extra one is RESUME)."""
from matrix.cases import case
from matrix.cases.inputs import arr, args


@case("dynamo", args(arr(10)), name="dynamo_test_ir_count_test1")
def test1(x):
    y = x + x
    z = y * y
    return z


@case("dynamo", args(arr(10)), name="dynamo_test_ir_count_test2")
def test2(x):
    y = x + x
    return y
