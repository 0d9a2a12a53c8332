"""Running code at trace time without effects the program could observe.

The tracer runs real code while it traces: NumPy ops on stand-in arrays to
learn result dtypes (compiler.ops.standins), and pure functions on constants
to fold them (``tx.run_constant``: ``np.divide(1, 0.)``, ``np.float64(1) / 0``,
``format(...)``).  Either may emit a warning or set a floating-point error
flag.  Done at trace time, that effect happens once per trace instead of once
per call, at the wrong moment (issue 18: a warning recorded three times by one
compiled call, and never on the calls that hit the cache).  So trace-time code
runs under ``quietly``:

* NumPy's floating-point error state is set for the duration (``np.errstate``
  is per thread / per context, so this is invisible to other threads and is
  restored exactly): ``"ignore"`` for stand-ins (their zeros say nothing about
  the real data; what the real data does is the graph's business at run time,
  see compiler.entry_codegen), ``"raise"`` for constant folding (a fold that
  would signal an error is not folded: the tracer breaks the graph there and
  the call runs natively, under the caller's real error state);
* every Python warning is turned into an exception (``WarningTrapped``), so the
  caller refuses to capture what would warn instead of emitting it.

The warning trap inserts an ``"error"`` filter at the front of the warnings
module's filter list *in place* and removes it afterwards, without calling
``warnings.catch_warnings``: catch_warnings bumps the filters' version, which
clears every module's ``__warningregistry__``, so a warning the program had
already shown once under the ``"default"`` action would be shown again after
a trace.  Two limits, stated because they are global state: while the trap is
in place (the duration of one stand-in call) a warning issued by *another
thread* raises in that thread; and a warning whose location is already in its
module's registry is dropped before filters are consulted, so the trap does
not see it (it would be dropped at run time too, unless the filters change in
between).  Where the interpreter keeps warning filters per context
(``sys.flags.context_aware_warnings``), the trap uses ``catch_warnings``,
which is then local to this thread's context.
"""
from __future__ import annotations

import contextlib
import sys
import warnings
from typing import Any, Callable, Dict, Iterator

import numpy as np

# The filter the trap puts first: every warning category becomes an exception.
_TRAP = ("error", None, Warning, None, 0)


class WarningTrapped(Exception):
    """Trace-time code issued a warning (the warning is ``.warning``); nothing was emitted."""

    def __init__(self, warning: Warning) -> None:
        self.warning = warning
        super().__init__(f"{type(warning).__name__}: {warning}")


def _context_aware() -> bool:
    return bool(getattr(sys.flags, "context_aware_warnings", False))


@contextlib.contextmanager
def _trap_warnings() -> Iterator[None]:
    if _context_aware():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            yield
        return
    filters = warnings.filters
    filters.insert(0, _TRAP)
    try:
        yield
    finally:
        # By identity: the program may hold an equal filter of its own.
        for index, item in enumerate(filters):
            if item is _TRAP:
                del filters[index]
                break


@contextlib.contextmanager
def quietly(fp: str) -> Iterator[None]:
    """Floating-point errors handled as ``fp`` ("ignore" or "raise") and every warning
    raised as ``WarningTrapped``, for code that runs at trace time."""
    with np.errstate(all=fp), _trap_warnings():
        try:
            yield
        except Warning as warning:  # the trap's "error" filter raised it
            raise WarningTrapped(warning) from None


def call_quietly(fn: Callable, args: Any, kwargs: Dict[str, Any], fp: str = "ignore") -> Any:
    """``fn(*args, **kwargs)`` under ``quietly(fp)``."""
    with quietly(fp):
        return fn(*args, **kwargs)


# Int <-> str conversions of more digits than this may raise under the interpreter's limit
# (sys.set_int_max_str_digits, CVE-2020-10735; no limit can be set lower than this).  A fold
# that may convert such a number gives an answer that depends on the limit at run time,
# which a guard on the values does not see: it is not folded.
_DIGIT_CHECK_THRESHOLD = getattr(sys.int_info, "str_digits_check_threshold", 640)
# An int of at most this many bits has at most _DIGIT_CHECK_THRESHOLD decimal digits.
_SAFE_INT_BITS = int(_DIGIT_CHECK_THRESHOLD * 3.3219280948873626) - 1


def depends_on_int_digit_limit(fn: Any, args: Any, kwargs: Any) -> bool:
    """Whether calling ``fn`` on these constants could convert an int to or from a string of
    more decimal digits than any limit lets through (``str(n)``, ``f"{n}"``, ``int(s)``): the
    call's outcome then depends on ``sys.get_int_max_str_digits()`` when it runs."""
    owner = getattr(fn, "__self__", None)
    pending = [owner, *args, *dict(kwargs).values()]
    seen = 0
    while pending and seen < 10_000:
        value = pending.pop()
        seen += 1
        if isinstance(value, int) and not isinstance(value, bool):
            if value.bit_length() > _SAFE_INT_BITS:
                return True
        elif isinstance(value, (str, bytes, bytearray)):
            # (only parsing reads a long string as digits: int(s), int.__new__)
            if len(value) > _DIGIT_CHECK_THRESHOLD and (
                    isinstance(fn, type) and issubclass(fn, int) or isinstance(owner, type) and issubclass(owner, int)):
                return True
        elif isinstance(value, (tuple, list, frozenset, set)):
            pending.extend(value)
        elif isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
    return False
