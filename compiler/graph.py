"""The graph IR: placeholder / call / output nodes with shape and dtype metadata.

A ``Graph`` is built by the tracer one node at a time.  ``Graph.call`` asks
the op's ``infer`` for the result metadata from the arguments' metadata, so a
graph never runs on the real data while it is being built.

``str(graph)`` is the canonical text the harness diffs across interpreters:
it depends only on the program, never on the Python or NumPy version (dtypes
by their bit names, constants by a repr this module controls, keyword
arguments sorted).  ``graph_hash()`` is the first 16 hex digits of its
sha256.
"""
from __future__ import annotations

import hashlib
import keyword
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from compiler.exc import Unsupported
from compiler.graph_text import format_graph, is_canonical_constant
from compiler.symbolic_shapes import SymInt, inferring

if TYPE_CHECKING:  # pragma: no cover
    from compiler.ops.opinfo import OpInfo

_LAYOUTS = ("C", "F", "A")
_KINDS = ("array", "scalar", "python", "generator")


@dataclass(frozen=True)
class TensorMeta:
    """Static facts about an array (or NumPy scalar) value.  A dimension is an int, or a
    SymInt where it is dynamic (compiler.symbolic_shapes)."""

    shape: Tuple[Any, ...]
    dtype: np.dtype
    # "array": an np.ndarray (0-d included); "scalar": a NumPy scalar such as
    # the np.float64 that x.sum() returns; "python": a Python int or float graph input (a
    # dynamic scalar, compiler.variables.scalars), whose dtype is the one NumPy's casting
    # gives its value (numpy.min_scalar_type under NumPy 1.x, else int64 / float64);
    # "generator": a numpy.random.Generator graph input, the first argument of draws
    # (compiler.ops.draws; dtype object, shape ()).
    kind: str = "array"
    # "C" or "F" contiguous, or "A" (neither, or not known statically: the
    # metadata of a call node is a hint, the placeholders' is exact).
    layout: str = "C"

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(d if isinstance(d, SymInt) else int(d) for d in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))
        if self.kind not in _KINDS:
            raise ValueError(f"TensorMeta.kind must be one of {_KINDS}, got {self.kind!r}")
        if self.layout not in _LAYOUTS:
            raise ValueError(f"TensorMeta.layout must be one of {_LAYOUTS}, got {self.layout!r}")
        if self.kind != "array" and self.shape != ():
            raise ValueError(f"a {self.kind} value (a NumPy or Python scalar) has shape (), got {self.shape}")

    @classmethod
    def of(cls, value: Any, shape: Optional[Tuple[Any, ...]] = None) -> "TensorMeta":
        """The metadata of a real ndarray or NumPy scalar (``shape``: the array's shape with
        its dynamic dimensions as SymInts, where it has some)."""
        if isinstance(value, np.ndarray):
            flags = value.flags
            layout = "C" if flags.c_contiguous else ("F" if flags.f_contiguous else "A")
            return cls(value.shape if shape is None else shape, value.dtype, "array", layout)
        if isinstance(value, np.generic):
            return cls((), value.dtype, "scalar", "C")
        raise TypeError(
            f"TensorMeta.of expects a numpy.ndarray or a NumPy scalar, got {type(value).__name__}")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        size = 1
        for d in self.shape:
            size *= d
        return size

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def same_value_type(self, other: "TensorMeta") -> bool:
        """Equal shape, dtype and kind (the layout is not compared)."""
        return (self.shape, self.dtype, self.kind) == (other.shape, other.dtype, other.kind)


MetaLike = Union[TensorMeta, Tuple[TensorMeta, ...], None]


