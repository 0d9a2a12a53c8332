"""How an ndarray (or NumPy scalar) is tracked: metadata, graph node, aliasing.

An ``ArrayVariable`` stands for one array value.  It is either an input (it
has a Source; its graph placeholder is made on first use) or the result of a
graph call (it has a node).  Shape, dtype and the other static attributes are
answered from its TensorMeta, without running anything.

In-place operators rebind the tracker to a new node, so every name sharing
the tracker sees the update, as with the real object.  That is only sound for
a temporary nobody else can observe: not an input, not a view of another
array, and with no views taken of it; anything else is Unsupported (a side
effect to replay, issue 4).
"""
from __future__ import annotations

import weakref

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from ..exc import Unsupported
from ..graph import Node, TensorMeta
from ..ops import OpInfo, lookup_attribute, lookup_method, lookup_operator
from ..symbolic_shapes import concrete
from .base import Translator, VariableTracker
from .constant import ConstantVariable
from .containers import (BaseListVariable, ListVariable, NamedTupleVariable, SliceVariable,
                         TupleVariable)
from .scalars import DynamicScalarVariable
from .sizes import reshape_target, size_variable

# Array attributes answered from the metadata (contract: ops.ARRAY_ATTRIBUTES).
_STATIC_ATTRS = ("shape", "ndim", "dtype", "size", "itemsize", "nbytes")
# Attributes that are graph ops (views or new arrays).
_OP_ATTRS = ("T", "real", "imag", "mT", "flat")
# Op kinds whose results never alias their arguments.
_FRESH_KINDS = frozenset({"elementwise", "reduction", "creation", "linalg"})
# Ops of other kinds that always return new memory.
_FRESH_OPS = frozenset({"numpy.copy", "ndarray.copy", "ndarray.flatten", "numpy.concatenate",
                        "numpy.stack", "numpy.vstack", "numpy.hstack", "numpy.dstack",
                        "numpy.column_stack", "numpy.repeat", "ndarray.repeat", "numpy.roll",
                        "numpy.tile", "numpy.sort", "numpy.argsort", "numpy.diff", "ndarray.argsort",
                        "ndarray.astype"})


