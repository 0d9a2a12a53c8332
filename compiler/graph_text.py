"""The canonical text of a graph, identical on every Python and NumPy version.

Why not ``repr``: NumPy 2 prints ``np.float64(1.5)`` where NumPy 1 printed
``1.5``, dtype reprs differ between releases, and dict order follows
insertion.  Everything that reaches the text goes through ``format_value``,
which only emits forms this module defines:

    graph(x: float64[10]):
      add = numpy.add(x, x)  # float64[10]
      sum_1 = ndarray.sum(add, axis=0)  # float64 scalar
      return (add, sum_1)
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from compiler.graph import Graph, TensorMeta

# Python types whose values may appear as constants in a graph.
_PLAIN = (bool, int, float, complex, str, type(None), type(Ellipsis))
# Python types accepted as dtype arguments (np.zeros(3, dtype=float)).
_PY_TYPES = {bool: "bool", int: "int", float: "float", complex: "complex", object: "object"}


def dtype_name(dtype: np.dtype) -> str:
    """"float64", "int32", "bool", "complex128" ... with a byte-order prefix
    only for non-native dtypes."""
    dtype = np.dtype(dtype)
    name = dtype.name
    if dtype.byteorder not in ("=", "|"):
        name = dtype.byteorder + name
    return name


def python_scalar_type(dtype: np.dtype) -> type:
    """The Python type of a "python" graph input of this dtype (compiler.graph.TensorMeta)."""
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[np.dtype(dtype).kind]


def format_meta(meta: Any) -> str:
    if meta is None:
        return "?"
    if isinstance(meta, tuple):
        inner = ", ".join(format_meta(m) for m in meta)
        return f"({inner},)" if len(meta) == 1 else f"({inner})"
    dims = ", ".join(str(d) for d in meta.shape)
    if meta.kind == "scalar":
        return f"{dtype_name(meta.dtype)} scalar"
    if meta.kind == "generator":
        return "numpy.random.Generator"
    if meta.kind == "python":  # the same text under either NumPy casting rule
        return f"python {python_scalar_type(meta.dtype).__name__}"
    return f"{dtype_name(meta.dtype)}[{dims}]"


def _format_float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(float(value))


def is_canonical_constant(value: Any, allow_node: Callable[[Any], bool] = lambda v: False) -> bool:
    """Whether ``value`` can be a graph argument (and so has a canonical text)."""
    if allow_node(value):
        return True
    if isinstance(value, _PLAIN) or isinstance(value, np.dtype):
        return True
    if isinstance(value, np.generic):
        return value.dtype.kind in "biufc"
    if isinstance(value, type):
        return value in _PY_TYPES or (issubclass(value, np.generic) and value is not np.generic)
    if isinstance(value, (tuple, list)):
        return all(is_canonical_constant(v, allow_node) for v in value)
    if isinstance(value, slice):
        return all(is_canonical_constant(v, allow_node) for v in (value.start, value.stop, value.step))
    return False


def format_value(value: Any) -> str:
    """The canonical text of an argument: a node by its name, constants in a
    version-independent form."""
    name = getattr(value, "name", None)
    if getattr(value, "op", None) is not None and isinstance(name, str):
        return name  # a Node
    if isinstance(value, np.generic):  # before float: np.float64 subclasses it
        scalar = value.item()
        return f"numpy.{dtype_name(value.dtype)}({format_value(scalar)})"
    if value is None or isinstance(value, bool):
        return repr(value)
    if value is Ellipsis:
        return "..."
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        return _format_float(value)
    if isinstance(value, complex):
        return f"complex({_format_float(value.real)}, {_format_float(value.imag)})"
    if isinstance(value, str):
        return _format_str(value)
    if isinstance(value, np.dtype):
        return f"dtype({dtype_name(value)})"
    if isinstance(value, type):
        if value in _PY_TYPES:
            return _PY_TYPES[value]
        return f"numpy.{dtype_name(np.dtype(value))}"
    if isinstance(value, tuple):
        inner = ", ".join(format_value(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, slice):
        parts = (value.start, value.stop, value.step)
        return "slice(" + ", ".join(format_value(v) for v in parts) + ")"
    raise TypeError(f"no canonical text for a graph constant of type {type(value).__name__}")


def _format_str(value: str) -> str:
    # repr of str is stable across 3.8-3.13; written out for clarity of intent.
    return repr(value)


def format_call(target: str, args: tuple, kwargs: dict) -> str:
    parts = [format_value(a) for a in args]
    parts += [f"{k}={format_value(kwargs[k])}" for k in sorted(kwargs)]
    return f"{target}({', '.join(parts)})"


def format_graph(graph: "Graph") -> str:
    inputs = ", ".join(_format_placeholder(n.name, n.meta) for n in graph.placeholders)
    lines = [f"graph({inputs}):"]
    for node in graph.call_nodes:
        lines.append(f"  {node.name} = {format_call(node.target, node.args, node.kwargs)}"
                     f"  # {format_meta(node.meta)}")
    output: Optional[Any] = graph.output_node
    if output is not None:
        lines.append(f"  return {format_value(tuple(output.args[0]))}")
    return "\n".join(lines) + "\n"


def _format_placeholder(name: str, meta: "TensorMeta") -> str:
    text = f"{name}: {format_meta(meta)}"
    if meta.layout != "C":
        text += f" layout={meta.layout}"
    return text
