"""Dynamic dimensions: symbolic sizes that keep their trace-time value as a hint.

A dimension of an input array marked dynamic is a ``SymInt``: a symbol (``s0``,
``s1``, ...) bound to where the size is read (``L['x'].shape[0]``), with the
size the trace saw as its hint.  Shape rules compute with SymInts as with
ints (``+ - * // %`` build expressions), so a result shape can be ``(s0 + 3,)``
and the graph text shows it.

Correctness does not rely on a symbolic-math library: every question whose
answer a trace may depend on is answered from the hints *and recorded as a
guard* of the cache entry, over the real sizes of later calls:

* a comparison (``s0 == s1``, ``s0 >= 5``, ``s0 == 1`` ...) records the relation
  that held (or its negation), unless the symbols' known range decides it
  (every dynamic size is >= 2: sizes 0 and 1 are always specialized, so
  ``s0 == 1`` is False on every call and needs no guard);
* a conversion to a Python int (``int()``, ``operator.index``, ``hash``, a NumPy
  call reading the size) *specializes*: the guard ``s0 == 7`` is recorded with
  the reason (``ShapeEnv.reason``) in its name.

So a guard set describes exactly the calls for which every decision of the
trace comes out the same, and a cache entry is valid for all of them.

Which dimensions become dynamic is decided per compile (``FramePolicy``):
``dynamic=True`` all of them from the first compile, ``False`` none, ``None``
(the default) Dynamo's *automatic dynamic*: the first compile is static, and
a recompile makes dynamic each dimension whose size differs from the one an
earlier compile of the frame saw for the same source (same rank).
"""
from __future__ import annotations

import contextlib
import math
import operator
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import logs

# An expression: ("sym", index) | (operator name, left, right) | ("neg", operand); leaves
# inside may be plain ints.
Expr = Union[int, tuple]

_INFINITY = math.inf
# Every dynamic size is at least this: 0 and 1 are specialized (NumPy's broadcasting and
# empty-array paths change behaviour there, as in Dynamo's 0/1 specialization).
MIN_DYNAMIC_SIZE = 2

_BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
           "%": operator.mod}
_COMPARISONS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
                ">": operator.gt, ">=": operator.ge}
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


class ShapeEnv:
    """The symbols of one trace and the guards their use records (into the trace's
    GuardSet)."""

    def __init__(self, guards: Any) -> None:
        self.guards = guards                      # compiler.guards.GuardSet
        self.names: List[str] = []                # symbol index -> source name (L['x'].shape[0])
        self.codes: List[str] = []                # symbol index -> Python expression in the entry
        self.hints: List[int] = []
        self._reasons: List[str] = []
        # Where the trace is (function and line), for a specialization that no caller named:
        # set by the tracer.
        self.site: Optional[Callable[[], str]] = None
        # symbol index -> a smaller index a recorded guard made it equal to (s0 == s1):
        # shapes equal on every accepted call are then one shape to the backends (same_shape)
        self._equal: Dict[int, int] = {}

    def create_symbol(self, source_name: str, source_code: str, hint: int) -> "SymInt":
        index = len(self.names)
        self.names.append(source_name)
        self.codes.append(source_code)
        self.hints.append(hint)
        return SymInt(self, ("sym", index), hint)

    @contextlib.contextmanager
    def reason(self, text: str) -> Iterator[None]:
        """What the trace is doing (named in a specialization guard)."""
        self._reasons.append(text)
        try:
            yield
        finally:
            self._reasons.pop()

    def current_reason(self) -> str:
        if self._reasons:
            return self._reasons[-1]
        if self.site is not None:
            return f"a size used as a Python int ({self.site()})"
        return "a size used as a Python int"

    def record(self, left: Expr, op: str, right: Expr, note: str = "") -> None:
        left, op, right = _solved_for_one_symbol(left, op, right)
        if op == "==" and _is_symbol(left) and _is_symbol(right):
            low, high = sorted((self.representative(left[1]), self.representative(right[1])))
            if low != high:
                self._equal[high] = low
        name = f"{render_top(left, self.symbol_name)} {op} {render_top(right, self.symbol_name)}"
        code = f"{render(left, self.symbol_code)} {op} {render(right, self.symbol_code)}"
        self.guards.add(name + (f" ({note})" if note else ""), code)

    def representative(self, index: int) -> int:
        """The smallest symbol a chain of recorded ``==`` guards makes equal to ``index``."""
        while index in self._equal:
            index = self._equal[index]
        return index

    def substituted(self, expr: Expr) -> Expr:
        """``expr`` with each symbol replaced by its representative."""
        if _is_symbol(expr):
            return ("sym", self.representative(expr[1]))
        if isinstance(expr, tuple):
            return (expr[0],) + tuple(self.substituted(e) for e in expr[1:])
        return expr

    def symbol_name(self, index: int) -> str:
        return f"s{index}"

    def symbol_code(self, index: int) -> str:
        return self.codes[index]

    def legend(self, sym: "SymInt") -> str:
        """``s0 = L['x'].shape[0]`` for a plain symbol."""
        return f"{sym} = {self.names[sym.expr[1]]}"


_SWAPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _solved_for_one_symbol(left: Expr, op: str, right: Expr) -> Tuple[Expr, str, Expr]:
    """``s0 - 1 == 1`` as ``s0 == 2``, ``3 < s0`` as ``s0 > 3``, ``s1 == s0`` as ``s0 == s1``:
    a relation over one or two terms with coefficient 1 reads best solved for the first."""
    coefs, constant = _linear(("-", left, right))
    if sorted(coefs.values()) == [-1, 1]:
        plus = next(k for k, v in coefs.items() if v == 1)
        minus = next(k for k, v in coefs.items() if v == -1)
        # plus + c op minus
        if _atom_key(plus) < _atom_key(minus):
            return plus, op, _canonical(("-", minus, constant))
        return minus, _SWAPPED[op], _canonical(("+", plus, constant))
    if len(coefs) != 1:
        return left, op, right
    (atom, coef), = coefs.items()
    if coef == 1:
        return atom, op, -constant
    if coef == -1:
        return atom, _SWAPPED[op], constant
    return left, op, right


def render_top(expr: Expr, symbol: Callable[[int], str]) -> str:
    """``render`` without the parentheses around the whole expression."""
    if isinstance(expr, tuple) and expr[0] == "neg":
        return f"-{render(expr[1], symbol)}"
    if isinstance(expr, tuple) and expr[0] in _BINARY:
        return f"{render(expr[1], symbol)} {expr[0]} {render(expr[2], symbol)}"
    return render(expr, symbol)


def render(expr: Expr, symbol: Callable[[int], str]) -> str:
    if isinstance(expr, int):
        return str(expr) if expr >= 0 else f"({expr})"
    if expr[0] == "sym":
        return symbol(expr[1])
    if expr[0] == "neg":
        return f"(-{render(expr[1], symbol)})"
    op, left, right = expr
    return f"({render(left, symbol)} {op} {render(right, symbol)})"