class Node:
    """One value of the graph: an input (placeholder), an op call, or the output."""

    __slots__ = ("name", "op", "target", "args", "kwargs", "meta", "opinfo", "graph")

    def __init__(self, graph: "Graph", name: str, op: str, target: str, args: tuple,
                 kwargs: Dict[str, Any], meta: MetaLike, opinfo: Optional["OpInfo"] = None):
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.args = args
        self.kwargs = kwargs
        self.meta = meta
        self.opinfo = opinfo

    def __repr__(self) -> str:
        return f"<Node {self.name}: {self.op} {self.target}>"

    def input_nodes(self) -> List["Node"]:
        """The nodes this node reads, in argument order, without repeats."""
        found: List[Node] = []
        for value in list(self.args) + [self.kwargs[k] for k in sorted(self.kwargs)]:
            _collect_nodes(value, found)
        return found


def _collect_nodes(value: Any, found: List[Node]) -> None:
    if isinstance(value, Node):
        if not any(value is f for f in found):
            found.append(value)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _collect_nodes(item, found)
    elif isinstance(value, slice):
        for item in (value.start, value.stop, value.step):
            _collect_nodes(item, found)
    elif isinstance(value, dict):
        for key in sorted(value):
            _collect_nodes(value[key], found)


def map_args(value: Any, fn) -> Any:
    """Rebuild ``value`` (args, kwargs or any nesting of tuples/lists/slices/dicts)
    with every Node replaced by ``fn(node)``."""
    if isinstance(value, Node):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(map_args(v, fn) for v in value)
    if isinstance(value, list):
        return [map_args(v, fn) for v in value]
    if isinstance(value, slice):
        return slice(map_args(value.start, fn), map_args(value.stop, fn), map_args(value.step, fn))
    if isinstance(value, dict):
        return {k: map_args(v, fn) for k, v in value.items()}
    return value


_NOT_IDENTIFIER = re.compile(r"[^0-9A-Za-z_]+")


def _base_name(text: str) -> str:
    """A Python identifier made from a target or an input name; never starts
    with "_" so that generated code can keep its own names apart."""
    name = _NOT_IDENTIFIER.sub("_", text).strip("_") or "v"
    if name[0].isdigit():
        name = "v" + name
    if keyword.iskeyword(name) or name in ("output", "graph"):
        name = name + "_"
    return name


