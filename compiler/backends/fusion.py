"""Fused regions of elementwise chains, and the buffers each region reuses.

A *region* is a maximal run of consecutive call nodes (in graph order, so no
op moves past an in-place write) that are single-output ufunc calls with an
array result of one shape, each after the first reading a value of the run.
A fused op may write its result (``out=``) into the buffer of a value that
is dead by then, so a chain of n ops allocates one array instead of n.  Only
buffers the compiled code allocated itself are reused (values made by fused
ops, whose users never keep a view): never an input, a graph output, a value
still used later, or anything a view may point into.

Regions are the unit of ``kernel_count``, and small ones run over whole
arrays.  Large ones (and neighbouring regions of the same shape, with a sum
that ends them) also get a one-pass evaluation, in cache-sized blocks or as
a numba loop (numpy_codegen, blocked.py, numba_kernels.py): measured on a
7-op chain over two 1e6-element float64 inputs, 16K-element blocks ran 2.5x
faster than buffer reuse over whole arrays (the earlier measurement, on an
8-op chain of one input, had found blocks slower at every size from 2K to
64K: per-op call overhead per block against a smaller cache win).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Union

import numpy as np

from compiler.graph import Graph, Node, TensorMeta

# Keyword arguments a fused ufunc call may carry next to out=.
_FUSIBLE_KWARGS = frozenset({"dtype"})


@dataclass
class Region:
    nodes: List[Node]
    # operands from outside the region with ndim >= 1 (their layout is checked
    # at run time: buffer reuse gives NumPy's own result layout only when all
    # operands are C-contiguous)
    external_arrays: List[Node] = field(default_factory=list)
    # node name -> name of the dead temporary whose buffer it is written into
    out_buffer: Dict[str, str] = field(default_factory=dict)


Item = Union[Region, Node]


def is_fusible(node: Node) -> bool:
    op = node.opinfo
    meta = node.meta
    if op is None or op.ufunc is None or op.inplace or not isinstance(meta, TensorMeta):
        return False
    if meta.kind != "array" or meta.ndim == 0:
        return False
    if not set(node.kwargs) <= _FUSIBLE_KWARGS:
        return False
    return all(isinstance(a, Node) or _is_scalar_constant(a) for a in node.args)


def _is_scalar_constant(value: object) -> bool:
    return isinstance(value, (bool, int, float, complex, np.generic))


def partition(graph: Graph) -> List[Item]:
    """The call nodes of ``graph`` in order, grouped into regions where
    fusible, with the buffers each fused op writes into planned."""
    items: List[Item] = []
    current: Optional[Region] = None
    for node in graph.call_nodes:
        if not is_fusible(node):
            current = None
            items.append(node)
            continue
        if current is not None and _extends(current, node):
            current.nodes.append(node)
        else:
            current = Region([node])
            items.append(current)
    _plan_buffers(graph, items)
    return items


def _extends(region: Region, node: Node) -> bool:
    members = {n.name for n in region.nodes}
    same_shape = node.meta.shape == region.nodes[0].meta.shape
    return same_shape and any(n.name in members for n in node.input_nodes())


def _plan_buffers(graph: Graph, items: List[Item]) -> None:
    """Choose, for each fused op, a dead buffer to write into.

    A value's buffer may be written again once the value is dead when the
    compiled code allocated it itself (a fused op produced it) and nothing
    can still see it: it is not a graph output and every user is a fused op
    or a reduction (neither keeps a view of its operands).
    """
    users = graph.users()
    order = {n.name: i for i, n in enumerate(graph.nodes)}
    region_of: Dict[str, Region] = {}
    for item in items:
        if isinstance(item, Region):
            for node in item.nodes:
                region_of[node.name] = item
    for region in [item for item in items if isinstance(item, Region)]:
        members = {n.name for n in region.nodes}
        for node in region.nodes:
            for source in node.input_nodes():
                if source.name not in members and isinstance(source.meta, TensorMeta) \
                        and source.meta.ndim >= 1 and source not in region.external_arrays:
                    region.external_arrays.append(source)

    def reusable(value: Node) -> bool:
        return value.name in region_of and all(
            u.name in region_of or (u.opinfo is not None and u.opinfo.kind == "reduction"
                                    and not u.opinfo.inplace) for u in users[value.name])

    last_use = {n.name: max(order[u.name] for u in users[n.name]) for n in graph.call_nodes
                if users[n.name]}
    free: List[Node] = []  # dead values whose buffers may be written again
    for node in graph.call_nodes:
        here = order[node.name]
        dying = [s for s in node.input_nodes() if reusable(s) and last_use[s.name] == here]
        region = region_of.get(node.name)
        if region is not None:
            choice = _pick(node, dying + free)
            if choice is not None:
                region.out_buffer[node.name] = choice.name
                if choice in free:
                    free.remove(choice)
                dying = [d for d in dying if d is not choice]
                if choice not in region.nodes and choice not in region.external_arrays:
                    region.external_arrays.append(choice)  # its layout is checked too
        free.extend(d for d in dying if d not in free)


def _pick(node: Node, candidates: List[Node]) -> Optional[Node]:
    for candidate in candidates:
        meta = candidate.meta
        if meta.shape == node.meta.shape and meta.dtype == node.meta.dtype:
            return candidate
    return None


def kernel_count(items: List[Item]) -> int:
    return len(items)


def region_operands(region: Region) -> List[Node]:
    """The values a region reads from outside itself (arrays, 0-d arrays and NumPy scalars),
    in first-use order."""
    members = {n.name for n in region.nodes}
    found: List[Node] = []
    for node in region.nodes:
        for source in node.input_nodes():
            if source.name not in members and all(source is not f for f in found):
                found.append(source)
    return found


def region_results(graph: Graph, region: Region) -> List[Node]:
    """The region's values that something after it reads (a later op, the graph's output):
    the ones a fused evaluation must write to whole arrays; the rest live only inside it."""
    members = {n.name for n in region.nodes}
    users = graph.users()
    return [n for n in region.nodes if any(u.name not in members for u in users[n.name])]


# Reductions a one-pass evaluation folds into its loop: a whole-array sum, computed per block
# and then over the blocks' partial sums.
_FOLDABLE_REDUCTIONS = frozenset({"ndarray.sum", "numpy.sum"})


def folds_into(node: Node, region: Region) -> bool:
    """Whether ``node`` sums a float32 / float64 value of ``region`` over all its elements
    (no axis, no dtype), so that a one-pass evaluation can sum each block as it goes."""
    op = node.opinfo
    if op is None or node.target not in _FOLDABLE_REDUCTIONS or node.kwargs or len(node.args) != 1:
        return False
    value = node.args[0]
    # float32 and wider: a float16 sum accumulates in float32 inside NumPy, float16 partial
    # sums would round once more per block.
    return isinstance(value, Node) and any(value is n for n in region.nodes) \
        and value.meta.dtype.kind == "f" and value.meta.dtype.itemsize >= 4 \
        and isinstance(node.meta, TensorMeta) and node.meta.dtype == value.meta.dtype
