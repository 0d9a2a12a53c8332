"""The corpus registry: ``@case`` records a function, the calls to make and what the tracer should capture.

A corpus entry is ordinary NumPy user code plus a declaration:

* ``calls``: a function of an :class:`ArgMaker` returning the calls to make, in
  order (several calls: fresh values, new shapes, new dtypes).  A call is an
  argument tuple, or :func:`kw` for keyword arguments.
* ``graphs`` / ``breaks``: the expected ``graph_count`` and
  ``graph_break_count`` of ``compiler.explain``; ``graphs=None`` marks a
  correctness-only case (a construct the tracer is not required to capture
  in one graph: it must still behave exactly like the plain function).
* ``nodes``: call nodes in the (single) graph, reasoned out from the program
  (one per NumPy operation on arrays), an int for every call or a list with
  one entry per call; ``None`` in the list means "not asserted for this call"
  (a call that raises, for example).
* ``raises``: indices of the calls on which the plain function raises.
* ``promotion_sensitive``: indices of calls whose result dtypes follow NEP 50 (a float32 NumPy scalar with a
  Python number stays float32 on NumPy 2 but becomes float64 on NumPy 1.x, the only NumPy CPython 3.8 has):
  their graph text legitimately differs between NumPy majors and is compared on NumPy >= 2 only.
* ``close``: why results may differ by floating-point reassociation; when
  set, float results are compared with ``allclose`` instead of exactly.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np


class Call:
    """One call of a corpus function: positional and keyword arguments."""

    def __init__(self, args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]] = None) -> None:
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})

    def __repr__(self) -> str:
        return f"Call(args={len(self.args)}, kwargs={sorted(self.kwargs)})"


def kw(*args: Any, **kwargs: Any) -> Call:
    """A call with keyword arguments: ``kw(x, axis=0)``."""
    return Call(args, kwargs)


class ArgMaker:
    """Seeded argument factory; every case gets its own stream so adding a case never changes another's data."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def f(self, *shape: int, dtype: Any = np.float64) -> np.ndarray:
        """Standard-normal floats."""
        return self.rng.standard_normal(shape).astype(dtype)

    def pos(self, *shape: int, dtype: Any = np.float64) -> np.ndarray:
        """Floats in [0.5, 2): safe for log, sqrt and division."""
        return self.rng.uniform(0.5, 2.0, shape).astype(dtype)

    def i(self, *shape: int, lo: int = -5, hi: int = 6, dtype: Any = np.int64) -> np.ndarray:
        """Integers in [lo, hi)."""
        return self.rng.integers(lo, hi, shape).astype(dtype)

    def b(self, *shape: int) -> np.ndarray:
        """Booleans."""
        return self.rng.random(shape) < 0.5

    def with_nans(self, *shape: int) -> np.ndarray:
        """Floats with about a quarter of the entries NaN."""
        out = self.f(*shape)
        out[self.rng.random(shape) < 0.25] = np.nan
        return out

    def onehot(self, rows: int, classes: int) -> np.ndarray:
        out = np.zeros((rows, classes))
        out[np.arange(rows), self.rng.integers(0, classes, rows)] = 1.0
        return out


CallSpec = Union[Tuple[Any, ...], Call]
NodeSpec = Union[None, int, Sequence[Optional[int]]]


@dataclass
class Case:
    name: str                       # "<family>.<function>"
    fn: Callable[..., Any]
    make_calls: Callable[[ArgMaker], List[CallSpec]]
    graphs: Optional[int] = 1
    breaks: Optional[int] = 0
    nodes: NodeSpec = None
    raises: FrozenSet[int] = frozenset()
    promotion_sensitive: FrozenSet[int] = frozenset()
    close: Optional[str] = None
    family: str = ""
    notes: str = ""

    @property
    def full_graph(self) -> bool:
        """A case the tracer must capture as one graph with no break."""
        return self.graphs == 1 and self.breaks == 0

    def calls(self) -> List[Call]:
        """The calls, freshly generated (same seed every time, new objects every time)."""
        made = self.make_calls(ArgMaker(zlib.crc32(self.name.encode())))
        return [c if isinstance(c, Call) else Call(c) for c in made]

    def expected_nodes(self, index: int) -> Optional[int]:
        """Call nodes expected in the graph on call ``index``; None when not asserted."""
        if index in self.raises or self.nodes is None:
            return None
        if isinstance(self.nodes, int):
            return self.nodes
        return self.nodes[index]


_REGISTRY: Dict[str, Case] = {}


def case(*, calls: Callable[[ArgMaker], List[CallSpec]], graphs: Optional[int] = 1,
         breaks: Optional[int] = 0, nodes: NodeSpec = None, raises: Iterable[int] = (),
         promotion_sensitive: Iterable[int] = (), close: Optional[str] = None, name: Optional[str] = None,
         notes: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as a corpus case; returns the function unchanged."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        family = fn.__module__.rsplit(".", 1)[-1]
        full_name = f"{family}.{name or fn.__name__}"
        if full_name in _REGISTRY:
            raise ValueError(f"corpus case {full_name} registered twice")
        if graphs is not None and nodes is None:
            raise ValueError(f"corpus case {full_name}: a graph case must declare nodes=")
        _REGISTRY[full_name] = Case(name=full_name, fn=fn, make_calls=calls, graphs=graphs,
                                    breaks=breaks if graphs is not None else None, nodes=nodes,
                                    raises=frozenset(raises), promotion_sensitive=frozenset(promotion_sensitive),
                                    close=close, family=family,
                                    notes=notes)
        return fn

    return register


def registered() -> Dict[str, Case]:
    return dict(_REGISTRY)