class Graph:
    """A captured NumPy program: inputs, calls of allow-listed ops, outputs."""

    def __init__(self) -> None:
        self.nodes: List[Node] = []
        self._used: set = set()
        self._counters: Dict[str, int] = {}
        self._output: Optional[Node] = None

    # -- building -----------------------------------------------------------
    def _fresh_name(self, wanted: str) -> str:
        """``wanted`` made an identifier; ``_1``, ``_2``, ... appended on repeats."""
        base = _base_name(wanted)
        name = base
        count = self._counters.get(base, 0)
        while name in self._used:
            count += 1
            name = f"{base}_{count}"
        self._counters[base] = count
        self._used.add(name)
        return name

    def placeholder(self, name: str, meta: TensorMeta) -> Node:
        """Add an input.  Inputs may be discovered while tracing; they are kept
        in creation order ahead of every call."""
        if self._output is not None:
            raise ValueError("Graph.placeholder: the graph already has its output")
        if not isinstance(meta, TensorMeta):
            raise TypeError(f"Graph.placeholder({name!r}, meta): meta must be a TensorMeta, "
                            f"got {type(meta).__name__}")
        node = Node(self, self._fresh_name(name), "placeholder", "input", (), {}, meta)
        self.nodes.insert(len(self.placeholders), node)
        return node

    def call(self, op: "OpInfo", args: tuple, kwargs: Optional[Dict[str, Any]] = None) -> Node:
        """Append a call of ``op``; its metadata comes from ``op.infer`` on the
        arguments' metadata.  Raises ``Unsupported`` when the op cannot be
        captured with these arguments."""
        if self._output is not None:
            raise ValueError("Graph.call: the graph already has its output")
        args = tuple(args)
        kwargs = dict(kwargs or {})
        self._check_arguments(op, args, kwargs)
        meta_args = map_args(args, _meta_of)
        meta_kwargs = map_args(kwargs, _meta_of)
        with inferring(_metas_in((meta_args, meta_kwargs)), op.name):
            meta = op.infer(*meta_args, **meta_kwargs)
        node = Node(self, self._fresh_name(op.name.rsplit(".", 1)[-1]), "call", op.name,
                    args, kwargs, meta, op)
        self.nodes.append(node)
        return node

    def _check_arguments(self, op: "OpInfo", args: tuple, kwargs: Dict[str, Any]) -> None:
        for value in list(args) + list(kwargs.values()):
            if not is_canonical_constant(value, allow_node=lambda n: isinstance(n, Node)):
                raise Unsupported(f"{op.name}: an argument of type {type(value).__name__} "
                                  "cannot be a graph constant")
            for node in _nodes_in(value):
                if node.graph is not self:
                    raise ValueError(f"Graph.call({op.name}): node {node.name} belongs to another graph")
                if node.op == "output":
                    raise ValueError("Graph.call: the output node cannot be an argument")

    def output(self, values: Sequence[Node]) -> None:
        if self._output is not None:
            raise ValueError("Graph.output: the graph already has its output")
        values = tuple(values)
        for value in values:
            if not isinstance(value, Node) or value.graph is not self:
                raise TypeError("Graph.output expects nodes of this graph, got "
                                f"{type(value).__name__}")
        meta = tuple(v.meta for v in values)
        self._output = Node(self, "output", "output", "output", (values,), {}, meta)
        self.nodes.append(self._output)

    def specialize_shapes(self, reason: str) -> None:
        """Replace every dynamic dimension in the nodes' metadata by its trace-time size,
        each recorded as a specialization guard (for a backend that bakes sizes into the
        code it generates)."""
        for node in self.nodes:
            node.meta = _specialized(node.meta, reason)

    # -- reading ------------------------------------------------------------
    @property
    def placeholders(self) -> List[Node]:
        return [n for n in self.nodes if n.op == "placeholder"]

    @property
    def call_nodes(self) -> List[Node]:
        return [n for n in self.nodes if n.op == "call"]

    @property
    def output_node(self) -> Optional[Node]:
        return self._output

    @property
    def outputs(self) -> Tuple[Node, ...]:
        if self._output is None:
            raise ValueError("the graph has no output yet: call Graph.output(values)")
        return self._output.args[0]

    def users(self) -> Dict[str, List[Node]]:
        """node name -> nodes (the output node included) that read it."""
        found: Dict[str, List[Node]] = {n.name: [] for n in self.nodes}
        for node in self.nodes:
            for source in node.input_nodes():
                found[source.name].append(node)
        return found

    def __str__(self) -> str:
        return format_graph(self)

    def __repr__(self) -> str:
        return f"<Graph {len(self.placeholders)} inputs, {len(self.call_nodes)} calls>"

    def graph_hash(self) -> str:
        return hashlib.sha256(str(self).encode("utf-8")).hexdigest()[:16]


def _specialized(meta: MetaLike, reason: str) -> MetaLike:
    if isinstance(meta, tuple):
        return tuple(_specialized(m, reason) for m in meta)  # type: ignore[misc]
    if meta is None or not any(isinstance(d, SymInt) for d in meta.shape):
        return meta
    shape = tuple(d.specialize(reason) if isinstance(d, SymInt) else d for d in meta.shape)
    return TensorMeta(shape, meta.dtype, meta.kind, meta.layout)


def _metas_in(value: Any) -> List[TensorMeta]:
    """The TensorMetas inside an argument structure (tuples, lists, dicts, slices)."""
    found: List[TensorMeta] = []
    _collect_metas(value, found)
    return found


def _collect_metas(value: Any, found: List[TensorMeta]) -> None:
    if isinstance(value, TensorMeta):
        found.append(value)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _collect_metas(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _collect_metas(item, found)


def _meta_of(node: Node) -> Any:
    if node.meta is None:
        raise Unsupported(f"node {node.name} has no metadata")
    return node.meta


def _nodes_in(value: Any) -> List[Node]:
    found: List[Node] = []
    _collect_nodes(value, found)
    return found
