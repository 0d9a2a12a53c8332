"""``OpInfo``: one allow-listed operation and how its result metadata is inferred."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from compiler.exc import Unsupported
from compiler.trace_time import WarningTrapped

# "query": a function of metadata only (np.shape, np.result_type), folded into a constant
# at trace time, never a graph node (compiler.ops.queries).
KINDS = ("elementwise", "reduction", "shape", "creation", "linalg", "other", "query")

# infer rule: (op, args, kwargs) -> TensorMeta | tuple of TensorMeta
InferRule = Callable[["OpInfo", tuple, dict], Any]


class OpInfo:
    """An operation the tracer may put into a graph.

    ``name`` is the canonical target printed in the graph text ("numpy.add",
    "ndarray.sum", "operator.getitem"); ``fn`` is what runs.  ``ufunc`` is set
    when a call is exactly ``ufunc(*args, **kwargs)`` so a backend may add
    ``out=``; ``source`` tells the NumPy code generator how to spell a call.
    """

    __slots__ = ("name", "fn", "kind", "rule", "ufunc", "source", "method", "inplace",
                 "lowerable", "doc")

    def __init__(self, name: str, fn: Callable, kind: str, rule: InferRule, *,
                 ufunc: Optional[np.ufunc] = None, source: Optional[str] = None,
                 method: Optional[str] = None, inplace: bool = False, lowerable: bool = True,
                 doc: str = ""):
        if kind not in KINDS:
            raise ValueError(f"OpInfo kind must be one of {KINDS}, got {kind!r}")
        self.name = name
        self.fn = fn
        self.kind = kind
        self.rule = rule
        self.ufunc = ufunc
        # How generated code spells the call: "numpy.add" (a function path),
        # "method:sum", "attr:T", "binop:+", "unop:-", "inplace:+=", "getitem",
        # or None (call fn through a bound global).
        self.source = source
        self.method = method
        self.inplace = inplace
        self.lowerable = lowerable
        self.doc = doc

    def infer(self, *args: Any, **kwargs: Any) -> Any:
        """Result metadata from the arguments' metadata (TensorMeta or
        constants).  Raises ``Unsupported`` with NumPy's reason when the call
        would fail or cannot be captured."""
        try:
            return self.rule(self, args, kwargs)
        except Unsupported:
            raise
        except WarningTrapped as trapped:  # it would warn in the graph as well, on every call
            raise Unsupported(f"{self.name} issues a warning for these argument types or shapes "
                              f"({trapped}); it runs natively") from None
        except Exception as error:  # NumPy rejected the stand-in call: it rejects the real one
            raise Unsupported(f"{self.name}: {type(error).__name__}: {error}") from error

    def __repr__(self) -> str:
        return f"<OpInfo {self.name} ({self.kind})>"
