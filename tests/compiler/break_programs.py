"""Programs with graph breaks (issue 4) and the differential checker the break tests share.

Every program is ordinary NumPy user code with one or more constructs the tracer cannot
capture.  The line of each break is marked with a ``# BREAK`` comment, so tests find its
file:line from the source instead of hard-coding it.  ``check_program`` runs the plain and
the compiled function on fresh copies of the same arguments, call after call, and compares
everything a caller could observe: the value (exact, dtype and type), printed output, the
exception (type and message), the arguments and module globals afterwards, and the order in
which side effects happened (``TRACE`` records appends and printed text in one list).
"""
from __future__ import annotations

import contextlib
import copy
import hashlib
import inspect
import io
import json
import os
import re
import zlib
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

import compiler
from tests.corpus import runner as corpus_runner
from tests.corpus.compare import aliasing, assert_same
from tests.corpus.registry import Call

# ---------------------------------------------------------------------------------------------
# The checker
# ---------------------------------------------------------------------------------------------

# One ordered record of what programs did: their own appends and every printed chunk.
TRACE: List[Any] = []
# Globals that programs store to; reset to these values before every run.
GLOBAL_DEFAULTS: Dict[str, Any] = {"COUNTER": 0, "LAST_TOTAL": None, "REGISTRY": {}}
COUNTER = 0
LAST_TOTAL: Any = None
REGISTRY: Dict[str, Any] = {}


class _TracingStream(io.StringIO):
    """stdout during a run: keeps the text and records each write in TRACE, so the order of
    prints relative to other side effects is compared too."""

    def write(self, text: str) -> int:
        TRACE.append(("out", text))
        return super().write(text)


@dataclass
class Outcome(corpus_runner.Outcome):
    """The corpus runner's outcome, plus the module globals after the call and the order of
    the side effects (TRACE)."""
    globals_after: Dict[str, Any] = field(default_factory=dict)
    trace: List[Any] = field(default_factory=list)


def reset_globals() -> None:
    """Put the module's mutable state back in place (same objects, so guards on identity hold)."""
    TRACE.clear()
    REGISTRY.clear()
    globals().update(COUNTER=0, LAST_TOTAL=None)


def snapshot_globals() -> Dict[str, Any]:
    return copy.deepcopy({name: globals()[name] for name in GLOBAL_DEFAULTS})


def run_once(fn: Callable[..., Any], call: Call) -> Outcome:
    args, kwargs = copy.deepcopy((call.args, call.kwargs))
    reset_globals()
    stream = _TracingStream()
    value, error = None, None
    # Warnings are recorded in order and written into the stream (so into TRACE too); the error
    # state after the call is compared (corpus_runner.observing).
    with contextlib.redirect_stdout(stream), corpus_runner.observing(stream) as (seen, errstate):
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:  # the plain function's exceptions are part of its behaviour
            error = exc
        errstate.update(np.geterr())
    refcounts = corpus_runner.argument_refcounts(call, args, kwargs) if error is None else None
    return Outcome(value, error, stream.getvalue(), (args, kwargs), aliasing(value, (args, kwargs)),
                   warnings=seen, errstate=errstate, refcounts=refcounts, globals_after=snapshot_globals(),
                   trace=copy.deepcopy(TRACE))


def assert_same_outcome(plain: Outcome, compiled: Outcome, where: str) -> None:
    # The corpus runner compares value, exception, stdout, arguments and aliasing (exactly: close=None).
    corpus_runner.assert_same_outcome(plain, compiled, close=None, where=where)
    assert_same(plain.globals_after, compiled.globals_after, path=f"{where}: globals after the call")
    assert_same(plain.trace, compiled.trace, path=f"{where}: order of side effects (TRACE)")


def compare_runs(plain_fn: Callable[..., Any], compiled_fn: Callable[..., Any], calls: Sequence[Call],
                 where: str) -> None:
    """Each call through the plain and the compiled function (one compiled function for all calls,
    so cache hits, continuations and recompiles are exercised) observes the same."""
    for index, call in enumerate(calls):
        plain = run_once(plain_fn, call)
        compiled = run_once(compiled_fn, call)
        assert_same_outcome(plain, compiled, f"{where} call {index}")


def break_lines(fn: Callable[..., Any]) -> List[str]:
    """'file:line' of every line of ``fn`` marked ``# BREAK``."""
    lines, first = inspect.getsourcelines(fn)
    filename = inspect.getsourcefile(fn)
    return [f"{filename}:{first + i}" for i, text in enumerate(lines) if "# BREAK" in text]


def top_event(events: Sequence[Any], fn: Callable[..., Any]) -> Any:
    """The first event of ``fn``'s own frame (not a continuation, not a callee)."""
    for event in events:
        if event.frame_name in (fn.__qualname__, fn.__name__):
            return event
    raise AssertionError(f"no event for the frame {fn.__qualname__}: {[e.frame_name for e in events]}")


def continuation_events(events: Sequence[Any]) -> List[Any]:
    return [e for e in events if "__resume_at_" in e.frame_name]


def describe(ex: Any) -> str:
    return (f"graph_count={ex.graph_count} graph_break_count={ex.graph_break_count} "
            f"break_reasons={ex.break_reasons} frames="
            f"{[(e.frame_name, e.fallback_reason) for e in ex.events]}")


def explain_quietly(fn: Callable[..., Any], call: Call) -> Any:
    """explain() of one call, printing nothing.  explain() lets the program's own exception
    through, so for a call that raises the same counts are gathered from the events it recorded
    (``graphs`` is then None: the graph objects are only reachable through explain's answer)."""
    args, kwargs = copy.deepcopy((call.args, call.kwargs))
    reset_globals()
    before = len(compiler.events())
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            return compiler.explain(fn, *args, **kwargs)
        except Exception:
            events = compiler.events()[before:]
    return SimpleNamespace(events=events, graphs=None,
                           graph_count=sum(e.graph_count for e in events),
                           graph_break_count=sum(e.graph_break_count for e in events),
                           break_reasons=[r for e in events for r in e.break_reasons])


# ---------------------------------------------------------------------------------------------
# Argument factories: fresh values, both signs (branches both ways), new shapes and dtypes
# ---------------------------------------------------------------------------------------------

