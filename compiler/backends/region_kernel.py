"""Per call, how a large fused region runs: a numba loop, NumPy in blocks, or NumPy over
whole arrays (the numpy backend's own code, when the kernel returns None).

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

The plan is made once per error state object (compiler.error_state), and the
kernel is a closure over its parts: this is the per-call path of every large
region, and each attribute lookup or extra call is a visible share of a
1e5-element numba loop (20 us).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

from compiler.backends.numba_kernels import NumbaKernel
from compiler.error_state import StateMemo, error_modes

__all__ = ["make_region_kernel", "error_modes"]

_BLOCKS_REPORT = ("ignore", "raise")


def _plan(modes: Dict[str, str]) -> Tuple[bool, bool, bool]:
    """(nothing is reported, a numba loop that saw only finite values may stand, blocks may
    run) under ``modes``."""
    quiet = all(mode == "ignore" for mode in modes.values())
    return quiet, quiet or modes["under"] == "ignore", all(m in _BLOCKS_REPORT for m in modes.values())


_QUIET = (True, True, True)
plan_now = StateMemo(_plan)


def make_region_kernel(blocked: Optional[Callable[..., Optional[tuple]]], loop: Optional[NumbaKernel],
                       may_fail: bool) -> Callable[..., Optional[tuple]]:
    """``kernel(*operands)``: the region's results (a tuple), or None when NumPy must run it
    over whole arrays.  ``blocked`` and the loop may themselves answer None (a region whose
    dynamic size is too small for them)."""
    run: Any = None  # the loop's run function once numba compiled it; False: no loop

    def kernel(*operands: Any) -> Optional[tuple]:
        nonlocal run
        quiet, loop_ok, blocks_ok = plan_now() if may_fail else _QUIET
        if loop_ok and run is not False:
            if run is None:
                run = (loop.load() if loop is not None else None) or False
            if run is not False:
                try:
                    done = run(*operands)
                except Exception as error:  # numba cannot type it: NumPy runs it from now on
                    loop.failed(error)
                    run = done = False
                if done and (quiet or done[1]):
                    return done[0]
                # too small, or something not finite: NumPy decides what to report
        if blocked is None or not blocks_ok:
            return None
        if quiet:
            return blocked(*operands)
        try:
            return blocked(*operands)
        except FloatingPointError:
            # Blocks meet errors in block order, NumPy in op order: the whole-array code
            # raises the error plain NumPy raises.
            return None

    return kernel