class ArrayVariable(VariableTracker):
    # Which arrays may share memory (compiler.tracer.reaches does not follow them: they are
    # not references the program holds).
    bookkeeping_fields = ("views", "view_bases")

    def __init__(self, meta: TensorMeta, node: Optional[Node] = None, source=None,
                 example: Any = None) -> None:
        super().__init__(source)
        self.meta = meta
        self.node = node
        # The real input value (inputs only): for placeholder metadata and layout guards.
        self.example = example
        # Aliasing facts for in-place operators.
        self.view_bases: List["ArrayVariable"] = []
        # Arrays made from this one that may share its memory, held weakly: a view holds its
        # bases (view_bases), so strong references both ways would make a cycle that keeps
        # every example array alive after the trace until the next collection.
        self.views: List["weakref.ref[ArrayVariable]"] = []
        self.rebound = False
        self.mutated_input = False  # an input written in place: replayed into its buffer

    def describe(self) -> str:
        what = "array" if self.meta.kind == "array" else "NumPy scalar"
        return f"{what} {self.meta.dtype}{list(self.meta.shape)}"

    def python_type(self) -> type:
        return np.ndarray if self.meta.kind == "array" else self.meta.dtype.type

    def as_node(self, tx: Translator) -> Node:
        if self.node is None:
            self.node = tx.output.placeholder_for(self)
        return self.node

    # -- Python protocol --------------------------------------------------
    def truth(self, tx: Translator) -> bool:
        raise Unsupported(f"data-dependent branch: truth value of {self.describe()} "
                          "depends on the array's contents")

    def length(self, tx: Translator) -> int:
        return concrete(self._first_dimension(), "len() of an array")

    def size_of(self, tx: Translator) -> VariableTracker:
        """``len(x)`` read into Python: a dynamic size where the dimension is symbolic."""
        return size_variable(self._first_dimension(), tx.output.guards)

    def _first_dimension(self) -> Any:
        if self.meta.kind != "array" or not self.meta.shape:
            raise Unsupported(f"len() of a 0-d {self.describe()}")
        return self.meta.shape[0]

    def unpack(self, tx: Translator) -> List[VariableTracker]:
        n = self.length(tx)
        return [self.getitem(tx, ConstantVariable(i)) for i in range(n)]

    def getattr(self, tx: Translator, name: str) -> VariableTracker:
        meta = self.meta
        if name in _STATIC_ATTRS:
            # A dynamic size read into Python stays symbolic (compiler.variables.sizes) until
            # a use needs its value.
            value = getattr(meta, name)
            if name == "shape":
                return TupleVariable([size_variable(d, tx.output.guards) for d in value])
            return size_variable(value, tx.output.guards)
        attr_op = lookup_attribute(name)
        if attr_op is not None:
            return call_op(tx, attr_op, [self], {})
        if name in _OP_ATTRS:
            raise Unsupported(f"array attribute {name!r} is not in the allowlist")
        op = lookup_method(name)
        if op is None:
            import numpy as np
            if not callable(getattr(np.ndarray, name, None)):
                raise Unsupported(f"ndarray.{name} is not in the allowlist")
            # Loading the method is harmless; calling it is what cannot be traced, so the graph
            # breaks at the call (with the bound method rebuilt for the native call).
        return ArrayMethodVariable(self, name, op)

    def getitem(self, tx: Translator, key: VariableTracker) -> VariableTracker:
        return call_op(tx, lookup_operator("getitem"), [self, key], {}, fresh=_advanced_index(key))

    def setitem(self, tx: Translator, key, value) -> None:
        what = "item assignment"
        if self.meta.kind != "array":
            raise Unsupported(f"{what} into {self.describe()}")
        self.check_inplace(tx, what)
        result = call_op(tx, setitem_op(), [self, key, value], {}, fresh=True)
        self.rebind(tx, result, what)  # type: ignore[arg-type]

    def reconstruct(self, cg) -> str:
        if self.source is not None and (not self.rebound or self.mutated_input):
            return cg.source_expr(self.source)  # the caller's object (its buffer is replayed)
        return cg.graph_output(self.as_node(cg.tx))

    # -- in-place ---------------------------------------------------------
    def check_inplace(self, tx: Translator, what: str) -> None:
        """An in-place write is modelled for a temporary nobody else can observe, and for an
        input array (replayed into the caller's buffer by the cache entry); never for an
        array that shares memory with another tracked array."""
        if self.view_bases or any(tx.is_live(view) for view in _views_of(self)):
            raise Unsupported(f"{what} on an array that shares memory with another (view aliasing)")
        if self.source is not None:
            if self.example is None:
                raise Unsupported(f"{what} on {self.describe()} from {self.source.name()}")
            if not self.mutated_input:
                # A read-only input makes the plain function raise at this write: refuse now, and
                # make the entry check it (the replay must not fail after other effects ran).
                if not self.example.flags.writeable:
                    raise Unsupported(f"{what} on the read-only array {self.source.name()}")
                expr = self.source.expr(tx.output.ns.const)
                tx.output.guards.add(f"{self.source.name()} is writeable", f"{expr}.flags.writeable")
            tx.output.side_effects.note_array(self)
            self.mutated_input = True

    def rebind(self, tx: Translator, result: "ArrayVariable", what: str) -> None:
        tx.output.note_mutation(self, what)
        if not result.meta.same_value_type(self.meta):
            raise Unsupported(f"{what} would change {self.describe()} to {result.describe()} "
                              "(NumPy's in-place casting rules)")
        self.node = result.node
        self.meta = result.meta
        self.rebound = True


class ArrayMethodVariable(VariableTracker):
    """``x.sum`` before it is called."""

    def __init__(self, array: ArrayVariable, name: str, op) -> None:
        super().__init__(None)
        self.array = array
        self.name = name
        self.op = op

    def describe(self) -> str:
        return f"method ndarray.{self.name}"

    def call(self, tx: Translator, args, kwargs) -> VariableTracker:
        if self.op is None:
            why = _DATA_DEPENDENT_METHODS.get(self.name, "is not in the allowlist")
            raise Unsupported(f"ndarray.{self.name}() {why}")
        return call_op(tx, self.op, [self.array, *args], kwargs)

    def reconstruct(self, cg) -> str:
        return f"{self.array.reconstruct(cg)}.{self.name}"


