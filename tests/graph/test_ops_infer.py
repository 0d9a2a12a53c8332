"""``OpInfo.infer`` agrees with NumPy: for every allow-listed op, on generated
shapes, dtypes and arguments, the inferred (shape, dtype, kind) is what the
real call returns, and a call NumPy rejects is refused with Unsupported."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler.ops as ops
from compiler.exc import Unsupported
from compiler.ops import DATA_DEPENDENT_WARNINGS
from compiler.graph import TensorMeta
from compiler.ops.evaluated import identity_like_meta, reshaped_identity_like_meta
from compiler.ops.standins import VALUE_BASED_CASTING, map_metas
from tests.graph.op_cases import builder_for

ALL_OPS = ops.all_ops()
# Examples per op; GRAPH_EXAMPLES=200 for a deeper run.
EXAMPLES = int(os.environ.get("GRAPH_EXAMPLES", "25"))


def _to_meta(value):
    if isinstance(value, (np.ndarray, np.generic)):
        return TensorMeta.of(value)
    if isinstance(value, tuple):
        return tuple(_to_meta(v) for v in value)
    if isinstance(value, list):
        return [_to_meta(v) for v in value]
    return value


def _real_meta(result, op=None):
    if op is not None and op.kind == "query":  # a metadata query's answer (a shape, a dtype)
        return bool(result) if isinstance(result, np.bool_) else result
    if isinstance(result, (tuple, list)) and all(isinstance(r, (np.ndarray, np.generic))
                                                 for r in result):
        return tuple(_real_meta(r) for r in result)
    return TensorMeta.of(result)


def _zeroed(value):
    """The same arrays (shape, dtype, kind) filled with zeros."""
    if isinstance(value, np.ndarray):
        return np.zeros_like(value)
    if isinstance(value, np.generic):
        return value.dtype.type(0)
    if isinstance(value, (tuple, list)):
        return type(value)(_zeroed(v) for v in value)
    if isinstance(value, dict):
        return {k: _zeroed(v) for k, v in value.items()}
    return value


def _identities(value, fill):
    """Linear algebra's stand-ins (compiler.ops.evaluated: identity matrices) for arrays."""
    if isinstance(value, np.ndarray):
        return fill(TensorMeta.of(value))
    if isinstance(value, (tuple, list)):
        return type(value)(_identities(v, fill) for v in value)
    return _zeroed(value)


def _run_on_other_values(op, args, kwargs):
    try:
        return _run(op, _zeroed(args), _zeroed(kwargs))
    except Exception:
        pass
    try:
        return _run(op, _identities(args, identity_like_meta),
                    {k: _identities(v, identity_like_meta) for k, v in kwargs.items()})
    except Exception:
        return _run(op, _identities(args, reshaped_identity_like_meta),
                    {k: _identities(v, reshaped_identity_like_meta) for k, v in kwargs.items()})


def _same(inferred, real) -> bool:
    if not isinstance(real, (TensorMeta, tuple)) or (isinstance(real, tuple) and not all(
            isinstance(r, TensorMeta) for r in real)):  # a metadata query: the constant itself
        return type(inferred) is type(real) and inferred == real
    if isinstance(real, tuple):
        return isinstance(inferred, tuple) and len(inferred) == len(real) and \
            all(_same(i, r) for i, r in zip(inferred, real))
    return isinstance(inferred, TensorMeta) and inferred.same_value_type(real)


