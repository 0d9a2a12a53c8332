"""Per call, how a large fused region runs: a numba loop, NumPy in blocks, or NumPy over
whole arrays (the numpy backend's own code, when this returns None).

The choice follows NumPy's floating-point error state, so that errors are
reported exactly as the plain function reports them (compiler.entry_codegen
runs graphs that may fail under a state that ignores or raises each error):

* no op of the region can signal an error, or the state ignores every one:
  the numba loop where there is one, else blocks;
* the state raises some errors: the numba loop still runs when it saw only
  finite values (no error can have occurred; it reports underflow never, so
  only while underflow is ignored); blocks run, and when one raises, the
  whole-array code runs instead and raises the error of the first op that
  meets one, as plain NumPy does;
* the state warns, calls or logs (a graph called directly, outside a compiled
  entry): whole arrays, so each error is reported once per op, as by NumPy.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from compiler.backends.numba_kernels import NumbaKernel

_BLOCKS_REPORT = ("ignore", "raise")

try:  # NumPy >= 2: the error state is one immutable object in a context variable
    from numpy._core.umath import _extobj_contextvar as _ERROR_STATE
except ImportError:  # NumPy 1.x
    _ERROR_STATE = None
# (state object, np.geterr() under it): one tuple, replaced whole, so threads never see a
# state paired with another state's modes; holding the object keeps its id from reuse.
_LAST_MODES: Tuple[Any, Dict[str, str]] = (None, {})


def error_modes() -> Dict[str, str]:
    """``np.geterr()``, remembered while the error state object stays the same: np.geterr
    costs 1-2 us, a tenth of a 1e5-element numba loop."""
    global _LAST_MODES
    if _ERROR_STATE is None:
        return np.geterr()
    state = _ERROR_STATE.get()
    last = _LAST_MODES
    if last[0] is state:
        return last[1]
    modes = np.geterr()
    _LAST_MODES = (state, modes)
    return modes


class RegionKernel:
    """``kernel(*operands)``: the region's results (a tuple), or None when NumPy must run
    it over whole arrays."""

    def __init__(self, blocked: Optional[Callable[..., tuple]], loop: Optional[NumbaKernel],
                 may_fail: bool) -> None:
        self.blocked = blocked
        self.loop = loop
        self.may_fail = may_fail

    def __call__(self, *operands: Any) -> Optional[tuple]:
        if not self.may_fail:
            return self._run(operands)
        modes = error_modes()
        if all(mode == "ignore" for mode in modes.values()):
            return self._run(operands)
        if self.loop is not None and modes["under"] == "ignore":
            done = self.loop(*operands)
            if done is not None and done[1]:
                return done[0]
            # something not finite: NumPy decides what to report
        if self.blocked is not None and all(m in _BLOCKS_REPORT for m in modes.values()):
            try:
                return self.blocked(*operands)
            except FloatingPointError:
                # Blocks meet errors in block order, NumPy in op order: the whole-array code
                # raises the error plain NumPy raises.
                return None
        return None

    def _run(self, operands: tuple) -> Optional[tuple]:
        if self.loop is not None:
            done = self.loop(*operands)
            if done is not None:
                return done[0]
        return self.blocked(*operands) if self.blocked is not None else None