def arr(shape: Tuple[int, ...], sign: float = 1.0, seed: int = 0, dtype: Any = np.float64) -> np.ndarray:
    """Values of one sign (so reductions decide branches predictably), magnitude in [0.5, 2)."""
    rng = np.random.default_rng(seed)
    return (sign * rng.uniform(0.5, 2.0, shape)).astype(dtype)


VARIANTS_1D = [((3,), 1.0, 0, np.float64), ((3,), 1.0, 1, np.float64), ((3,), -1.0, 2, np.float64),
               ((5,), -1.0, 3, np.float64), ((5,), 1.0, 4, np.float32), ((3,), 1.0, 5, np.float64)]
VARIANTS_2D = [((2, 3), 1.0, 0, np.float64), ((2, 3), 1.0, 1, np.float64), ((2, 3), -1.0, 2, np.float64),
               ((4, 2), -1.0, 3, np.float64), ((4, 2), 1.0, 4, np.float32), ((2, 3), 1.0, 5, np.float64)]


def one_array(variants: Sequence[Any] = VARIANTS_1D) -> List[Call]:
    return [Call((arr(*v),)) for v in variants]


def two_arrays(variants: Sequence[Any] = VARIANTS_1D) -> List[Call]:
    return [Call((arr(*v), arr(v[0], 1.0, v[2] + 100, v[3]))) for v in variants]


def array_and_log(variants: Sequence[Any] = VARIANTS_1D) -> List[Call]:
    return [Call((arr(*v), [])) for v in variants]


# ---------------------------------------------------------------------------------------------
# Helpers the programs use
# ---------------------------------------------------------------------------------------------

@compiler.disable
def opaque(value: Any) -> Any:
    """A call the tracer must not trace (compiler.disable): the canonical break."""
    TRACE.append(("opaque", type(value).__name__))
    return value


class Recorder:
    """A user context manager that records enter/exit (with the exception type it saw)."""

    def __init__(self, name: str, suppress: bool = False) -> None:
        self.name = name
        self.suppress = suppress

    def __enter__(self) -> "Recorder":
        TRACE.append(("enter", self.name))
        return self

    def __exit__(self, kind: Any, value: Any, tb: Any) -> bool:
        TRACE.append(("exit", self.name, None if kind is None else kind.__name__))
        return self.suppress


class Accumulator:
    """A user object whose methods and attributes are used around breaks."""

    def __init__(self) -> None:
        self.items: List[Any] = []
        self.total = 0.0
        self.scale = 1.0

    def add(self, value: Any) -> "Accumulator":
        self.items.append(value)
        return self

    def scaled(self, x: np.ndarray, *, by: float = 2.0) -> np.ndarray:
        return x * (self.scale * by)


def ramp(n: int, start: int = 0) -> Any:
    """A generator the compiled callers iterate."""
    for i in range(start, n):
        yield i


def squares_of(x: np.ndarray) -> Any:
    for k in range(3):
        TRACE.append(("gen", k))
        yield x * k


# ---------------------------------------------------------------------------------------------
# The programs
# ---------------------------------------------------------------------------------------------

@dataclass
class Program:
    fn: Callable[..., Any]
    calls: Callable[[], List[Call]]
    construct: Tuple[str, ...]       # words, one of which Unsupported's message must contain
    kind: str                        # the break kind, for test ids
    breaks: bool = True              # False: must compile without a break (e.g. print replayed)
    numpy_both_sides: bool = True    # NumPy work before and after the first break: >= 2 graphs
    loop: bool = False               # a break inside a loop: a stated fallback is acceptable
    callees: Tuple[Callable[..., Any], ...] = ()  # inlined functions whose breaks may come first
    fullgraph_break: int = 0         # which ``# BREAK`` line fullgraph=True stops at

    @property
    def name(self) -> str:
        return self.fn.__name__


PROGRAMS: List[Program] = []


