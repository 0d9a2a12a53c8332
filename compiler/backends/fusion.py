"""Fused regions of elementwise chains, and the buffers each region reuses.

A *region* is a maximal run of consecutive call nodes (in graph order, so no
op moves past an in-place write) that are single-output ufunc calls with an
array result of one shape, each after the first reading a value of the run.
Inside a region a result may be written (``out=``) into the buffer of a
region temporary that dies at that op, so a chain of n ops allocates one
array instead of n.  Only buffers the region itself allocated are reused:
never an input, a graph output, a value used after the region, or a view.

Measured on 1M float64 elements (benchmarks/bench_backends.py): buffer
reuse over whole arrays beat evaluation in cache-sized blocks at every block
size from 2K to 64K elements (per-op call overhead times the block count
exceeds the cache win), so regions are evaluated over whole arrays.
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
    # values read or returned after the region: never reused as buffers
    escaping: List[str] = field(default_factory=list)
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
    """The call nodes of ``graph`` in order, grouped into regions where fusible."""
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
    users = graph.users()
    order = {n.name: i for i, n in enumerate(graph.nodes)}
    return [_planned(item, users, order) if isinstance(item, Region) else item for item in items]


def _extends(region: Region, node: Node) -> bool:
    members = {n.name for n in region.nodes}
    same_shape = node.meta.shape == region.nodes[0].meta.shape
    return same_shape and any(n.name in members for n in node.input_nodes())


def _planned(region: Region, users: Dict[str, List[Node]], order: Dict[str, int]) -> Region:
    members = {n.name for n in region.nodes}
    last = order[region.nodes[-1].name]
    region.escaping = [n.name for n in region.nodes
                       if any(u.name not in members for u in users[n.name])]
    seen = set()
    for node in region.nodes:
        for source in node.input_nodes():
            if source.name not in members and source.name not in seen \
                    and isinstance(source.meta, TensorMeta) and source.meta.ndim >= 1:
                seen.add(source.name)
                region.external_arrays.append(source)
    last_use = {n.name: max(order[u.name] for u in users[n.name]) for n in region.nodes
                if users[n.name]}
    free: List[Node] = []  # dead temporaries whose buffers may be written again
    for node in region.nodes:
        here = order[node.name]
        dying = [s for s in node.input_nodes() if s.name in members and s.name not in
                 region.escaping and last_use.get(s.name, -1) == here and last_use[s.name] <= last]
        choice = _pick(node, dying + free)
        if choice is not None:
            region.out_buffer[node.name] = choice.name
            if choice in free:
                free.remove(choice)
            dying = [d for d in dying if d is not choice]
        free.extend(d for d in dying if d not in free)
    return region


def _pick(node: Node, candidates: List[Node]) -> Optional[Node]:
    for candidate in candidates:
        meta = candidate.meta
        if meta.shape == node.meta.shape and meta.dtype == node.meta.dtype:
            return candidate
    return None


def kernel_count(items: List[Item]) -> int:
    return len(items)
