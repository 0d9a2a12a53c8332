"""Triton kernel source text, one ``@triton.jit`` function per region.

Shapes are baked into the source as literals (a compiled graph is specific
to its input shapes, guarded by the tracer), so every kernel takes only
pointers plus the ``BLOCK`` constexpr.  Loads and stores are masked; a value
from outside the region is loaded with NumPy broadcasting (its offset
computed from the flat index of the region's domain).  Every operand is cast
explicitly to the op's compute dtype, and constants are typed
(``tl.full((), value, dtype)``), so no Triton promotion rule is relied on.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from compiler.backends.triton.lowering import Const, Operand, PointwiseOp, ReduceOp
from compiler.backends.triton.regions import Region, plan_regions
from compiler.backends.triton.program import BufferSpec, KernelSpec, Program
from compiler.graph import Graph, Node

# numpy dtype -> (tl dtype, signature type)
DTYPES: Dict[np.dtype, Tuple[str, str]] = {
    np.dtype(np.bool_): ("tl.int1", "i1"),
    np.dtype(np.int8): ("tl.int8", "i8"), np.dtype(np.int16): ("tl.int16", "i16"),
    np.dtype(np.int32): ("tl.int32", "i32"), np.dtype(np.int64): ("tl.int64", "i64"),
    np.dtype(np.uint8): ("tl.uint8", "u8"), np.dtype(np.uint16): ("tl.uint16", "u16"),
    np.dtype(np.uint32): ("tl.uint32", "u32"), np.dtype(np.uint64): ("tl.uint64", "u64"),
    np.dtype(np.float16): ("tl.float16", "fp16"), np.dtype(np.float32): ("tl.float32", "fp32"),
    np.dtype(np.float64): ("tl.float64", "fp64"),
}

POINTWISE_BLOCK = 1024
REDUCE_BLOCK = 1024
MIN_BLOCK = 16


def next_power_of_two(value: int) -> int:
    return 1 if value <= 1 else 1 << (int(value) - 1).bit_length()


def tl_dtype(dtype: np.dtype) -> str:
    return DTYPES[np.dtype(dtype)][0]


def pointer_type(dtype: np.dtype) -> str:
    return "*" + DTYPES[np.dtype(dtype)][1]


def build_program(graph: Graph) -> Program:
    """The graph lowered to kernels (raises NotLowerable when it cannot be)."""
    regions = plan_regions(graph)
    buffers: Dict[str, BufferSpec] = {}

    def buffer(node: Node) -> str:
        if node.name not in buffers:
            buffers[node.name] = BufferSpec(node.name, tuple(node.meta.shape), node.meta.dtype.name)
        return node.name

    inputs = [buffer(node) for node in graph.placeholders]
    kernels = [_kernel(index, region, buffer) for index, region in enumerate(regions)]
    outputs = [(buffer(node), node.meta.kind) for node in graph.outputs]
    return Program(graph.graph_hash(), buffers, inputs, outputs, kernels)


def _kernel(index: int, region: Region, buffer) -> KernelSpec:
    name = f"{region.kind}_{index}"
    params: List[Tuple[str, str]] = []
    buffers: List[str] = []
    for node in region.loads:
        params.append((f"in_{node.name}", pointer_type(node.meta.dtype)))
        buffers.append(buffer(node))
    for node in region.stores:
        params.append((f"out_{node.name}", pointer_type(node.meta.dtype)))
        buffers.append(buffer(node))
    writer = {"pointwise": _PointwiseWriter, "row": _RowWriter, "reduce": _ReduceWriter}[region.kind]
    body, block, grid, num_warps = writer(region).write()
    args = ", ".join([p for p, _ in params] + ["BLOCK: tl.constexpr"])
    source = f"@triton.jit\ndef {name}({args}):\n" + "\n".join("    " + line for line in body) + "\n"
    return KernelSpec(name=name, kind=region.kind, source=source, params=tuple(params),
                      buffers=tuple(buffers), block=block, grid=grid, num_warps=num_warps,
                      nodes=tuple(op.node.name for op in region.ops))


def _c_strides(shape: Sequence[int]) -> List[int]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return list(reversed(strides))


def broadcast_offset(flat: str, domain: Sequence[int], shape: Sequence[int]) -> Optional[str]:
    """The element offset into a C-contiguous array of ``shape`` for the
    element of ``domain`` at flat index ``flat`` (NumPy broadcasting); None
    when the array has one element (offset 0)."""
    domain, shape = tuple(domain), tuple(shape)
    if shape == domain:
        return flat
    if int(np.prod(shape, dtype=np.int64)) == 1:
        return None
    aligned = (1,) * (len(domain) - len(shape)) + shape
    domain_strides, shape_strides = _c_strides(domain), _c_strides(aligned)
    terms = []
    for axis, extent in enumerate(aligned):
        if extent == 1:
            continue
        index = flat if domain_strides[axis] == 1 else f"({flat}) // {domain_strides[axis]}"
        if axis > 0:
            index = f"({index}) % {domain[axis]}"
        terms.append(index if shape_strides[axis] == 1 else f"({index}) * {shape_strides[axis]}")
    return " + ".join(terms)


def _literal(value, dtype: np.dtype) -> str:
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, float) and not np.isfinite(value):
        text = f"float('{value}')"
    else:
        text = repr(value)
    return f"tl.full((), {text}, {tl_dtype(dtype)})"


def _cast(expr: str, source: np.dtype, target: np.dtype) -> str:
    if np.dtype(source) == np.dtype(target):
        return expr
    if np.dtype(target).kind == "b":
        return f"({expr} != 0)"
    return f"{expr}.to({tl_dtype(target)})"


def _nan_max(a: str, b: str) -> str:
    # NumPy's maximum propagates NaN from either side (a NaN ``b`` fails the
    # comparison and is taken); Triton's does not.  Nested ``where`` rather than
    # ``|``: the interpreter cannot "or" a scalar and a block of bools.
    # ``a`` is never a constant (emit_pointwise swaps one to the right).
    return f"tl.where({a} != {a}, {a}, tl.where({a} > {b}, {a}, {b}))"


def _nan_min(a: str, b: str) -> str:
    return f"tl.where({a} != {a}, {a}, tl.where({a} < {b}, {a}, {b}))"


def pointwise_expression(op: PointwiseOp, args: List[str], name: str) -> str:
    """The Triton expression of elementwise op ``name`` (``op.op`` or a step of
    it) over already-cast operands, which are plain names."""
    floating = op.compute.kind == "f"
    if op.compute.kind == "b":  # NumPy's bool arithmetic is logical
        name = {"add": "or", "mul": "and", "maximum": "or", "minimum": "and"}.get(name, name)
    binary = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "and": "&", "or": "|", "xor": "^",
              "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
    if name in binary:
        return f"{args[0]} {binary[name]} {args[1]}"
    if name in ("maximum", "minimum"):
        if floating:
            return (_nan_max if name == "maximum" else _nan_min)(args[0], args[1])
        return f"tl.{name}({args[0]}, {args[1]})"
    simple = {"exp": "tl.exp", "exp2": "tl.exp2", "log": "tl.log", "log2": "tl.log2",
              "sqrt": "tl.sqrt", "sin": "tl.sin", "cos": "tl.cos", "floor": "tl.floor",
              "ceil": "tl.ceil", "abs": "tl.abs"}
    if name in simple:
        return f"{simple[name]}({args[0]})"
    if name == "neg":
        return f"-{args[0]}"
    if name in ("pos", "cast"):
        return args[0]
    if name == "square":
        return f"{args[0]} * {args[0]}"
    if name == "cube":
        return f"{args[0]} * {args[0]} * {args[0]}"
    if name == "reciprocal":
        return f"{_literal(1.0, op.compute)} / {args[0]}"
    if name == "invert":
        return f"~{args[0]}"
    if name == "logical_and":
        return f"{args[0]} & {args[1]}"
    if name == "logical_or":
        return f"{args[0]} | {args[1]}"
    if name == "logical_xor":
        return f"{args[0]} ^ {args[1]}"
    if name == "logical_not":
        return f"{args[0]} == 0"
    if name == "isnan":
        return f"{args[0]} != {args[0]}"
    if name == "isinf":
        return f"tl.abs({args[0]}) == float('inf')"
    if name == "isfinite":
        return f"({args[0]} == {args[0]}) & (tl.abs({args[0]}) != float('inf'))"
    if name == "where":
        return f"tl.where({args[0]}, {args[1]}, {args[2]})"
    if name == "clip_min":
        return _nan_max(args[0], args[1]) if floating else f"tl.maximum({args[0]}, {args[1]})"
    if name == "clip_max":
        return _nan_min(args[0], args[1]) if floating else f"tl.minimum({args[0]}, {args[1]})"
    raise AssertionError(f"no Triton expression for {name!r}")  # lowering.py and this table agree


class _Writer:
    """Emits a kernel body: loads on first use, ops in order, stores."""

    def __init__(self, region: Region):
        self.region = region
        self.lines: List[str] = []
        self.values: Dict[Tuple[str, str], str] = {}  # (loaded node, context) -> variable
        self.loaded = {n.name: n for n in region.loads}

    def var(self, node: Node) -> str:
        return f"v_{node.name}"

    # how an outside value is addressed; subclasses know their domain
    def load(self, node: Node, consumer: Node) -> str:
        raise NotImplementedError

    def emit_load(self, name: str, node: Node, flat: str, domain: Sequence[int],
                  mask: Optional[str]) -> str:
        """Load ``node`` broadcast over ``domain`` at flat index ``flat``."""
        offset = broadcast_offset(flat, domain, node.meta.shape)
        if offset is None:
            self.lines.append(f"{name} = tl.load(in_{node.name})")
        elif mask is None:
            self.lines.append(f"{name} = tl.load(in_{node.name} + ({offset}))")
        else:
            self.lines.append(f"{name} = tl.load(in_{node.name} + ({offset}), mask={mask}, other=0)")
        return name

    def value_of(self, operand: Operand, consumer: Node, dtype: np.dtype) -> str:
        if isinstance(operand, Const):
            return _literal(operand.value, dtype)
        if operand.name in self.loaded:
            key = (operand.name, self.context(consumer))
            if key not in self.values:
                self.values[key] = self.load(operand, consumer)
            expr, source = self.values[key], operand.meta.dtype
        else:
            expr, source = self.var(operand), operand.meta.dtype
        return _cast(expr, source, dtype)

    def context(self, consumer: Node) -> str:
        return ""

    def emit_pointwise(self, op: PointwiseOp) -> None:
        dtypes = [op.compute] * len(op.operands)
        if op.op == "where":
            dtypes = [np.dtype(np.bool_), op.compute, op.compute]
        operands = list(op.operands)
        if op.op in ("maximum", "minimum") and isinstance(operands[0], Const):
            operands.reverse()  # the NaN test goes on the array side
        args = []
        for position, (operand, dtype) in enumerate(zip(operands, dtypes)):
            value = self.value_of(operand, op.node, dtype)
            if not value.isidentifier():  # a cast or a constant: name it, ops may repeat operands
                name = f"a_{op.node.name}_{position}"
                self.lines.append(f"{name} = {value}")
                value = name
            args.append(value)
        if op.op == "clip":  # two steps, each naming its operands once
            low = f"c_{op.node.name}"
            self.lines.append(f"{low} = {pointwise_expression(op, args[:2], 'clip_min')}")
            args, name = [low, args[2]], "clip_max"
        else:
            name = op.op
        expr = pointwise_expression(op, args, name)
        result = op.out if op.op in ("lt", "le", "gt", "ge", "eq", "ne", "isnan", "isinf",
                                     "isfinite", "logical_not") else op.compute
        self.lines.append(f"{self.var(op.node)} = {_cast(f'({expr})', result, op.out)}")


class _PointwiseWriter(_Writer):
    def write(self):
        region = self.region
        total = int(np.prod(region.domain, dtype=np.int64))
        block = min(POINTWISE_BLOCK, max(MIN_BLOCK, next_power_of_two(total)))
        self.lines += ["offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
                       f"mask = offs < {total}"]
        for op in region.ops:
            self.emit_pointwise(op)
        for node in region.stores:
            self.lines.append(f"tl.store(out_{node.name} + offs, {self.var(node)}, mask=mask)")
        grid = -(-total // block)
        return self.lines, block, grid, 4

    def load(self, node: Node, consumer: Node) -> str:
        return self.emit_load(f"l_{node.name}", node, "offs", self.region.domain, "mask")


class _RowWriter(_Writer):
    """One program per row; the row (``BLOCK`` >= its length) stays in registers."""

    def write(self):
        region = self.region
        full = region.domain
        length = full[-1]
        rows = int(np.prod(full[:-1], dtype=np.int64))
        block = max(MIN_BLOCK, next_power_of_two(length))
        self.lines += ["row = tl.program_id(0)",
                       "cols = tl.arange(0, BLOCK)",
                       f"cmask = cols < {length}",
                       f"idx = row * {length} + cols"]
        for op in region.ops:
            if isinstance(op, ReduceOp):
                self.emit_row_reduction(op)
            else:
                self.emit_pointwise(op)
        for node in region.stores:
            if node.meta.shape == full:
                self.lines.append(f"tl.store(out_{node.name} + idx, {self.var(node)}, mask=cmask)")
            else:
                self.lines.append(f"tl.store(out_{node.name} + row, {self.var(node)})")
        num_warps = 4 if block <= 2048 else (8 if block <= 4096 else 16)
        return self.lines, block, rows, num_warps

    def context(self, consumer: Node) -> str:
        return "full" if consumer.meta.shape == self.region.domain else "row"

    def load(self, node: Node, consumer: Node) -> str:
        if self.context(consumer) == "full":
            return self.emit_load(f"l_{node.name}", node, "idx", self.region.domain, "cmask")
        # a row scalar: the consumer's own shape has one element per row
        return self.emit_load(f"r_{node.name}", node, "row", consumer.meta.shape, None)

    def emit_row_reduction(self, op: ReduceOp) -> None:
        value = self.value_of(op.source, op.source, op.acc)
        length = self.region.domain[-1]
        result = self._reduce_lines(op, value, "cmask", length, axis_values=None)
        self.lines.append(f"{self.var(op.node)} = {_cast(result, op.acc, op.out)}")

    def _reduce_lines(self, op: ReduceOp, value: str, mask: str, count: int, axis_values) -> str:
        acc = op.acc
        tmp = f"t_{op.node.name}"
        if op.op in ("sum", "mean"):
            self.lines.append(f"{tmp} = tl.sum(tl.where({mask}, {value}, {_literal(0, acc)}), axis=0)")
            if op.op == "mean":
                return f"({tmp} / {_literal(float(count), acc)})"
            return tmp
        identity = _extreme(acc, lowest=(op.op == "max"))
        self.lines.append(f"{tmp} = tl.{op.op}(tl.where({mask}, {value}, {identity}), axis=0)")
        if acc.kind == "f":
            self.lines.append(f"{tmp}_nan = tl.max(tl.where({mask} & ({value} != {value}), 1, 0), "
                              "axis=0)")
            self.lines.append(f"{tmp} = tl.where({tmp}_nan > 0, {_literal(float('nan'), acc)}, {tmp})")
        return tmp


def _extreme(dtype: np.dtype, lowest: bool) -> str:
    """The identity of max (lowest=True) or min for ``dtype``."""
    if dtype.kind == "f":
        return _literal(float("-inf") if lowest else float("inf"), dtype)
    info = np.iinfo(dtype)
    return _literal(int(info.min if lowest else info.max), dtype)


class _ReduceWriter(_Writer):
    """One program per output element, looping over the reduced extent in BLOCK chunks."""

    def write(self):
        region = self.region
        op = region.reduction
        assert op is not None
        outer, reduced, inner = op.split()
        block = min(REDUCE_BLOCK, max(MIN_BLOCK, next_power_of_two(reduced)))
        acc = op.acc
        self.lines += ["o = tl.program_id(0)",
                       f"base = (o // {inner}) * {reduced * inner} + o % {inner}"]
        if op.op in ("sum", "mean"):
            self.lines.append(f"acc = tl.zeros([BLOCK], {tl_dtype(acc)})")
        else:
            self.lines.append(f"acc = tl.zeros([BLOCK], {tl_dtype(acc)}) + "
                              f"{_extreme(acc, lowest=(op.op == 'max'))}")
            if acc.kind == "f":
                self.lines.append("nan = tl.zeros([BLOCK], tl.int32)")
        self.lines.append(f"for k0 in range(0, {reduced}, BLOCK):")
        body_start = len(self.lines)
        self.lines += ["ks = k0 + tl.arange(0, BLOCK)",
                       f"kmask = ks < {reduced}",
                       f"idx = base + ks * {inner}" if inner != 1 else "idx = base + ks"]
        for member in region.ops:
            if isinstance(member, PointwiseOp):
                self.emit_pointwise(member)
        for node in region.stores:
            if node is not op.node:
                self.lines.append(f"tl.store(out_{node.name} + idx, {self.var(node)}, mask=kmask)")
        value = self.value_of(op.source, op.source, acc)
        if op.op in ("sum", "mean"):
            self.lines.append(f"acc += tl.where(kmask, {value}, {_literal(0, acc)})")
        else:
            better = ">" if op.op == "max" else "<"
            self.lines.append(f"x = {value}")
            self.lines.append(f"acc = tl.where(kmask & (x {better} acc), x, acc)")
            if acc.kind == "f":
                self.lines.append("nan = tl.where(kmask & (x != x), 1, nan)")
        self.lines[body_start:] = ["    " + line for line in self.lines[body_start:]]
        if op.op in ("sum", "mean"):
            result = "tl.sum(acc, axis=0)"
            if op.op == "mean":
                result = f"{result} / {_literal(float(reduced), acc)}"
        else:
            result = f"tl.{op.op}(acc, axis=0)"
        self.lines.append(f"res = {result}")
        if op.op in ("max", "min") and acc.kind == "f":
            self.lines.append(f"res = tl.where(tl.max(nan, axis=0) > 0, "
                              f"{_literal(float('nan'), acc)}, res)")
        self.lines.append(f"tl.store(out_{op.node.name} + o, {_cast('res', acc, op.out)})")
        return self.lines, block, outer * inner, 4

    def load(self, node: Node, consumer: Node) -> str:
        return self.emit_load(f"l_{node.name}", node, "idx", self.region.domain, "kmask")
