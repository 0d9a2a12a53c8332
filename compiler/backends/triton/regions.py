"""Lowered ops -> fused regions, each of which becomes one Triton kernel.

Regions grow along producer -> consumer edges:

- ``pointwise``: elementwise nodes of one shape, evaluated over the flat index;
- ``row``: reductions over the last axis (one program per row, the whole row
  in registers) with the elementwise nodes around them whose shape is the row
  shape or the reduced "row scalar" shape: softmax and layer norm are one
  region;
- ``reduce``: any other reduction over contiguous axes (a loop over the
  reduced extent per output element), with its elementwise prologue.

A merge is refused when it would make the regions cyclic (a path leaving the
region and coming back).  Operands from outside a region are loaded with
NumPy broadcasting; values used outside their region are stored.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from compiler.backends.triton.lowering import (INPLACE_TARGETS, LoweredOp, PointwiseOp, ReduceOp,
                                               array_meta, lower_node)
from compiler.graph import Graph, Node

# A last-axis reduction keeps its whole row in registers up to this length;
# longer rows use the looping reduction kernel.
MAX_ROW = 8192


@dataclass
class Region:
    """Nodes computed by one kernel."""

    kind: str                                  # "pointwise" | "row" | "reduce"
    domain: Tuple[int, ...]                    # iteration shape (row: the full row shape)
    ops: List[LoweredOp] = field(default_factory=list)
    loads: List[Node] = field(default_factory=list)    # values read from memory
    stores: List[Node] = field(default_factory=list)   # values written to memory

    @property
    def names(self) -> Set[str]:
        return {op.node.name for op in self.ops}

    @property
    def reduction(self) -> Optional[ReduceOp]:
        found = [op for op in self.ops if isinstance(op, ReduceOp)]
        return found[0] if found else None

    def row_scalar_shapes(self) -> Tuple[Tuple[int, ...], ...]:
        """Shapes of the per-row values of a row region: (..., 1) and (...)."""
        return (self.domain[:-1] + (1,), self.domain[:-1])


def plan_regions(graph: Graph) -> List[Region]:
    """The graph's call nodes grouped into regions, in a valid launch order.
    Raises NotLowerable (naming the node) if any node has no lowering."""
    live = _live_call_nodes(graph)
    lowered: Dict[str, LoweredOp] = {}
    for node in live:
        lowered[node.name] = lower_node(node)
    for node in graph.placeholders:
        array_meta(node)
    live_names = set(lowered)
    users = {name: [u for u in readers if u.op == "output" or u.name in live_names]
             for name, readers in graph.users().items()}
    group_of: Dict[str, Region] = {}
    for node in live:
        op = lowered[node.name]
        region = _singleton(op)
        group_of[node.name] = region
        for producer in _operand_nodes(op):
            other = group_of.get(producer.name)
            if other is None or other is group_of[node.name]:
                continue
            merged = _try_merge(other, group_of[node.name], users)
            if merged is not None:
                for member in merged.ops:
                    group_of[member.node.name] = merged
    regions: List[Region] = []
    for node in live:
        region = group_of[node.name]
        if not any(region is r for r in regions):
            regions.append(region)
    for region in regions:
        region.ops.sort(key=lambda o: _position(graph, o.node))
        _fill_loads_and_stores(region, graph, users)
    return _launch_order(regions, group_of)


def _live_call_nodes(graph: Graph) -> List[Node]:
    """Call nodes an output depends on, in graph order (results nobody reads
    need no kernel; the ops are free of side effects)."""
    needed: Set[str] = set()
    # in-place ops write into an array another value may share: always run them
    stack = list(graph.outputs) + [n for n in graph.call_nodes if n.target in INPLACE_TARGETS]
    while stack:
        node = stack.pop()
        if node.name not in needed:
            needed.add(node.name)
            stack.extend(node.input_nodes())
    return [node for node in graph.call_nodes if node.name in needed]


def _position(graph: Graph, node: Node) -> int:
    for index, candidate in enumerate(graph.nodes):
        if candidate is node:
            return index
    raise ValueError(f"node {node.name} is not in the graph")


def _operand_nodes(op: LoweredOp) -> List[Node]:
    if isinstance(op, ReduceOp):
        return [op.source]
    return [o for o in op.operands if isinstance(o, Node)]


def _singleton(op: LoweredOp) -> Region:
    if isinstance(op, PointwiseOp):
        return Region("pointwise", op.node.meta.shape, [op])
    _, reduced, _ = op.split()
    if op.is_last_axis and 2 <= reduced <= MAX_ROW:
        return Region("row", op.source_shape, [op])
    return Region("reduce", op.source_shape, [op])


def _try_merge(producer: Region, consumer: Region, users: Dict[str, List[Node]]) -> Optional[Region]:
    kind = _merged_kind(producer, consumer)
    if kind is None:
        return None
    domain = producer.domain if producer.kind == "row" else consumer.domain
    candidate = Region(kind, domain, producer.ops + consumer.ops)
    if kind == "row" and not _row_roles_consistent(candidate):
        return None
    if _leaves_and_returns(producer, consumer, users):
        return None
    return candidate


def _merged_kind(producer: Region, consumer: Region) -> Optional[str]:
    if producer.kind == "pointwise" and consumer.kind == "pointwise":
        return "pointwise" if producer.domain == consumer.domain else None
    if producer.kind == "pointwise" and consumer.kind in ("row", "reduce"):
        # an elementwise prologue over the full (row) domain
        return consumer.kind if producer.domain == consumer.domain else None
    if producer.kind == "row" and consumer.kind == "pointwise":
        shapes = (producer.domain,) + producer.row_scalar_shapes()
        return "row" if consumer.domain in shapes else None
    if producer.kind == "row" and consumer.kind == "row":
        return "row" if producer.domain == consumer.domain else None
    return None


def _row_roles_consistent(region: Region) -> bool:
    """In a row region every value is a full row (shape S) or a row scalar
    (S[:-1] + (1,) or S[:-1]); a row scalar may only meet full rows through
    the keepdims shape (NumPy broadcasting S[:-1] against S would not mean
    "per row")."""
    full = region.domain
    keep, flat = region.row_scalar_shapes()
    members = {op.node.name: op.node.meta.shape for op in region.ops}
    for op in region.ops:
        shape = op.node.meta.shape
        if isinstance(op, ReduceOp):
            if op.source_shape != full or not op.is_last_axis:
                return False
            if op.source.name in members and members[op.source.name] != full:
                return False
            continue
        if shape not in (full, keep, flat):
            return False
        for operand in op.operands:
            if not isinstance(operand, Node) or operand.name not in members:
                continue
            inner = members[operand.name]
            if shape == full and inner not in (full, keep):
                return False
            if shape != full and inner != shape:
                return False
    return True


def _leaves_and_returns(producer: Region, consumer: Region, users: Dict[str, List[Node]]) -> bool:
    """True if a path goes from the producer region through an outside node
    into the consumer region (merging would make the regions cyclic)."""
    inside = producer.names | consumer.names
    targets = consumer.names
    stack = [u for op in producer.ops for u in users[op.node.name]
             if u.op == "call" and u.name not in inside]
    seen: Set[str] = set()
    while stack:
        node = stack.pop()
        if node.name in seen:
            continue
        seen.add(node.name)
        for user in users[node.name]:
            if user.name in targets:
                return True
            if user.op == "call":
                stack.append(user)
    return False


def _fill_loads_and_stores(region: Region, graph: Graph, users: Dict[str, List[Node]]) -> None:
    names = region.names
    for op in region.ops:
        for operand in _operand_nodes(op):
            if operand.name not in names and not any(operand is n for n in region.loads):
                region.loads.append(operand)
    for op in region.ops:
        readers = users[op.node.name]
        if any(reader.name not in names for reader in readers):
            region.stores.append(op.node)


def _launch_order(regions: List[Region], group_of: Dict[str, Region]) -> List[Region]:
    ordered: List[Region] = []
    remaining = list(regions)
    while remaining:
        for region in remaining:
            needs = [group_of[n.name] for n in region.loads if n.name in group_of]
            if all(any(dep is done for done in ordered) for dep in needs):
                ordered.append(region)
                remaining.remove(region)
                break
        else:  # pragma: no cover - _leaves_and_returns keeps regions acyclic
            raise AssertionError("Triton lowering produced cyclic regions")
    return ordered