_DATA_DEPENDENT_METHODS = {
    name: "reads the array's values into Python objects (data-dependent)"
    for name in ("item", "tolist", "tobytes", "tostring", "__bool__", "__int__", "__float__", "__index__")
}


def to_graph_arg(tx: Translator, var: VariableTracker) -> Any:
    """A tracker as a graph argument: arrays become nodes, constants stay values."""
    if isinstance(var, ArrayVariable):
        return var.as_node(tx)
    if isinstance(var, BaseListVariable):
        items = [to_graph_arg(tx, item) for item in var.items]
        return list(items) if var.python_type() is list else tuple(items)
    if isinstance(var, SliceVariable):
        return slice(*(to_graph_arg(tx, part) for part in var.parts))
    if var.is_python_constant():
        return var.as_python_constant()
    raise Unsupported(f"{var.describe()} cannot be an argument of a graph op")


def _arrays_in(vars: Sequence[VariableTracker]) -> List[ArrayVariable]:
    found: List[ArrayVariable] = []
    for var in vars:
        if isinstance(var, ArrayVariable):
            found.append(var)
        elif isinstance(var, BaseListVariable):
            found.extend(_arrays_in(var.items))
    return found


def _views_of(array: ArrayVariable) -> List[ArrayVariable]:
    """Every array that may share ``array``'s memory through views made in the trace (views
    of views included).  A write is refused only while one of them can still be reached:
    the temporaries of ``u[1:-1] = 0.5 * (u[:-2] + u[2:])`` are gone by the write."""
    found: List[ArrayVariable] = []
    pending = [ref() for ref in array.views]
    while pending:
        view = pending.pop()
        if view is not None and all(view is not seen for seen in found):
            found.append(view)
            pending.extend(ref() for ref in view.views)
    return found


def _advanced_index(key: VariableTracker) -> bool:
    """Whether indexing with ``key`` is NumPy's advanced indexing, which copies (the result
    shares no memory with the array): an integer or boolean array of one or more dimensions,
    or a list, as the key or inside a tuple key.  (A 0-d integer array indexes as an integer:
    basic indexing, a view.)"""
    parts = key.items if isinstance(key, BaseListVariable) and key.python_type() is tuple else [key]
    for part in parts:
        if isinstance(part, ArrayVariable) and part.meta.kind == "array" and len(part.meta.shape) >= 1 \
                and part.meta.dtype.kind in "biu":
            return True
        if isinstance(part, BaseListVariable) and part.python_type() is list:
            return True
    return False


def wrap_node(tx: Translator, node: Node, may_alias: Sequence[ArrayVariable] = ()) -> VariableTracker:
    meta = node.meta
    if isinstance(meta, TensorMeta):
        result = ArrayVariable(meta, node)
        if may_alias and meta.kind == "array":  # a NumPy scalar never shares memory
            result.view_bases = list(may_alias)
            for base in may_alias:
                base.views.append(weakref.ref(result))
        return result
    if isinstance(meta, tuple):
        getitem = lookup_operator("getitem")
        items = [wrap_node(tx, tx.output.graph.call(getitem, (node, i), {}), may_alias)
                 for i in range(len(meta))]
        # the sequence type NumPy returns (compiler.ops.evaluated.SequenceMeta)
        container = getattr(meta, "container", tuple)
        if container is list:
            return ListVariable(items)
        if container is not tuple:
            return NamedTupleVariable(items, container)
        return TupleVariable(items)
    raise Unsupported(f"{node.target} returned a value the graph cannot describe")


# ndarray.__pow__ takes fast paths by the exponent's value (2 -> square, 0.5 -> sqrt).
_VALUE_DEPENDENT_EXPONENTS = frozenset({"operator.pow", "operator.ipow"})