def program(calls: Callable[[], List[Call]], construct: Sequence[str], kind: str, **options: Any
            ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        PROGRAMS.append(Program(fn, calls, tuple(construct), kind, **options))
        return fn
    return register


# --- calls the tracer cannot trace ---------------------------------------------------------

@program(one_array, ["dumps", "json", "encoder", "float", "repr"], "unsupported_call")
def json_between(x):
    y = x * 2.0
    text = json.dumps({"n": len(x), "tag": "a"})  # BREAK
    return y + len(text)


@program(one_array, ["crc32", "zlib"], "unsupported_call")
def crc_between(x):
    y = np.sin(x)
    c = zlib.crc32(b"tracematrix")  # BREAK
    return y * (c % 7) + np.cos(x)


@program(one_array, ["getpid"], "unsupported_call")
def pid_between(x):
    y = x + 1.0
    pid = os.getpid()  # BREAK
    z = y * 2.0
    return z, pid > 0


@program(one_array, ["sha256", "hashlib", "hexdigest"], "unsupported_call")
def digest_between(x):
    y = x * 3.0
    h = hashlib.sha256(b"abc").hexdigest()  # BREAK
    return y - len(h)


@program(one_array, ["StringIO", "write", "getvalue"], "unsupported_call")
def stringio_between(x):
    y = x * 2.0
    buf = io.StringIO()  # BREAK
    buf.write("total:")
    z = y - 1.0
    return z, buf.getvalue()


@program(one_array, ["opaque", "disable"], "unsupported_call")
def disabled_between(x):
    y = x * 2.0
    v = opaque(y)  # BREAK
    return v + 1.0


@program(one_array, ["opaque", "disable"], "unsupported_call")
def break_mid_expression(x):
    # x, the partial sum and (3.11+) a NULL are on the stack at the break.
    return np.add(x * 2.0, opaque(x) * 3.0) - x  # BREAK


@program(one_array, ["opaque", "disable"], "unsupported_call")
def break_building_a_list(x):
    parts = [x * 2.0, opaque(x), x * 3.0]  # BREAK
    return np.stack(parts).sum(axis=0)


@program(one_array, ["opaque", "disable"], "unsupported_call")
def two_breaks(x):
    a = x * 2.0
    b = opaque(a)  # BREAK
    c = b + 1.0
    d = opaque(c)  # BREAK
    return d * a


@program(one_array, ["print"], "print")
def print_between(x):
    y = x * 2.0
    print("middle", y.shape, y.dtype)  # BREAK
    z = y + 1.0
    print("end", z)  # BREAK
    return z


@program(array_and_log, ["print"], "print", numpy_both_sides=False)
def print_and_appends_in_order(x, log):
    log.append("a")
    TRACE.append("before print")
    print("one", x.sum())  # BREAK
    TRACE.append("after print")
    log.append("b")
    print("two", sep="-", end="!\n")  # BREAK
    return x + 1.0


# --- data-dependent branches ---------------------------------------------------------------

@program(one_array, ["branch", "data-dependent", "truth"], "branch")
def branch_return(x):
    y = x * 2.0
    if y.sum() > 0:  # BREAK
        return y + 1.0
    return y - 1.0


@program(one_array, ["branch", "data-dependent", "truth"], "branch")
def branch_then_join(x):
    y = x * 2.0
    if x.mean() > 0:  # BREAK
        z = y + 1.0
    else:
        z = y - 1.0
    return z * z


@program(two_arrays, ["branch", "data-dependent", "truth"], "branch")
def branch_and(x, w):
    y = x + w
    if x.sum() > 0 and w.max() < 1.5:  # BREAK
        return y * 2.0
    return y * 3.0


@program(two_arrays, ["branch", "data-dependent", "truth"], "branch")
def branch_or(x, w):
    y = x - w
    if x.sum() > 0 or w.min() > 1.9:  # BREAK
        return y * 2.0
    return y * 3.0


@program(one_array, ["branch", "data-dependent", "truth"], "branch")
def branch_ternary(x):
    y = x * 2.0 if x.mean() > 0 else x / 2.0  # BREAK
    return y + 1.0


@program(one_array, ["branch", "data-dependent", "truth"], "branch", loop=True)
def branch_while_condition(x):
    y = np.abs(x)
    steps = 0
    while y.sum() < 40.0:  # BREAK
        y = y * 2.0
        steps += 1
    return y - 1.0, steps


@program(one_array, ["branch", "data-dependent", "truth"], "branch")
def branch_not(x):
    y = x * 2.0
    if not (y > 0).any():  # BREAK
        y = -y
    return y + 1.0


# --- data-dependent scalars ------------------------------------------------------------------

@program(one_array, ["item"], "scalar")
def scalar_item(x):
    y = x * 2.0
    v = y.sum().item()  # BREAK
    return y + v, type(v).__name__


@program(one_array, ["tolist"], "scalar")
def scalar_tolist(x):
    y = x + 1.0
    values = y.tolist()  # BREAK
    return y * len(values), sum(values)


@program(one_array, ["float"], "scalar")
def scalar_float(x):
    y = x * 2.0
    f = float(y.max())  # BREAK
    return y / f, f


@program(one_array, ["int"], "scalar")
def scalar_int_as_size(x):
    y = np.abs(x) * 2.0
    n = int(y.max())  # BREAK
    return y[:n] + 1.0, n


@program(one_array, ["bool", "any"], "scalar")
def scalar_bool(x):
    y = x * 2.0
    flag = bool((y > 0).any())  # BREAK
    return (y + 1.0 if flag else y - 1.0), flag


# --- breaks in loops ------------------------------------------------------------------------

@program(one_array, ["opaque", "disable"], "loop", loop=True)
def loop_for_with_break_call(x):
    y = x * 1.0
    for i in range(3):
        y = opaque(y) + i  # BREAK
    return y * 2.0


@program(one_array, ["branch", "data-dependent", "truth"], "loop", loop=True)
def loop_data_dependent_exit(x):
    y = np.abs(x)
    for i in range(6):
        y = y * 1.5
        if y.sum() > 12.0:  # BREAK
            break
    return y - 1.0, i


@program(array_and_log, ["branch", "data-dependent", "truth"], "loop", loop=True)
def loop_branch_both_ways(x, log):
    y = x * 1.0
    for i in range(2):
        if x.sum() > 0:  # BREAK
            log.append("yes")
            y = y + 1.0
        else:
            log.append("no")
            y = y - 1.0
    return y


@program(array_and_log, ["branch", "data-dependent", "truth"], "loop", loop=True)
def loop_ternary_both_ways(x, log):
    for i in range(2):
        log.append("p" if x.sum() > 0 else "n")  # BREAK
        if not x.sum() > 0:
            log.append("neg")
    return x * 2.0


@program(array_and_log, ["branch", "data-dependent", "truth"], "loop", loop=True)
def comprehension_filter_both_ways(x, log):
    y = x * 2.0
    kept = [k for k in range(3) if x.sum() > 0]  # BREAK
    log.append(len(kept))
    return y + 1.0


@program(one_array, ["crc32", "zlib"], "loop", loop=True)
def loop_while_counter(x):
    y = x + 0.0
    k = 0
    while k < 3:
        y = y + zlib.crc32(b"tracematrix", k) % 5  # BREAK
        k += 1
    return y * 2.0, k


@program(one_array, ["opaque", "disable"], "loop", loop=True)
def loop_over_rows(x):
    total = x * 0.0
    for v in x:
        total = total + opaque(v)  # BREAK
    return total + 1.0


# --- breaks inside loops resumed compiled (issue 14, item 3) ---------------------------------------
# Each step's continuation resumes inside the loop; FOR_ITER breaks with its two exits.

def training_data(variants: Sequence[Any] = VARIANTS_2D) -> List[Call]:
    return [Call((arr(*v), arr(v[0][:1], 1.0, v[2] + 50, v[3]), arr(v[0][1:], 1.0, v[2] + 70, v[3]), 4))
            for v in variants]


@program(training_data, ["float", "data-dependent"], "loop", loop=True)
def loop_training_float_per_step(x, y, w, steps):
    losses = []
    for i in range(steps):
        pred = x.T @ y
        err = pred - w
        loss = (err * err).mean()
        losses.append(float(loss))  # BREAK
        w = w - 0.1 * err
    return w, losses


class CountingIterable:
    """An iterable whose iterator records each step in TRACE (iteration counts compared)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self) -> Any:
        for k in range(self.n):
            TRACE.append(("next", k))
            yield k


@program(one_array, ["opaque", "disable", "iteration"], "loop", loop=True)
def loop_counts_its_steps(x):
    y = x * 1.0
    for k in CountingIterable(3):  # BREAK
        y = opaque(y) + k  # BREAK
    return y


@program(array_and_log, ["opaque", "disable"], "loop", loop=True)
def loop_continue_break_else(x, log):
    y = x * 1.0
    for k in range(6):
        y = opaque(y) * 1.5  # BREAK
        if k == 1:
            log.append(("skip", k))
            continue
        log.append(float(y.sum()))  # BREAK
        if k == 4:
            break
    else:
        log.append("no break")
    for k in range(2):
        y = opaque(y) - k  # BREAK
    else:
        log.append("else ran")
    return y


@program(array_and_log, ["opaque", "disable"], "loop", loop=True)
def loop_nested_with_breaks(x, log):
    total = x * 0.0
    for i in range(3):
        for j in range(i + 1):
            total = total + opaque(x) * j  # BREAK
            if i == 2 and j == 1:
                break
        log.append((i, float(total.sum())))  # BREAK
    return total


@program(array_and_log, ["opaque", "disable"], "loop", loop=True)
def loop_try_except_inside(x, log):
    y = x * 1.0
    for k in range(4):
        try:
            y = opaque(y) + 1.0  # BREAK
            if k == 2:
                raise ValueError("step 2")
            log.append(("ok", k))
        except ValueError as e:
            log.append(("caught", str(e)))
        finally:
            log.append(("finally", k))
    return y


@program(array_and_log, ["opaque", "disable"], "loop", loop=True)
def loop_inside_try_raises(x, log):
    y, k = x * 1.0, 0
    try:
        while True:
            y = opaque(y) * 2.0  # BREAK
            k += 1
            if k == 3:
                raise KeyError(k)
    except KeyError as e:
        log.append(("caught", e.args))
    finally:
        log.append("finally")
    return y, k


@program(array_and_log, ["opaque", "disable"], "loop", loop=True)
def loop_with_block_inside(x, log):
    y = x * 1.0
    for k in range(3):
        with Recorder(f"r{k}"):
            y = opaque(y) + k  # BREAK
            log.append(k)
    return y


@program(one_array, ["opaque", "disable"], "loop", loop=True)
def loop_raises_out_of_the_frame(x):
    y = x * 1.0
    for k in range(4):
        y = opaque(y) + 1.0  # BREAK
        if k == 2:
            raise RuntimeError(f"stopped at {k}")
    return y


@program(array_and_log, ["opaque", "disable"], "loop", loop=True)
def loop_over_a_list_it_grows(x, log):
    items = [x, x * 2.0]
    for v in items:
        w = opaque(v) + 1.0  # BREAK
        if len(items) < 4:
            items.append(w)
        log.append(len(items))
    return items


@program(one_array, ["opaque", "disable"], "loop", loop=True)
def loop_enumerate_zip(x):
    out = x * 0.0
    for i, (a, b) in enumerate(zip([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])):
        out = out + opaque(x) * (a * b + i)  # BREAK
    return out


@program(one_array, ["opaque", "disable"], "loop", loop=True)
def loop_while_with_else(x):
    y = x * 1.0
    k = 0
    while k < 4:
        y = opaque(y) + 0.5  # BREAK
        k += 1
    else:
        y = y * 3.0
    return y, k


@program(one_array, ["opaque", "disable"], "loop", loop=True)
def loop_returns_from_inside(x):
    y = x * 1.0
    for k in range(10):
        y = opaque(y) * 1.5  # BREAK
        if float(y.sum()) > 20.0 or float(y.sum()) < -20.0:  # BREAK
            return y, k
    return y, -1


@program(lambda: array_and_log(VARIANTS_2D), ["float", "data-dependent"], "loop", loop=True)
def comprehension_of_floats(x, log):
    y = x * 2.0
    sums = [float(row.sum()) for row in y]  # BREAK
    log.append(sums)
    return y + 1.0


@program(array_and_log, ["opaque", "disable"], "loop", loop=True)
def loop_for_inside_try_and_c_manager(x, log):
    y = x * 1.0
    try:
        for k in range(3):
            y = opaque(y) + k  # BREAK
        else:
            log.append("else")
        with io.StringIO() as buf:
            for j in range(2):
                y = opaque(y) * 2.0  # BREAK
                buf.write("s")
            log.append(buf.getvalue())
    finally:
        log.append("finally")
    return y


# --- methods of objects implemented in C (issue 14, item 4) ---------------------------------------

def array_and_generator(variants: Sequence[Any] = VARIANTS_1D) -> List[Call]:
    return [Call((arr(*v), np.random.default_rng(v[2]))) for v in variants]


@program(array_and_generator, ["bit_generator"], "unsupported_call")
def generator_methods_passed_in(x, rng):
    y = x * 2.0
    z = rng.normal(size=x.shape)  # a draw in the graph (compiler.ops.draws)
    u = rng.uniform(0.0, 1.0, 3)
    s = rng.bit_generator.state["state"]  # BREAK
    return y + z, u.sum() + y, s, rng.normal(size=2)


@program(array_and_generator, ["float"], "loop", loop=True)
def loop_generator_noise_per_step(x, rng):
    trace = []
    for i in range(4):
        x = x * 0.5 + rng.standard_normal(x.shape)
        trace.append(float(x.sum()))  # BREAK
    return x, trace


# --- try / except / finally ------------------------------------------------------------------

@program(array_and_log, ["opaque", "disable"], "try")
def try_except_after_break(x, log):
    y = x * 2.0
    try:
        z = opaque(y)  # BREAK
        log.append("before raise")
        raise ValueError(f"bad shape {z.shape}")
    except ValueError as exc:
        log.append(str(exc))
        z = y + 1.0
    return z * 3.0


@program(array_and_log, ["opaque", "disable"], "try")
def try_finally_runs_once(x, log):
    y = x * 2.0
    try:
        y = opaque(y) + 1.0  # BREAK
        log.append("body")
    finally:
        log.append("finally")
        TRACE.append("finally")
    return y * 2.0


@program(array_and_log, ["opaque", "disable"], "try",
         numpy_both_sides=False)
def try_finally_with_escaping_error(x, log):
    y = x * 2.0
    try:
        y = opaque(y)  # BREAK
        if len(log) == 0:
            raise KeyError("escapes")
    finally:
        log.append("finally")
    return y


@program(array_and_log, ["opaque", "disable"], "try")
def try_nested_reraise(x, log):
    y = x - 1.0
    try:
        try:
            y = opaque(y) * 2.0  # BREAK
            raise IndexError("inner")
        except IndexError:
            log.append("inner handler")
            raise RuntimeError("outer")
        finally:
            log.append("inner finally")
    except RuntimeError as exc:
        log.append(repr(exc))
    return y + 1.0


@program(one_array, ["branch", "data-dependent", "truth"], "try")
def try_branch_inside(x):
    y = x * 2.0
    try:
        if y.sum() > 0:  # BREAK
            raise ArithmeticError("positive")
        y = y - 1.0
    except ArithmeticError as exc:
        y = y + len(str(exc))
    return y


# --- with blocks ----------------------------------------------------------------------------

@program(one_array, ["opaque", "disable"], "with")
def with_break_inside(x):
    y = x * 2.0
    with Recorder("outer"):
        y = opaque(y) + 1.0  # BREAK
        TRACE.append("after break in with")
    return y * 3.0


@program(one_array, ["opaque", "disable"], "with")
def with_nested_break(x):
    y = x * 2.0
    with Recorder("outer") as outer:
        with Recorder("inner"):
            y = opaque(y) + len(outer.name)  # BREAK
        TRACE.append("between exits")
    return y - 1.0


@program(one_array, ["opaque", "disable"], "with")
def with_exception_after_break(x):
    y = x * 2.0
    with Recorder("suppressing", suppress=True):
        y = opaque(y) + 1.0  # BREAK
        raise ValueError("suppressed by __exit__")
    return y * 2.0


@program(one_array, ["opaque", "disable"], "with",
         numpy_both_sides=False)
def with_exception_escapes(x):
    y = x * 2.0
    with Recorder("passing"):
        y = opaque(y)  # BREAK
        raise TypeError(f"escapes with {y.ndim} dims")
    return y


# --- inlined user functions -----------------------------------------------------------------

def helper_breaks(y):
    z = y * 2.0
    w = opaque(z)  # BREAK
    return w + 1.0


def helper_middle(y):
    a = y - 0.5
    b = helper_breaks(a)  # BREAK
    return b * a


def helper_outer(y):
    c = np.tanh(y)
    d = helper_middle(c)  # BREAK
    return d + c


@program(one_array, ["opaque", "disable"], "inlined", callees=(helper_breaks,))
def inlined_one_deep(x):
    a = x - 1.0
    b = helper_breaks(a)  # BREAK
    return b * 3.0


@program(one_array, ["opaque", "disable"], "inlined", callees=(helper_breaks, helper_middle, helper_outer))
def inlined_three_deep(x):
    a = x * 0.5
    b = helper_outer(a)  # BREAK
    return b - a


def helper_branch(y):
    if y.sum() > 0:  # BREAK
        return y * 10.0
    return y / 10.0


@program(one_array, ["branch", "data-dependent", "truth"], "inlined", callees=(helper_branch,))
def inlined_branching_callee(x):
    a = x + 1.0
    b = helper_branch(a)  # BREAK
    return b * 2.0


# --- generators -----------------------------------------------------------------------------

@program(one_array, ["opaque", "disable", "generator"], "generator", breaks=False)
def generator_consumed(x):
    total = x * 0.0
    for k in ramp(4, start=1):
        total = total + x * k
    return total + 1.0


@program(one_array, ["opaque", "disable", "generator"], "generator", breaks=False)
def generator_with_side_effects(x):
    acc = []
    for part in squares_of(x):
        acc.append(part.sum())
    return x * len(acc), acc


@program(one_array, ["opaque", "disable"], "generator")
def generator_and_break(x):
    parts = list(ramp(3))
    y = opaque(x * len(parts))  # BREAK
    return y + sum(parts)


# --- keyword arguments and methods ----------------------------------------------------------

def scale_shift(a, *, scale=2.0, shift=0.0):
    return a * scale + shift


@program(one_array, ["opaque", "disable"], "kwargs")
def kwargs_around_break(x):
    y = scale_shift(x, scale=3.0, shift=1.0)
    v = opaque(y)  # BREAK
    return scale_shift(v, shift=2.0)


@program(one_array, ["opaque", "disable"], "kwargs")
def kwargs_break_in_argument(x):
    return np.clip(x * 2.0, a_min=opaque(-1.0), a_max=1.5)  # BREAK


@program(one_array, ["float", "max"], "kwargs")
def kwargs_scalar_in_argument(x):
    return scale_shift(x, scale=float(x.max()), shift=1.0) + x  # BREAK


def with_accumulator(variants: Sequence[Any] = VARIANTS_1D) -> List[Call]:
    return [Call((arr(*v), Accumulator())) for v in variants]


@program(with_accumulator, ["opaque", "disable"], "methods")
def methods_around_break(x, acc):
    acc.add("first")
    y = acc.scaled(x, by=3.0)
    acc.scale = 2.0
    v = opaque(y)  # BREAK
    acc.add(len(acc.items))
    acc.total = 5.0
    return acc.scaled(v) + 1.0


# --- side effects in order ------------------------------------------------------------------

def two_d_with_log() -> List[Call]:
    return [Call((arr(*v), [], {})) for v in VARIANTS_2D]


@program(two_d_with_log, ["opaque", "disable", "print"], "side_effects")
def side_effects_in_order(x, log, table):
    global COUNTER, LAST_TOTAL
    log.append("start")
    table["before"] = x.shape
    COUNTER += 1
    x += 1.0
    x[0, 0] = 42.0
    TRACE.append(("counter", COUNTER))
    print("before break", x.shape)  # BREAK
    y = opaque(x * 2.0)  # BREAK
    log.append("after")
    table["after"] = len(log)
    COUNTER += 10
    LAST_TOTAL = "set after break"
    REGISTRY["k"] = COUNTER
    x -= 0.5
    x[1, 0] = -7.0
    print("after break", COUNTER)  # BREAK
    return y + x


@program(two_d_with_log, ["branch", "data-dependent", "truth"], "side_effects")
def side_effects_around_branch(x, log, table):
    global COUNTER
    x *= 2.0
    log.append("pre")
    if x.sum() > 0:  # BREAK
        COUNTER += 1
        x[0, 0] = 42.0
        table["side"] = "positive"
    else:
        COUNTER -= 1
        table["side"] = "negative"
    log.append(COUNTER)
    return x * 1.0


@program(two_d_with_log, ["item"], "side_effects")
def side_effects_with_scalar(x, log, table):
    global LAST_TOTAL
    x += 0.25
    total = x.sum().item()  # BREAK
    LAST_TOTAL = total
    table["total"] = total
    log.append(round(total, 6))
    x[0, 0] = total
    return x.mean()


# --- exceptions after a break ---------------------------------------------------------------

@program(one_array, ["opaque", "disable"], "exception",
         numpy_both_sides=False)
def raises_after_break(x):
    y = x * 2.0
    y = opaque(y)  # BREAK
    if y.ndim == 1:
        raise ValueError(f"one-dimensional input of length {len(y)}")
    return y


@program(one_array, ["branch", "data-dependent", "truth"], "exception")
def raises_on_one_side(x):
    y = x * 2.0
    if y.sum() < 0:  # BREAK
        raise ArithmeticError(f"negative total for shape {y.shape}")
    return y + 1.0


# --- closures -------------------------------------------------------------------------------

# --- harder cases: what the transformed code and the continuation must get right ----------------

@compiler.disable
def opaque_raises(value: Any) -> Any:
    """A native call that raises: the breaking instruction itself fails."""
    TRACE.append("opaque_raises")
    raise LookupError(f"native failure on {type(value).__name__}")


@program(array_and_log, ["opaque_raises", "disable"], "exception", numpy_both_sides=False)
def break_instruction_raises_uncaught(x, log):
    log.append("before")
    y = x * 2.0
    TRACE.append("appended before the break")
    z = opaque_raises(y)  # BREAK
    log.append("never")
    return z


@program(array_and_log, ["opaque_raises", "disable"], "try", numpy_both_sides=False)
def break_instruction_raises_caught(x, log):
    y = x * 2.0
    log.append("start")
    try:
        y = opaque_raises(y)  # BREAK
    except LookupError as exc:
        log.append(str(exc))
        y = y + 1.0
    finally:
        log.append("finally")
    return y * 3.0


@program(one_array, ["opaque", "disable"], "closure")
def cell_written_after_break(x):
    k = 2.0
    scale = lambda v: v * k  # noqa: E731 (a cell of this frame, read after the break)
    y = opaque(x * 2.0)  # BREAK
    k = 3.0
    return scale(y) + k


@program(one_array, ["opaque", "disable"], "closure")
def closure_made_after_break(x):
    y = opaque(x * 2.0)  # BREAK
    offset = float(y.shape[0])

    def shift(v):
        return v + offset

    return shift(y), shift(x)


@program(one_array, ["opaque", "disable"], "unsupported_call")
def live_values_of_many_types(x):
    label, shape, meta, nothing = "t", x.shape, {"k": [1, 2]}, None
    pair = (x * 2.0, label)
    helper = scale_shift
    y = opaque(x)  # BREAK
    meta["k"].append(len(shape))
    return helper(y, shift=1.0) + pair[0], label, shape, meta, nothing, pair[1]


@program(one_array, ["opaque", "disable"], "unsupported_call")
def nested_call_expression(x):
    return np.add(np.multiply(x * 2.0, opaque(2.0)), np.sin(x))  # BREAK


@program(one_array, ["opaque", "disable"], "unsupported_call")
def break_in_fstring(x):
    y = x * 2.0
    text = f"sum={opaque(len(x))}:{y.shape}"  # BREAK
    return y + len(text), text


def dict_of_arrays() -> List[Call]:
    return [Call((arr(*v), {"k": arr(v[0], 1.0, v[2] + 50, v[3])})) for v in VARIANTS_1D]


@program(dict_of_arrays, ["opaque", "disable"], "side_effects")
def augmented_subscript_across_break(x, d):
    d["k"] += opaque(x * 2.0)  # BREAK
    d["k"] *= 2.0
    return d["k"] - x


@program(one_array, ["opaque", "disable"], "branch")
def chained_comparison_across_break(x):
    y = x * 2.0
    if -100.0 < opaque(float(len(x))) < 4.0:  # BREAK
        return y + 1.0
    return y - 1.0


@program(one_array, ["opaque", "disable"], "unsupported_call")
def unpack_native_result(x):
    a, (b, c) = opaque((x * 2.0, (x + 1.0, len(x))))  # BREAK
    return a * b + c


@program(one_array, ["opaque", "disable"], "unsupported_call")
def value_of_and_across_break(x):
    y = x * 2.0
    z = len(x) > 1 and opaque(y)  # BREAK
    w = len(x) > 100 or opaque(y + 1.0)  # BREAK
    return z + w


@program(one_array, ["opaque", "disable"], "with")
def return_inside_with_after_break(x):
    with Recorder("returns"):
        y = opaque(x * 2.0)  # BREAK
        return y + 1.0


@program(one_array, ["opaque", "disable"], "try")
def break_inside_except_handler(x):
    y = x * 2.0
    try:
        raise KeyError("k")
    except KeyError:
        y = opaque(y) + 1.0  # BREAK
    return y * 2.0


@program(array_and_log, ["opaque", "disable"], "try")
def break_inside_finally(x, log):
    y = x * 2.0
    try:
        log.append("body")
    finally:
        y = opaque(y) + 1.0  # BREAK
        log.append("finally")
    return y * 2.0


@program(one_array, ["opaque", "disable"], "exception", numpy_both_sides=False)
def unbound_local_after_break(x):
    if len(x) > 100:
        z = x
    y = opaque(x * 2.0)  # BREAK
    return y + z


@program(one_array, ["opaque", "disable"], "exception")
def assert_after_break(x):
    y = opaque(x * 2.0)  # BREAK
    assert y.ndim == 1, f"expected 1-d, got {y.ndim}"
    return y + 1.0


def star_calls() -> List[Call]:
    return [Call((arr(*v), 2.0), {"shift": 0.5}) for v in VARIANTS_1D]


@program(star_calls, ["opaque", "disable"], "kwargs")
def star_args_across_break(x, *args, **kwargs):
    y = scale_shift(x, scale=args[0], **kwargs)
    extra = opaque(args)  # BREAK
    return scale_shift(y, *(), scale=extra[0], **kwargs), len(kwargs)


def keyword_only_calls() -> List[Call]:
    return [Call((arr(*v),), {"scale": 1.5} if i % 2 else {}) for i, v in enumerate(VARIANTS_1D)]


@program(keyword_only_calls, ["opaque", "disable"], "kwargs")
def keyword_only_with_default(x, *, scale=2.0, bias=None):
    y = x * scale
    z = opaque(y)  # BREAK
    return z + (0.0 if bias is None else bias), scale


@program(one_array, ["opaque", "disable"], "inlined")
def lambda_breaks_inside(x):
    y = x * 2.0
    f = lambda v: opaque(v * 2.0) + 1.0  # noqa: E731 # BREAK
    return f(y) * 3.0  # BREAK


def recursive_break(x, depth):
    if depth == 0:
        return opaque(x)  # BREAK
    return recursive_break(x * 2.0, depth - 1) + 1.0


def depth_calls() -> List[Call]:
    return [Call((arr(*v), (i + 2) % 3)) for i, v in enumerate(VARIANTS_1D)]


PROGRAMS.append(Program(recursive_break, depth_calls, ("opaque", "disable"), "inlined"))


def acc_step(acc, x):
    acc.add("step")
    acc.scale = 4.0
    v = opaque(x * acc.scale)  # BREAK
    acc.add(v.shape)
    return v - 1.0


@program(with_accumulator, ["opaque", "disable"], "methods", callees=(acc_step,))
def method_of_user_object_breaks(x, acc):
    acc.total = 1.0
    y = acc_step(acc, x)  # BREAK
    acc.total += 1.0
    return y, acc.total



@program(one_array, ["opaque", "disable"], "loop", loop=True)
def while_true_return_in_loop(x):
    y = x * 1.0
    n = 0
    while True:
        y = opaque(y) * 2.0  # BREAK
        n += 1
        if n == 3:
            return y, n


@program(one_array, ["opaque", "disable"], "loop", loop=True)
def list_comprehension_with_break(x):
    y = x * 2.0
    parts = [opaque(y * k) for k in range(3)]  # BREAK
    return sum(parts) + y


# --- identity and aliasing of values that live across a break -------------------------------------

@program(array_and_log, ["opaque", "disable"], "aliasing")
def aliased_lists_stay_one_object(x, log):
    a = [x * 2.0]
    b = a
    log.append(a)
    y = opaque(x)  # BREAK
    b.append(y + 1.0)
    return a is b, len(a), log[0] is a, a


@program(one_array, ["opaque", "disable"], "aliasing")
def view_stays_a_view(x):
    v = x[1:]
    w = x.reshape(-1) if x.ndim == 1 else x
    y = opaque(x * 2.0)  # BREAK
    v[0] = 5.0
    w += 1.0
    return x, y, np.shares_memory(v, x)


@program(array_and_log, ["opaque", "disable"], "aliasing")
def array_in_input_list_mutated_after_break(x, log):
    y = x * 2.0
    log.append(y)
    opaque(None)  # BREAK
    y += 1.0
    y[0] = -1.0
    return log[0] is y, y


@program(one_array, ["opaque", "disable"], "aliasing")
def object_made_before_break(x):
    acc = Accumulator()
    acc.add(x * 2.0)
    acc.scale = 3.0
    opaque(acc)  # BREAK
    acc.add(x + acc.scale)
    return acc.items, acc.scale


@program(one_array, ["opaque", "disable"], "aliasing")
def iterator_live_across_break(x):
    it = iter([1.0, 2.0, 3.0])
    first = next(it)
    y = opaque(x * first)  # BREAK
    return y + next(it), list(it)


@program(one_array, ["opaque", "disable"], "generator")
def generator_live_across_break(x):
    g = ramp(4)
    first = next(g)
    y = opaque(x + first)  # BREAK
    return y * next(g), list(g)


# np.errstate is traced: fullgraph stops at the call inside the block (its second marker);
# with breaks, the break moves to the with statement, whose stub enters the block natively
# (3.14+: the stub runs the __enter__ call, the manager's two bound methods on its stack).
@program(one_array, ["errstate", "opaque", "disable"], "with", fullgraph_break=1)
def errstate_around_break(x):
    y = x * 0.0
    with np.errstate(divide="ignore", invalid="ignore"):  # BREAK
        z = opaque(x) / y  # BREAK
    return np.nan_to_num(z, posinf=1.0, neginf=-1.0, nan=0.0) + y


SCALE = 2.0


def rebinding_global_calls() -> List[Call]:
    return one_array()


@program(rebinding_global_calls, ["opaque", "disable"], "globals")
def reads_global_after_break(x):
    y = x * SCALE
    z = opaque(y)  # BREAK
    return z + SCALE


@program(one_array, ["branch", "data-dependent", "truth", "opaque"], "branch")
def branch_on_native_bool(x):
    y = x * 2.0
    if opaque(len(x) > 3):  # BREAK
        return y + 1.0
    return y - 1.0


@program(array_and_log, ["opaque", "disable"], "aliasing", numpy_both_sides=False)
def returns_input_list_itself(x, log):
    log.append(x.shape)
    opaque(None)  # BREAK
    log.append(x.ndim)
    return log


@program(one_array, ["opaque", "disable"], "unsupported_call")
def deleted_local_across_break(x):
    tmp = x * 2.0
    y = tmp + 1.0
    del tmp
    z = opaque(y)  # BREAK
    return z * 3.0, "tmp" in locals()


@program(array_and_log, ["opaque", "disable"], "with")
def break_after_closed_with(x, log):
    with Recorder("closed"):
        y = x + x
    z = opaque(x * 2.0) - y  # BREAK
    return z * 2.0


@program(array_and_log, ["opaque", "disable"], "try")
def break_after_try_except(x, log):
    try:
        y = x + x
    except ValueError:
        log.append("caught")
        y = x
    z = opaque(x * 2.0) - y  # BREAK
    return z * 2.0


# --- the native instruction sees every side effect traced before it ---------------------------------

@compiler.disable
def observe(*values: Any) -> Any:
    """A native call that records what it sees (lengths, global state, array contents)."""
    seen = []
    for v in values:
        if isinstance(v, np.ndarray):
            seen.append(("array", v.tolist()))
        elif isinstance(v, (list, dict)):
            seen.append(("len", len(v)))
        elif isinstance(v, Accumulator):
            seen.append(("acc", len(v.items), v.scale))
        else:
            seen.append(("value", v))
    TRACE.append(("observed", seen, COUNTER, dict(REGISTRY)))
    return len(seen)


def two_d_with_acc() -> List[Call]:
    return [Call((arr(*v), [], Accumulator())) for v in VARIANTS_2D]


@program(two_d_with_acc, ["observe", "disable"], "side_effects")
def native_call_sees_prior_effects(x, log, acc):
    global COUNTER
    log.append(x.shape)
    COUNTER += 3
    REGISTRY["before"] = "yes"
    acc.scale = 7.0
    acc.add("one")
    x[0, 0] = 42.0
    x += 1.0
    n = observe(x, log, acc)  # BREAK
    x[1, 1] = -1.0
    observe(x)  # BREAK
    return x * n


@program(array_and_log, ["observe", "disable"], "side_effects")
def array_in_new_list_mutated_after_break(x, log):
    y = x * 2.0
    holder = [y]
    observe(holder)  # BREAK
    y += 1.0
    log.append(holder[0] is y)
    return holder[0], y


@program(one_array, ["opaque_raises", "disable"], "with", numpy_both_sides=False)
def native_raise_inside_with(x):
    y = x * 2.0
    with Recorder("sees the error"):
        y = opaque_raises(y)  # BREAK
    return y


@program(one_array, ["opaque_raises", "disable"], "with", numpy_both_sides=False)
def native_raise_suppressed_by_with(x):
    y = x * 2.0
    with Recorder("suppresses", suppress=True):
        y = opaque_raises(y)  # BREAK
    return y + 1.0


@program(array_and_log, ["opaque", "disable"], "methods")
def append_of_native_result(x, log):
    y = x * 2.0
    log.append(opaque(y))  # BREAK
    return y + 1.0


def index_calls() -> List[Call]:
    return [Call((arr((4,), 1.0, i), np.array([0, 2 + i]), [])) for i in range(3)]


@program(index_calls, ["opaque", "disable"], "exception")
def runtime_error_in_continuation_graph(x, idx, log):
    log.append("before break")
    y = opaque(x * 2.0)  # BREAK
    log.append("after break")
    return y[idx] + 1.0


@compiler.disable
def opaque_pack(*values: Any, **options: Any) -> Any:
    """A native call taking star-arguments."""
    return values, sorted(options)


@program(one_array, ["opaque", "disable"], "kwargs")
def star_call_to_native(x):
    parts = [x * 2.0, x + 1.0]
    packed, names = opaque_pack(*parts, k=1, **{"z": 2})  # BREAK
    a, *rest = opaque([x * 3.0, 1, 2])  # BREAK
    return packed[0] + a, rest, names


@program(array_and_log, ["opaque", "disable"], "try")
def return_in_try_finally_after_break(x, log):
    try:
        log.append("try")
        return opaque(x * 2.0) + 1.0  # BREAK
    finally:
        log.append("finally")
        x[0] = 99.0


def make_counter_closure():
    count = 0
    seen = []

    def step(x):
        nonlocal count
        count += 1
        y = x * 2.0
        z = opaque(y)  # BREAK
        count += 10
        seen.append(count)
        return z + count, count, list(seen)

    return step


# ---------------------------------------------------------------------------------------------
# Known gaps: a stated fallback the implementation gives today (see .helpers/HB-findings.md).
# A test meeting exactly this stated reason xfails; any other failure fails.  A gap that no
# longer reproduces fails test_known_gap_still_reproduces, so the entry gets removed.
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Gap:
    finding: str                                   # the finding's id and what is missing
    reason: str                                    # regex for the failing assertion's message
    versions: Optional[Tuple[Tuple[int, int], ...]] = None   # None: every interpreter

    def applies(self) -> bool:
        import opcode_tables
        return self.versions is None or opcode_tables.current_table().version in self.versions


KNOWN_GAPS: Dict[str, Gap] = {
    "with_exception_after_break": Gap("F4: an exception suppressed by __exit__ after a break: the continuation "
                                      "runs natively",
                                      r"with block left by an exception|raised inside a with block whose __exit__"),
    "break_inside_except_handler": Gap("F7: a break inside an except handler: whole frame native",
                                       r"inside an except or finally handler"),
    "view_stays_a_view": Gap("F11: an in-place write after a break to a value that shares memory with another "
                             "local or stack value: the continuation runs natively",
                             r"in-place write to L\['\w+'\], which shares memory with"),
    "iterator_live_across_break": Gap("F12: an iterator live across a break: the continuation runs natively",
                                      r"value of type (tuple|list)_iterator"),
    "errstate_around_break": Gap("F19: 3.8, a break inside `with np.errstate(...)`: the continuation that runs "
                                 "WITH_CLEANUP_START natively cannot be built", r"WITH_CLEANUP_START natively",
                                 ((3, 8),)),
    "generator_live_across_break": Gap("F14: a generator live across a break: whole frame native",
                                       r"a live generator"),
    "break_inside_finally": Gap("F9: 3.8, a break in a finally block reached normally: the continuation cannot "
                                "be built (END_FINALLY stack underflow)", r"stack underflow .*END_FINALLY",
                                ((3, 8),)),
}


@contextlib.contextmanager
def tolerating_known_gap(prog: "Program") -> Any:
    """xfail when an assertion fails with exactly the declared gap's stated reason."""
    import pytest
    gap = KNOWN_GAPS.get(prog.name)
    try:
        yield
    except AssertionError as exc:
        if gap is not None and gap.applies() and re.search(gap.reason, str(exc)):
            pytest.xfail(f"known gap {gap.finding}")
        raise


def program_by_name(name: str) -> Program:
    for prog in PROGRAMS:
        if prog.name == name:
            return prog
    raise KeyError(name)