def _bounds(expr: Expr) -> Tuple[float, float]:
    """An interval the expression's value lies in on every call the guards accept (each
    symbol >= MIN_DYNAMIC_SIZE); (-inf, inf) where nothing simple is known."""
    if isinstance(expr, int):
        return (expr, expr)
    kind = expr[0]
    if kind == "sym":
        return (MIN_DYNAMIC_SIZE, _INFINITY)
    if kind in ("+", "-", "neg") or kind == "*" and (isinstance(expr[1], int) or isinstance(expr[2], int)):
        return _linear_bounds(expr)
    left, right = _bounds(expr[1]), _bounds(expr[2])
    if kind == "*" and left[0] >= 0 and right[0] >= 0:
        return (left[0] * right[0], left[1] * right[1])
    if kind == "//" and left[0] >= 0 and isinstance(expr[2], int) and expr[2] > 0:
        return (left[0] // expr[2], left[1] // expr[2] if left[1] != _INFINITY else _INFINITY)
    if kind == "%" and isinstance(expr[2], int) and expr[2] > 0:
        return (0, expr[2] - 1)
    return (-_INFINITY, _INFINITY)


def _linear(expr: Expr) -> Tuple[Dict[tuple, int], int]:
    """``expr`` as a sum of terms: (term -> coefficient, constant).  A term (an *atom*) is a
    symbol or an expression that is not a sum (a product of sizes, a quotient, a remainder)."""
    if isinstance(expr, int):
        return {}, expr
    kind = expr[0]
    if kind == "neg":
        coefs, constant = _linear(expr[1])
        return {k: -v for k, v in coefs.items()}, -constant
    if kind in ("+", "-"):
        (left, left_constant), (right, right_constant) = _linear(expr[1]), _linear(expr[2])
        sign = 1 if kind == "+" else -1
        coefs = dict(left)
        for k, v in right.items():
            coefs[k] = coefs.get(k, 0) + sign * v
        return {k: v for k, v in coefs.items() if v}, left_constant + sign * right_constant
    if kind == "*" and (isinstance(expr[1], int) or isinstance(expr[2], int)):
        factor, other = (expr[1], expr[2]) if isinstance(expr[1], int) else (expr[2], expr[1])
        coefs, constant = _linear(other)
        return {k: v * factor for k, v in coefs.items() if v * factor}, constant * factor
    return {expr: 1}, 0


def _atom_key(atom: tuple) -> Tuple[int, Any]:
    """Symbols first, by number; other terms by their text."""
    if atom[0] == "sym":
        return (0, atom[1])
    return (1, render(atom, lambda i: f"s{i}"))


def _linear_bounds(expr: Expr) -> Tuple[float, float]:
    coefs, constant = _linear(expr)
    lo = hi = float(constant)
    for atom, coef in coefs.items():
        atom_lo, atom_hi = _bounds(atom)
        lo += coef * (atom_lo if coef > 0 else atom_hi)
        hi += coef * (atom_hi if coef > 0 else atom_lo)
    return lo, hi


def _decided(left: Expr, op: str, right: Expr) -> Optional[bool]:
    """The comparison's answer where it is the same on every accepted call, else None."""
    if left == right:
        return op in ("==", "<=", ">=")
    lo, hi = _linear_bounds(("-", left, right))
    if lo != lo or hi != hi:  # nan from inf - inf
        return None
    if lo > 0:
        return op in ("!=", ">", ">=")
    if hi < 0:
        return op in ("!=", "<", "<=")
    if lo == 0 and op == ">=" or hi == 0 and op == "<=":
        return True
    if lo == 0 and op == "<" or hi == 0 and op == ">":
        return False
    return None


def _expr_and_hint(value: Any) -> Optional[Tuple[Expr, int]]:
    if isinstance(value, SymInt):
        return value.expr, value.hint
    if isinstance(value, int) and not isinstance(value, bool):
        return value, value
    if isinstance(value, np.integer):
        return int(value), int(value)
    return None


class SymInt:
    """A size known only as an expression over dynamic dimensions (plus its hint)."""

    __slots__ = ("env", "expr", "hint")

    def __init__(self, env: ShapeEnv, expr: Expr, hint: int) -> None:
        self.env = env
        self.expr = expr
        self.hint = hint

    # -- text -------------------------------------------------------------
    def __repr__(self) -> str:
        return render_top(self.expr, self.env.symbol_name)

    __str__ = __repr__

    # -- arithmetic builds expressions --------------------------------------
    def _binary(self, op: str, other: Any, reflected: bool = False) -> Any:
        found = _expr_and_hint(other)
        if found is None:
            return _with_specialized(self, _BINARY[op], other, reflected)
        expr, hint = found
        left, right = (expr, self.expr) if reflected else (self.expr, expr)
        left_hint, right_hint = (hint, self.hint) if reflected else (self.hint, hint)
        if op in ("//", "%") and right_hint == 0:
            raise ZeroDivisionError("integer division or modulo by zero")
        simplified = _simplify(op, left, right)
        value = _BINARY[op](left_hint, right_hint)
        if isinstance(simplified, int):
            return simplified
        return SymInt(self.env, simplified, value)

    def __add__(self, other: Any) -> Any:
        return self._binary("+", other)

    def __radd__(self, other: Any) -> Any:
        return self._binary("+", other, True)

    def __sub__(self, other: Any) -> Any:
        return self._binary("-", other)

    def __rsub__(self, other: Any) -> Any:
        return self._binary("-", other, True)

    def __mul__(self, other: Any) -> Any:
        return self._binary("*", other)

    def __rmul__(self, other: Any) -> Any:
        return self._binary("*", other, True)

    def __floordiv__(self, other: Any) -> Any:
        return self._binary("//", other)

    def __rfloordiv__(self, other: Any) -> Any:
        return self._binary("//", other, True)

    def __mod__(self, other: Any) -> Any:
        return self._binary("%", other)

    def __rmod__(self, other: Any) -> Any:
        return self._binary("%", other, True)

    def __truediv__(self, other: Any) -> Any:
        return _with_specialized(self, operator.truediv, other)

    def __rtruediv__(self, other: Any) -> Any:
        return _with_specialized(self, operator.truediv, other, True)

    def __pow__(self, other: Any) -> Any:
        return _with_specialized(self, operator.pow, other)

    def __rpow__(self, other: Any) -> Any:
        return _with_specialized(self, operator.pow, other, True)

    def __abs__(self) -> Any:
        return self if _bounds(self.expr)[0] >= 0 else abs(self.specialize("abs() of a size"))

    def __neg__(self) -> "SymInt":
        return SymInt(self.env, ("neg", self.expr), -self.hint)

    def __pos__(self) -> "SymInt":
        return self

    # -- questions record guards --------------------------------------------
    def _compare(self, op: str, other: Any, reflected: bool = False) -> Any:
        found = _expr_and_hint(other)
        if found is None:
            return _with_specialized(self, _COMPARISONS[op], other, reflected)
        expr, hint = found
        left, right = (expr, self.expr) if reflected else (self.expr, expr)
        answer = _COMPARISONS[op](hint, self.hint) if reflected else _COMPARISONS[op](self.hint, hint)
        if _decided(left, op, right) is None:
            self.env.record(left, op if answer else _NEGATED[op], right)
        return answer

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return self._compare("==", other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return self._compare("!=", other)

    def __lt__(self, other: Any) -> Any:
        return self._compare("<", other)

    def __le__(self, other: Any) -> Any:
        return self._compare("<=", other)

    def __gt__(self, other: Any) -> Any:
        return self._compare(">", other)

    def __ge__(self, other: Any) -> Any:
        return self._compare(">=", other)

    def __bool__(self) -> bool:
        return bool(self._compare("!=", 0))

    # -- leaving the symbolic world specializes ------------------------------
    def specialize(self, reason: Optional[str] = None) -> int:
        """The hint, with the guard that the expression equals it on later calls."""
        if not isinstance(self.expr, int):
            self.env.record(self.expr, "==", self.hint,
                            f"specialized: {reason or self.env.current_reason()}")
        return self.hint

    def __index__(self) -> int:
        return self.specialize()

    def __int__(self) -> int:
        return self.specialize()

    def __float__(self) -> float:
        return float(self.specialize())

    def __hash__(self) -> int:
        # Equal values must hash alike, and equality with an int is a question about the
        # value: only a specialized size can be hashed soundly.
        return hash(self.specialize("a size used as a dict or set key"))


def _with_specialized(sym: SymInt, fn: Callable[[Any, Any], Any], other: Any, reflected: bool = False) -> Any:
    """``fn`` of a size and a number where the result is no size (``s0 - 1.0``, ``s0 == 2.0``,
    ``s0 / 2``): over the specialized size.  Other types get NotImplemented, as an int would
    give them."""
    numeric = isinstance(other, (int, float, complex, np.number))
    if isinstance(other, SymInt):
        other = other.specialize(f"{fn.__name__} of two sizes")
        numeric = True
    if not numeric:
        return NotImplemented
    value = sym.specialize(f"a size combined with a {type(other).__name__} ({fn.__name__})")
    return fn(other, value) if reflected else fn(value, other)


def _simplify(op: str, left: Expr, right: Expr) -> Expr:
    if isinstance(left, int) and isinstance(right, int):
        return _BINARY[op](left, right)
    if op == "+" and right == 0 or op == "-" and right == 0:
        return left
    if op == "+" and left == 0:
        return right
    if op == "*" and (left == 0 or right == 0):
        return 0
    if op == "*" and right == 1 or op == "//" and right == 1:
        return left
    if op == "*" and left == 1:
        return right
    if op == "-" and left == right:
        return 0
    return _canonical((op, left, right))


def _canonical(expr: tuple) -> Expr:
    """A sum in one spelling (symbols in order, then other terms, the constant last), so
    that equal sums compare equal structurally: ``-1 + s0`` and ``s0 - 1`` are both
    ``s0 - 1``, ``((s0 // 2) - 1) + 1`` is ``s0 // 2``."""
    coefs, constant = _linear(expr)
    result: Expr = 0
    for atom in sorted(coefs, key=_atom_key):
        coef = coefs[atom]
        term: Expr = atom if abs(coef) == 1 else ("*", abs(coef), atom)
        if result == 0:
            result = term if coef > 0 else ("neg", term)
        else:
            result = ("+" if coef > 0 else "-", result, term)
    if constant:
        result = constant if result == 0 else ("+", result, constant) if constant > 0 else \
            ("-", result, -constant)
    return result


# -- helpers for the rest of the compiler ------------------------------------------------
def is_symbolic(value: Any) -> bool:
    return isinstance(value, SymInt)


def has_symbols(shape: Sequence[Any]) -> bool:
    return any(isinstance(d, SymInt) for d in shape)


def _is_symbol(expr: Expr) -> bool:
    return isinstance(expr, tuple) and expr[0] == "sym"


def same_shape(left: Sequence[Any], right: Sequence[Any]) -> bool:
    """Whether two shapes are equal on every call the trace's guards accept, as far as the
    expressions show (a question about the graph, asked after the trace: it records no
    guard).  Symbols a recorded guard made equal (``s0 == s1``) count as one; anything
    else must be the same expression."""
    def key(shape: Sequence[Any]) -> tuple:
        return tuple(("sym", d.env.substituted(d.expr)) if isinstance(d, SymInt) else d
                     for d in shape)
    return len(left) == len(right) and key(left) == key(right)


def concrete(value: Any, reason: str) -> Any:
    """``value`` as a plain int (a SymInt specialized, for ``reason``); other values as they are."""
    if isinstance(value, SymInt):
        return value.specialize(reason)
    return value


def concrete_shape(shape: Sequence[Any], reason: str) -> Tuple[int, ...]:
    return tuple(concrete(d, reason) for d in shape)


def hint_of(value: Any) -> Any:
    """The trace-time value of a size, without recording anything (for messages and texts)."""
    return value.hint if isinstance(value, SymInt) else value


@contextlib.contextmanager
def inferring(metas: Sequence[Any], what: str) -> Iterator[None]:
    """While ``what`` infers its result from ``metas`` (TensorMetas): a size it needs as an
    int is specialized naming it."""
    env = next((d.env for m in metas for d in m.shape if isinstance(d, SymInt)), None)
    if env is None:
        yield
        return
    with env.reason(f"{what} needs the size as an int"):
        yield


# -- which dimensions are dynamic: per compile of a frame --------------------------------
class FramePolicy:
    """How one compile of a frame chooses dynamic dimensions: the ``dynamic`` option and
    the shapes earlier compiles of the frame saw per source (kept on its FrameCache)."""

    def __init__(self, dynamic: Optional[bool], seen_shapes: Dict[str, Tuple[Optional[int], ...]],
                 compile_id: str = "") -> None:
        self.dynamic = dynamic
        self.seen_shapes = seen_shapes
        self.compile_id = compile_id

    def dynamic_dims(self, source_name: str, shape: Tuple[int, ...]) -> Tuple[bool, ...]:
        """For an input array read from ``source_name`` with ``shape``: which dimensions are
        symbolic in this compile (never a size 0 or 1).  Updates the frame's record."""
        if self.dynamic is False:
            return (False,) * len(shape)
        if self.dynamic is True:
            return tuple(d >= MIN_DYNAMIC_SIZE for d in shape)
        seen = self.seen_shapes.get(source_name)
        if seen is None or len(seen) != len(shape):
            self.seen_shapes[source_name] = tuple(shape)
            return (False,) * len(shape)
        # A dimension that has changed once stays dynamic (None) for every later compile.
        merged = tuple(None if old is None or old != new else old for old, new in zip(seen, shape))
        self.seen_shapes[source_name] = merged
        if merged != seen:
            logs.log("recompiles", self.compile_id, "automatic dynamic shapes: %s was %s, now %s; "
                     "dimensions %s are dynamic from now on", source_name, _shape_text(seen), shape,
                     [i for i, d in enumerate(merged) if d is None])
        return tuple(old is None and new >= MIN_DYNAMIC_SIZE for old, new in zip(merged, shape))


def _shape_text(shape: Tuple[Optional[int], ...]) -> str:
    return "(" + ", ".join("*" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


_STATIC = FramePolicy(False, {})
# Per thread: two threads may compile at once, each with its frame's policy.
_local = threading.local()


@contextlib.contextmanager
def frame_policy(policy: FramePolicy) -> Iterator[None]:
    """The policy the builder asks while one compile traces its frame."""
    stack = _local.__dict__.setdefault("policies", [])
    stack.append(policy)
    try:
        yield
    finally:
        stack.pop()


def current_policy() -> FramePolicy:
    stack = _local.__dict__.get("policies")
    return stack[-1] if stack else _STATIC