def takes_dynamic_scalar(op: OpInfo, position: int) -> bool:
    """Whether a dynamic Python scalar may be positional operand ``position`` of ``op`` as a
    graph input: an operand of an elementwise op, where NumPy reads it as a value of its type
    (its value decides no shape, and what it decides of the dtype is guarded:
    compiler.variables.scalars).  Not the target of an in-place operator (``a += x`` rebinds
    the scalar) nor the exponent of ``**``: those take it as a constant (specialized)."""
    if op.kind != "elementwise" or (op.inplace and position == 0):
        return False
    return not (op.name in _VALUE_DEPENDENT_EXPONENTS and position == 1)


_RESHAPES = frozenset({"ndarray.reshape", "numpy.reshape"})


def _reshape_with_size(args: Sequence[VariableTracker]) -> Sequence[VariableTracker]:
    """``x.reshape(n // 2, 2)`` / ``np.reshape(x, (n // 3, 3))``: one dynamic size in the target, no -1:
    the size becomes -1 where guards make that the same (compiler.variables.sizes), so the
    graph holds no size and the result's shape stays symbolic."""
    if len(args) < 2 or not isinstance(args[0], ArrayVariable):
        return args
    array, items = args[0], list(args[1:])
    if len(items) == 1 and isinstance(items[0], BaseListVariable) and items[0].python_type() in (tuple, list):
        target = reshape_target(array.meta.shape, items[0].items)
        if target is None:
            return args
        return [array, ListVariable(target) if items[0].python_type() is list else TupleVariable(target)]
    target = reshape_target(array.meta.shape, items)
    return args if target is None else [array] + target


def call_op(tx: Translator, op, args: Sequence[VariableTracker], kwargs: Dict[str, VariableTracker],
            fresh: bool = False) -> VariableTracker:
    """Put one allow-listed op into the graph and track its result (``fresh``: the result
    aliases none of the arguments' memory, whatever the op's kind)."""
    if op.name in _RESHAPES:
        args = _reshape_with_size(args)
    with tx.output.shape_env.reason(f"{op.name} takes a size as an argument"):
        graph_args = tuple(a.as_graph_operand(tx) if isinstance(a, DynamicScalarVariable) and
                           takes_dynamic_scalar(op, position) else to_graph_arg(tx, a)
                           for position, a in enumerate(args))
        graph_kwargs = {k: to_graph_arg(tx, v) for k, v in kwargs.items()}
    node = tx.output.graph.call(op, graph_args, graph_kwargs)
    fresh = fresh or op.kind in _FRESH_KINDS or (op.name in _FRESH_OPS and "copy" not in kwargs)
    may_alias = [] if fresh else _arrays_in(list(args) + list(kwargs.values()))
    return wrap_node(tx, node, may_alias)


def _setitem(array, index, value):
    array[index] = value
    return array


def _setitem_rule(op, args, kwargs):
    """``a[index] = value`` on a private temporary: the result is ``a`` itself (same meta).
    Only assignments NumPy accepts without surprises are captured: the value must broadcast
    to the indexed region, with same-kind casting."""
    target, index, value = args
    region = lookup_operator("getitem").infer(target, index)
    shape = getattr(value, "shape", ())
    try:
        if np.broadcast_shapes(tuple(shape), region.shape) != region.shape:
            raise ValueError
    except ValueError:
        raise Unsupported(f"cannot assign a value of shape {tuple(shape)} into a region of shape "
                          f"{region.shape}") from None
    value_dtype = value.dtype if isinstance(value, TensorMeta) else np.asarray(value).dtype
    if not np.can_cast(value_dtype, target.dtype, "same_kind") and not (
            isinstance(value, (int, float, bool)) and target.dtype.kind in "fc"):
        raise Unsupported(f"assigning {value_dtype} into {target.dtype} casts unsafely")
    return TensorMeta(target.shape, target.dtype, "array", target.layout)


_SETITEM_OP = []


def setitem_op():
    """A functional item assignment for private temporaries (the tracker is rebound to the
    result, so the mutation is seen by every alias, of which there are none by construction).
    Not part of the public allowlist: only the tracer emits it."""
    if not _SETITEM_OP:
        _SETITEM_OP.append(OpInfo("operator.setitem", _setitem, "other", _setitem_rule, inplace=True,
                                  lowerable=False, doc="item assignment into a temporary"))
    return _SETITEM_OP[0]
