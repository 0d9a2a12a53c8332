"""Graph nodes -> lowered ops, one node at a time.

Every call node is lowered on its own to a ``PointwiseOp`` (an elementwise
op with its operands cast to one compute dtype) or a ``ReduceOp``
(sum/mean/max/min over contiguous axes).  A node that cannot be lowered
raises ``NotLowerable`` naming the node and why: the backend then runs the
whole graph through the eager backend (per graph, with the reason logged).
regions.py groups the lowered ops into kernels.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Sequence, Tuple, Union

import numpy as np

from compiler.graph import Node, TensorMeta

# dtypes a kernel can load and store (Triton: i1, i8..i64, u8..u64, fp16..fp64).
SUPPORTED_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64))

# Offsets are 32-bit in the generated kernels.
MAX_ELEMENTS = 2 ** 31 - 1


class NotLowerable(Exception):
    """A node (or graph) the Triton backend does not lower; the message is the reason."""


@dataclass(frozen=True)
class Const:
    """A Python (or NumPy scalar) constant operand."""

    value: Union[bool, int, float]


Operand = Union[Node, Const]


@dataclass
class PointwiseOp:
    node: Node
    op: str                      # key of codegen's expression table
    operands: Tuple[Operand, ...]
    compute: np.dtype            # operands are cast to this before the op
    out: np.dtype


@dataclass
class ReduceOp:
    node: Node
    op: str                      # "sum" | "mean" | "max" | "min"
    source: Node
    axes: Tuple[int, ...]        # sorted, non-negative, contiguous
    acc: np.dtype                # accumulation dtype
    out: np.dtype

    @property
    def source_shape(self) -> Tuple[int, ...]:
        return self.source.meta.shape

    def split(self) -> Tuple[int, int, int]:
        """(outer, reduced, inner) extents of the source seen as 3-D."""
        shape = self.source_shape
        first, last = self.axes[0], self.axes[-1]
        return (_prod(shape[:first]), _prod(shape[first:last + 1]), _prod(shape[last + 1:]))

    @property
    def is_last_axis(self) -> bool:
        ndim = len(self.source_shape)
        return self.axes == (ndim - 1,)


LoweredOp = Union[PointwiseOp, ReduceOp]


def _prod(values: Sequence[int]) -> int:
    result = 1
    for value in values:
        result *= int(value)
    return result


# ---------------------------------------------------------------------------
# one node at a time

# canonical target -> (op key, family).  Families: "arith" computes in the
# result dtype; "compare" in the operands' common dtype, giving bool;
# "logical" on bools; "float" needs a floating result.
_ELEMENTWISE: Dict[str, Tuple[str, str]] = {}


def _register(op: str, family: str, *targets: str) -> None:
    for target in targets:
        _ELEMENTWISE[target] = (op, family)


_register("add", "arith", "numpy.add", "operator.add", "operator.iadd")
_register("sub", "arith", "numpy.subtract", "operator.sub", "operator.isub")
_register("mul", "arith", "numpy.multiply", "operator.mul", "operator.imul")
_register("truediv", "float", "numpy.divide", "operator.truediv", "operator.itruediv")
_register("maximum", "arith", "numpy.maximum")
_register("minimum", "arith", "numpy.minimum")
_register("neg", "arith", "numpy.negative", "operator.neg")
_register("pos", "arith", "numpy.positive", "operator.pos")
_register("abs", "arith", "numpy.absolute", "numpy.fabs", "operator.abs")
_register("square", "arith", "numpy.square")
_register("reciprocal", "float", "numpy.reciprocal")
_register("exp", "float", "numpy.exp")
_register("exp2", "float", "numpy.exp2")
_register("log", "float", "numpy.log")
_register("log2", "float", "numpy.log2")
_register("sqrt", "float", "numpy.sqrt")
_register("sin", "float", "numpy.sin")
_register("cos", "float", "numpy.cos")
_register("floor", "float", "numpy.floor")
_register("ceil", "float", "numpy.ceil")
_register("and", "bitwise", "numpy.bitwise_and", "operator.and_", "operator.iand")
_register("or", "bitwise", "numpy.bitwise_or", "operator.or_", "operator.ior")
_register("xor", "bitwise", "numpy.bitwise_xor", "operator.xor", "operator.ixor")
_register("invert", "bitwise", "numpy.invert", "operator.invert")
_register("lt", "compare", "numpy.less", "operator.lt")
_register("le", "compare", "numpy.less_equal", "operator.le")
_register("gt", "compare", "numpy.greater", "operator.gt")
_register("ge", "compare", "numpy.greater_equal", "operator.ge")
_register("eq", "compare", "numpy.equal", "operator.eq")
_register("ne", "compare", "numpy.not_equal", "operator.ne")
_register("logical_and", "logical", "numpy.logical_and")
_register("logical_or", "logical", "numpy.logical_or")
_register("logical_xor", "logical", "numpy.logical_xor")
_register("logical_not", "logical", "numpy.logical_not")
_register("isnan", "floattest", "numpy.isnan")
_register("isinf", "floattest", "numpy.isinf")
_register("isfinite", "floattest", "numpy.isfinite")

_ARITY = {"neg": 1, "pos": 1, "abs": 1, "square": 1, "reciprocal": 1, "exp": 1, "exp2": 1,
          "log": 1, "log2": 1, "sqrt": 1, "sin": 1, "cos": 1, "floor": 1, "ceil": 1,
          "invert": 1, "logical_not": 1, "isnan": 1, "isinf": 1, "isfinite": 1}

INPLACE_TARGETS = frozenset({
    "operator.iadd", "operator.isub", "operator.imul", "operator.itruediv", "operator.iand",
    "operator.ior", "operator.ixor", "operator.ipow", "operator.ifloordiv", "operator.imod",
    "operator.ilshift", "operator.irshift", "operator.imatmul"})

_REDUCTIONS = {"numpy.sum": "sum", "ndarray.sum": "sum", "numpy.mean": "mean",
               "ndarray.mean": "mean", "numpy.max": "max", "ndarray.max": "max",
               "numpy.min": "min", "ndarray.min": "min"}
# Parameters after the array, in NumPy's positional order.
_REDUCTION_PARAMS = {"sum": ("axis", "dtype", "out", "keepdims", "initial", "where"),
                     "mean": ("axis", "dtype", "out", "keepdims", "where"),
                     "max": ("axis", "out", "keepdims", "initial", "where"),
                     "min": ("axis", "out", "keepdims", "initial", "where")}


def lowering_table() -> Dict[str, str]:
    """Canonical target -> what it lowers to (for documentation and tests)."""
    table = {target: op for target, (op, _) in _ELEMENTWISE.items()}
    table.update(_REDUCTIONS)
    table.update({"numpy.where": "where", "numpy.clip": "clip", "ndarray.clip": "clip",
                  "ndarray.astype": "cast", "numpy.power": "power", "operator.pow": "power",
                  "operator.ipow": "power"})
    return table


def array_meta(node: Node) -> TensorMeta:
    meta = node.meta
    if not isinstance(meta, TensorMeta):
        raise NotLowerable(f"{node.name} ({node.target}) has {type(meta).__name__} metadata, "
                           "not one array")
    if meta.kind == "python":
        raise NotLowerable(f"{node.name} is a Python scalar input; kernels take buffers")
    if meta.dtype not in SUPPORTED_DTYPES:
        raise NotLowerable(f"{node.name} ({node.target}) has dtype {meta.dtype.name}; kernels "
                           "handle bool, integers and float16/32/64")
    if meta.size == 0:
        raise NotLowerable(f"{node.name} ({node.target}) is empty (shape {meta.shape})")
    if meta.size > MAX_ELEMENTS:
        raise NotLowerable(f"{node.name} ({node.target}) has {meta.size} elements; kernels use "
                           "32-bit offsets")
    return meta


def _operand(node: Node, value: Any) -> Operand:
    if isinstance(value, Node):
        array_meta(value)
        return value
    if isinstance(value, (bool, np.bool_)):
        return Const(bool(value))
    if isinstance(value, (int, np.integer)):
        return Const(int(value))
    if isinstance(value, (float, np.floating)) and not isinstance(value, np.float16):
        return Const(float(value))
    raise NotLowerable(f"{node.name} ({node.target}): operand {value!r} of type "
                       f"{type(value).__name__} is not an array or a Python number")


def _operand_dtype(operand: Operand, strong: np.dtype) -> np.dtype:
    """The dtype an operand takes in a comparison with arrays of dtype ``strong``
    (Python numbers are weak, as in NumPy 2 and in NumPy 1 for in-range values)."""
    if isinstance(operand, Node):
        return operand.meta.dtype
    value = operand.value
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return strong if strong.kind in "iuf" else np.dtype(np.int64)
    return strong if strong.kind == "f" else np.dtype(np.float64)


def _fits(value: Union[bool, int, float], dtype: np.dtype) -> bool:
    if isinstance(value, bool) or dtype.kind == "f":
        return True
    if isinstance(value, float):
        return False
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    return info is None or info.min <= value <= info.max


def lower_node(node: Node) -> LoweredOp:
    """The lowered form of one call node; raises NotLowerable with the reason."""
    target = node.target
    meta = array_meta(node)
    if target in _REDUCTIONS:
        return _lower_reduction(node, _REDUCTIONS[target], meta)
    if target in INPLACE_TARGETS:
        _check_inplace(node)
    if target in _ELEMENTWISE:
        op, family = _ELEMENTWISE[target]
        return _lower_elementwise(node, op, family, meta)
    if target == "numpy.where":
        return _lower_where(node, meta)
    if target in ("numpy.clip", "ndarray.clip"):
        return _lower_clip(node, meta)
    if target == "ndarray.astype":
        return _lower_cast(node, meta)
    if target in ("numpy.power", "operator.pow", "operator.ipow"):
        return _lower_power(node, meta)
    raise NotLowerable(f"{node.name}: {target} has no Triton lowering")


def _check_inplace(node: Node) -> None:
    """An in-place op is lowered as its out-of-place form, which is only the
    same program when nothing else can see the written array: it must be a
    fresh result of a lowered op (not an input, whose caller would see the
    write, nor a view of another value) that nothing else reads."""
    target_operand = node.args[0] if node.args else None
    if not isinstance(target_operand, Node) or target_operand.op != "call":
        raise NotLowerable(f"{node.name} ({node.target}) writes into an input")
    lower_node(target_operand)  # a view (T, reshape, getitem) has no lowering: the reason names it
    readers = [n for n in node.graph.users()[target_operand.name] if n is not node]
    if readers:
        raise NotLowerable(f"{node.name} ({node.target}) writes into {target_operand.name}, "
                           f"which {readers[0].name} also reads")


def _no_kwargs(node: Node, allowed: Sequence[str] = ()) -> None:
    extra = sorted(k for k in node.kwargs if k not in allowed)
    if extra:
        raise NotLowerable(f"{node.name} ({node.target}): keyword {extra[0]}= is not lowered")


def _lower_elementwise(node: Node, op: str, family: str, meta: TensorMeta) -> PointwiseOp:
    _no_kwargs(node)
    arity = _ARITY.get(op, 2)
    if len(node.args) != arity:
        raise NotLowerable(f"{node.name} ({node.target}): expected {arity} operand(s), "
                           f"got {len(node.args)}")
    operands = tuple(_operand(node, a) for a in node.args)
    out = meta.dtype
    if family in ("arith", "bitwise"):
        compute = out
        if family == "bitwise" and out.kind not in "biu":
            raise NotLowerable(f"{node.name} ({node.target}) on {out.name}")
        if op == "abs" and out.kind == "b":
            raise NotLowerable(f"{node.name} ({node.target}) on bool")
    elif family == "float":
        if out.kind != "f":
            raise NotLowerable(f"{node.name} ({node.target}) gives {out.name}, not a float")
        # NumPy evaluates these float16 functions in float32 and rounds once;
        # Triton's math functions take fp32/fp64 only
        compute = np.dtype(np.float32) if out == np.float16 else out
    elif family == "compare":
        strong = [o.meta.dtype for o in operands if isinstance(o, Node)]
        compute = np.result_type(*strong) if strong else np.dtype(np.float64)
        compute = np.result_type(*[_operand_dtype(o, compute) for o in operands])
    elif family == "floattest":
        compute = operands[0].meta.dtype if isinstance(operands[0], Node) else np.dtype(np.float64)
        if compute.kind != "f":
            raise NotLowerable(f"{node.name} ({node.target}) on {compute.name}")
    else:  # logical
        compute = np.dtype(np.bool_)
    if compute not in SUPPORTED_DTYPES:
        raise NotLowerable(f"{node.name} ({node.target}) computes in {compute.name}")
    for operand in operands:
        if isinstance(operand, Const) and not _fits(operand.value, compute):
            raise NotLowerable(f"{node.name} ({node.target}): constant {operand.value!r} does "
                               f"not fit {compute.name}")
    return PointwiseOp(node, op, operands, compute, out)


def _lower_where(node: Node, meta: TensorMeta) -> PointwiseOp:
    _no_kwargs(node)
    if len(node.args) != 3:
        raise NotLowerable(f"{node.name}: numpy.where with {len(node.args)} argument(s) "
                           "(only where(condition, x, y) is elementwise)")
    operands = tuple(_operand(node, a) for a in node.args)
    return PointwiseOp(node, "where", operands, meta.dtype, meta.dtype)


def _lower_clip(node: Node, meta: TensorMeta) -> PointwiseOp:
    names = ("a", "a_min", "a_max") if node.target == "numpy.clip" else ("a", "min", "max")
    values = dict(zip(names, node.args))
    for key, value in node.kwargs.items():
        alias = {"min": names[1], "max": names[2], "a_min": names[1], "a_max": names[2]}.get(key)
        if alias is None or alias in values:
            raise NotLowerable(f"{node.name} ({node.target}): keyword {key}= is not lowered")
        values[alias] = value
    if len(node.args) > 3:
        raise NotLowerable(f"{node.name} ({node.target}): too many arguments")
    low, high = values.get(names[1]), values.get(names[2])
    operands = [_operand(node, values["a"])]
    op = "clip"
    if low is None and high is None:
        raise NotLowerable(f"{node.name} ({node.target}) without bounds")
    if low is None:
        op, operands = "clip_max", operands + [_operand(node, high)]
    elif high is None:
        op, operands = "clip_min", operands + [_operand(node, low)]
    else:
        operands += [_operand(node, low), _operand(node, high)]
    if meta.dtype.kind == "b":
        raise NotLowerable(f"{node.name} ({node.target}) on bool")
    if isinstance(operands[0], Const):
        raise NotLowerable(f"{node.name} ({node.target}) of a constant")
    for operand in operands:
        if isinstance(operand, Const) and not _fits(operand.value, meta.dtype):
            raise NotLowerable(f"{node.name} ({node.target}): bound {operand.value!r} does not "
                               f"fit {meta.dtype.name}")
    return PointwiseOp(node, op, tuple(operands), meta.dtype, meta.dtype)


def _lower_cast(node: Node, meta: TensorMeta) -> PointwiseOp:
    _no_kwargs(node, allowed=("dtype", "copy"))
    if len(node.args) < 1 or not isinstance(node.args[0], Node):
        raise NotLowerable(f"{node.name} ({node.target}): expected an array")
    if len(node.args) > 2:
        raise NotLowerable(f"{node.name} ({node.target}): order=/casting= are not lowered")
    source = _operand(node, node.args[0])
    return PointwiseOp(node, "cast", (source,), meta.dtype, meta.dtype)


def _lower_power(node: Node, meta: TensorMeta) -> PointwiseOp:
    _no_kwargs(node)
    if len(node.args) != 2 or not isinstance(node.args[0], Node) or isinstance(node.args[1], Node):
        raise NotLowerable(f"{node.name} ({node.target}): only array ** constant is lowered")
    exponent = node.args[1]
    if isinstance(exponent, (bool, np.bool_)) or not isinstance(exponent, (int, float, np.number)):
        raise NotLowerable(f"{node.name} ({node.target}): exponent {exponent!r}")
    exponent = float(exponent)
    ops = {2.0: "square", 3.0: "cube", 1.0: "pos"}
    if meta.dtype.kind == "f":
        ops.update({0.5: "sqrt", -1.0: "reciprocal"})
    if exponent not in ops:
        raise NotLowerable(f"{node.name} ({node.target}): exponent {exponent!r} (lowered: "
                           f"{', '.join(repr(e) for e in sorted(ops))})")
    op = ops[exponent]
    compute = np.dtype(np.float32) if meta.dtype == np.float16 and op == "sqrt" else meta.dtype
    return PointwiseOp(node, op, (_operand(node, node.args[0]),), compute, meta.dtype)


def _lower_reduction(node: Node, op: str, meta: TensorMeta) -> ReduceOp:
    params = _REDUCTION_PARAMS[op]
    if not node.args or not isinstance(node.args[0], Node):
        raise NotLowerable(f"{node.name} ({node.target}): the reduced value is not an array")
    if len(node.args) - 1 > len(params):
        raise NotLowerable(f"{node.name} ({node.target}): too many arguments")
    bound = dict(zip(params, node.args[1:]))
    for key, value in node.kwargs.items():
        if key not in params or key in bound:
            raise NotLowerable(f"{node.name} ({node.target}): argument {key}=")
        bound[key] = value
    for key in ("out", "initial", "where"):
        if key in bound and not (key == "out" and bound[key] is None) \
                and not (key == "where" and bound[key] is True):
            raise NotLowerable(f"{node.name} ({node.target}): {key}= is not lowered")
    source = node.args[0]
    source_meta = array_meta(source)
    ndim = len(source_meta.shape)
    axis = bound.get("axis")
    if axis is None:
        axes = tuple(range(ndim))
    else:
        items = axis if isinstance(axis, (tuple, list)) else (axis,)
        if not all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in items):
            raise NotLowerable(f"{node.name} ({node.target}): axis={axis!r}")
        axes = tuple(sorted({int(a) % ndim for a in items})) if ndim else ()
    if not axes:  # a 0-d source or axis=()
        raise NotLowerable(f"{node.name} ({node.target}) reduces over no axis")
    if axes != tuple(range(axes[0], axes[-1] + 1)):
        raise NotLowerable(f"{node.name} ({node.target}): axes {axes} are not contiguous")
    out = meta.dtype
    if op in ("sum", "mean"):
        acc = np.dtype(np.float32) if out == np.float16 else out
    else:
        acc = np.dtype(np.int8) if out.kind == "b" else out
    return ReduceOp(node, op, source, axes, acc, out)