def _run(op, args, kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return op.fn(*args, **kwargs)


def _warns(op, args, kwargs) -> bool:
    with np.errstate(all="ignore"), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        op.fn(*args, **kwargs)
    return bool(seen)


def _warns_on_other_values(op, args, kwargs) -> bool:
    """The data-dependence probe of compiler.ops.evaluated saw a warning on twos."""
    def twos(value):
        if isinstance(value, np.ndarray):
            return np.full_like(value, 2 if value.dtype != np.bool_ else True)
        if isinstance(value, (tuple, list)):
            return type(value)(twos(v) for v in value)
        return value
    try:
        return _warns(op, twos(args), {k: twos(v) for k, v in kwargs.items()})
    except Exception:
        return False


def test_allowlist_has_at_least_100_numpy_functions():
    names = {op.name for op in ALL_OPS if op.name.startswith("numpy.")}
    assert len(names) >= 100, sorted(names)


@pytest.mark.parametrize("op", ALL_OPS, ids=[op.name for op in ALL_OPS])
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_infer_matches_numpy(op, data):
    args, kwargs = builder_for(op)(data.draw)
    meta_args = _to_meta(args)
    meta_kwargs = {k: _to_meta(v) for k, v in kwargs.items()}
    try:
        real = _real_meta(_run(op, args, kwargs), op)
    except Exception:  # NumPy refuses these arguments (or returns no array)
        try:
            # an error that depends on the values (int ** negative int, a singular matrix): the
            # compiled graph raises it at run time, as the plain call does
            real = _real_meta(_run_on_other_values(op, args, kwargs), op)
        except Exception:
            with pytest.raises(Unsupported):
                op.infer(*meta_args, **meta_kwargs)
            return
    try:
        inferred = op.infer(*meta_args, **meta_kwargs)
    except Unsupported as refusal:
        # The only refusals allowed for a call NumPy accepts: a result shape
        # that depends on the data, or a dtype that depends on a 0-d
        # operand's value (NumPy 1.x value-based casting).
        # Or a Python warning the call issues (the graph would issue it on every run, out of
        # its place): refused when the real call warns too, or always for ops whose warnings
        # depend on the values (compiler.ops.effects.DATA_DEPENDENT_WARNINGS).
        reason = str(refusal)
        assert "data-dependent" in reason or (VALUE_BASED_CASTING and "value-based casting" in reason) \
            or ("issues a warning for these argument types" in reason and _warns(op, args, kwargs)) \
            or ("warning depending on the values" in reason
                and op.name.split(".")[-1] in DATA_DEPENDENT_WARNINGS) \
            or ("issues a warning depending on the values" in reason and _warns_on_other_values(op, args, kwargs)) \
            or ("answer depends on the value" in reason and VALUE_BASED_CASTING), \
            f"{op.name} refused a valid call: {refusal}"
        return
    assert _same(inferred, real), f"{op.name}{args!r} {kwargs!r}: inferred {inferred}, real {real}"


def test_every_op_has_an_argument_builder():
    missing = []
    for op in ALL_OPS:
        try:
            builder_for(op)
        except KeyError:
            missing.append(op.name)
    assert not missing


def test_value_dependent_dtype_is_refused_or_exact():
    op = ops.lookup_function(np.add)
    x, zero_d = TensorMeta((3,), np.int8), TensorMeta((), np.int64)
    if VALUE_BASED_CASTING:
        with pytest.raises(Unsupported, match="value-based casting"):
            op.infer(x, zero_d)
    else:
        assert op.infer(x, zero_d).dtype == np.result_type(np.int8, np.int64)


@pytest.mark.parametrize("index", [[True, False, True], TensorMeta((3,), np.bool_),
                                   (slice(None), TensorMeta((3,), np.bool_)), [0.5], 1.0])
def test_getitem_with_data_dependent_index_is_unsupported(index):
    with pytest.raises(Unsupported, match="data-dependent"):
        ops.lookup_operator("getitem").infer(TensorMeta((3, 3), np.float64), index)


@pytest.mark.parametrize("index", [[0, 3], [[-4]], (slice(None), [0, 3])])
def test_getitem_constant_index_out_of_range_is_refused_with_numpys_error(index):
    # refused at trace time, so the frame runs natively and NumPy raises its IndexError
    with pytest.raises(Unsupported, match="IndexError"):
        ops.lookup_operator("getitem").infer(TensorMeta((3, 3), np.float64), index)


def test_getitem_with_a_graph_index_array_has_a_static_shape_and_may_fail_at_run_time():
    from compiler.graph import Graph
    g = Graph()
    eye = g.placeholder("eye", TensorMeta((5, 5), np.float64))
    idx = g.placeholder("idx", TensorMeta((2, 3), np.intp))
    onehot = g.call(ops.lookup_operator("getitem"), (eye, idx))
    columns = g.call(ops.lookup_operator("getitem"), (eye, (slice(None), [1, 0])))
    assert (onehot.meta.shape, onehot.meta.dtype) == ((2, 3, 5), np.float64)
    assert columns.meta.shape == (5, 2)
    assert ops.may_fail_at_run_time(onehot)
    assert not ops.may_fail_at_run_time(columns)  # constants are checked at trace time


@pytest.mark.parametrize("value", [[1, [2]], [2**70], ["a"], [np.float32(1)]])
def test_array_of_anything_but_a_numeric_constant_is_refused(value):
    with pytest.raises(Unsupported):
        ops.lookup_function(np.array).infer(value)


def test_broadcast_mismatch_names_the_shapes():
    with pytest.raises(Unsupported, match=r"\(3,\) \(4,\)"):
        ops.lookup_function(np.add).infer(TensorMeta((3,), np.float64), TensorMeta((4,), np.float64))


@pytest.mark.parametrize("kwargs", [{"out": TensorMeta((3,), np.float64)}, {"where": True}])
def test_out_and_where_keywords_are_unsupported(kwargs):
    with pytest.raises(Unsupported, match="not supported in a graph"):
        ops.lookup_function(np.add).infer(TensorMeta((3,), np.float64), 1.0, **kwargs)


def test_aliases_share_the_canonical_name():
    assert ops.lookup_function(np.abs).name == "numpy.absolute"
    assert ops.lookup_function(np.amax).name == ops.lookup_function(np.max).name == "numpy.max"
    assert ops.lookup_function(np.around).name == "numpy.round"
    assert ops.lookup_function(np.mod).name == "numpy.remainder"


def test_empty_and_empty_like_are_creation_ops_never_folded():
    # their contents are whatever memory held, in the plain function as in the graph: the
    # graph calls them at run time (the kind "creation" keeps the tracer from folding them)
    assert ops.lookup_function(np.empty_like).kind == "creation"
    assert ops.lookup_function(np.empty).kind == "creation"


def test_lookup_operator_unknown_name_lists_accepted():
    with pytest.raises(KeyError, match="accepted: .*add"):
        ops.lookup_operator("spaceship")


def test_attributes():
    assert {"shape", "ndim", "dtype", "size", "itemsize", "nbytes"} == ops.ARRAY_ATTRIBUTES
    for name in ("T", "real", "imag"):
        assert ops.lookup_attribute(name) is ops.lookup_method(name)
    assert ops.lookup_attribute("sum") is None
    meta = ops.lookup_method("T").infer(TensorMeta((2, 3), np.float32))
    assert (meta.shape, meta.dtype) == ((3, 2), np.float32)


def test_allow_in_graph_infers_by_running_on_stand_ins():
    def double_rows(x):
        return np.concatenate([x, x], axis=0)
    op = ops.allow_in_graph(double_rows)
    try:
        assert ops.lookup_function(double_rows) is op
        assert op.name.endswith("double_rows")
        meta = op.infer(TensorMeta((2, 5), np.int16))
        assert (meta.shape, meta.dtype, meta.kind) == ((4, 5), np.int16, "array")
    finally:
        ops.remove_function(double_rows)
    assert ops.lookup_function(double_rows) is None


def test_which_nodes_may_fail_at_run_time():
    """Views, copies and integer arithmetic cannot fail; float arithmetic, integer division and
    NumPy-scalar integer arithmetic (it warns on overflow) may (compiler.ops.effects)."""
    from compiler.graph import Graph
    g = Graph()
    xf = g.placeholder("xf", TensorMeta((3,), np.float64))
    xi = g.placeholder("xi", TensorMeta((3,), np.int64))
    si = g.placeholder("si", TensorMeta((), np.int64, "scalar"))
    add, div = ops.lookup_operator("add"), ops.lookup_operator("floordiv")
    cannot = [g.call(ops.lookup_method("reshape"), (xf, (3, 1))), g.call(add, (xi, xi)),
              g.call(ops.lookup_function(np.concatenate), ([xi, xi],)),
              g.call(ops.lookup_operator("getitem"), (xf, slice(1, None))), g.call(add, (xi, 1))]
    may = [g.call(add, (xf, xf)), g.call(div, (xi, xi)), g.call(add, (si, si)),
           g.call(ops.lookup_function(np.concatenate), ([xi, xf],)), g.call(add, (xi, 2 ** 40)),
           g.call(ops.lookup_method("astype"), (xf, np.int8))]
    assert [ops.may_fail_at_run_time(n) for n in cannot] == [False] * len(cannot)
    assert [ops.may_fail_at_run_time(n) for n in may] == [True] * len(may)
