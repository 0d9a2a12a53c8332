"""PyTorch Dynamo's two `test_ir_count` functions, as upstream defines them.

Source: pytorch test/dynamo/test_utils.py, `TestDynamoTimed.test_ir_count` (it reads
`CompilationMetrics.ir_count` of the first compiled frame, `torch.compile(test1)(
torch.randn(10, 10))`).  Its table, as the revision this project was founded on had it:

    (3, 9): (10, 6), (3, 10): (10, 6), (3, 11): (10, 6), (3, 12): (11, 7), (3, 13): (11, 7)

The 3.11 row is the founding bug: Dynamo counts 11 and 7 there (RESUME is counted from
3.11 on, not from 3.12), and no CI ran that row.  Later upstream revisions (e.g.
pytorch/pytorch@0171f44b) read (3, 11): (11, 7) and add (3, 14): (11, 7).  The table is
kept here as the founding revision had it, so that the report flags that row.
"""
from matrix.cases import UpstreamExpectation, case
from matrix.cases.inputs import arr, args

_SOURCE = "Dynamo's test_ir_count (pytorch test/dynamo/test_utils.py), hard-coded table"
TEST1_TABLE = UpstreamExpectation("ir_count", {"3.9": 10, "3.10": 10, "3.11": 10, "3.12": 11, "3.13": 11},
                                  _SOURCE)
TEST2_TABLE = UpstreamExpectation("ir_count", {"3.9": 6, "3.10": 6, "3.11": 6, "3.12": 7, "3.13": 7},
                                  _SOURCE)


@case("dynamo", args(arr(10)), name="dynamo_test_ir_count_test1", upstream=TEST1_TABLE)
def test1(x):
    y = x + x
    z = y * y
    return z


@case("dynamo", args(arr(10)), name="dynamo_test_ir_count_test2", upstream=TEST2_TABLE)
def test2(x):
    y = x + x
    return y
