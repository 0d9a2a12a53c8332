"""NumPy's floating-point error state, read and switched at the cost of a dict lookup.

NumPy 2 keeps the error state (modes, buffer size, error callback) as one
immutable object in a context variable; ``np.errstate`` and ``np.seterr``
replace the object, never change it.  So whatever is derived from the state
(its modes, a plan made from them, the strict state a graph runs under) can be
remembered per state object and found again by identity: ``np.geterr()``
costs 1-2 us and entering an ``np.errstate`` 1-2 us more, a tenth of a
1e5-element kernel, while a context-variable read is 0.05 us.  NumPy 1.x
keeps its state elsewhere: there each question asks NumPy again.

Every cache here is one tuple replaced whole (threads never see a state paired
with another state's answer), and it holds the state object itself, so that
its id cannot be reused by another state while it is remembered.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

try:  # NumPy >= 2: the error state is one immutable object in a context variable
    from numpy._core.umath import _extobj_contextvar as STATE
except ImportError:  # NumPy 1.x
    STATE = None

_LAST_MODES: Tuple[Any, Dict[str, str]] = (None, {})


def error_modes() -> Dict[str, str]:
    """``np.geterr()``, remembered while the error state object stays the same."""
    global _LAST_MODES
    if STATE is None:
        return np.geterr()
    state = STATE.get()
    last = _LAST_MODES
    if last[0] is state:
        return last[1]
    modes = np.geterr()
    _LAST_MODES = (state, modes)
    return modes


class StateMemo:
    """``memo()``: ``derive(np.geterr())``, computed again only when the error state object
    changes (NumPy 1.x: every call).  ``derive`` must depend on the modes alone."""

    __slots__ = ("derive", "last")

    def __init__(self, derive: Callable[[Dict[str, str]], Any]) -> None:
        self.derive = derive
        self.last: Tuple[Any, Any] = (None, None)

    def __call__(self) -> Any:
        if STATE is None:
            return self.derive(np.geterr())
        state = STATE.get()
        last = self.last
        if last[0] is state:
            return last[1]
        answer = self.derive(error_modes())
        self.last = (state, answer)
        return answer


class SwitchState:
    """A context manager that sets a state object made earlier (by ``state_under``) and
    restores the one before on exit, as ``np.errstate`` does, without building the state
    again.  One per ``with`` (it holds the context variable's token)."""

    __slots__ = ("state", "token")

    def __init__(self, state: Any) -> None:
        self.state = state

    def __enter__(self) -> None:
        self.token = STATE.set(self.state)

    def __exit__(self, *exc_info: Any) -> None:
        STATE.reset(self.token)


def state_under(modes: Dict[str, str]) -> Optional[Any]:
    """The state object ``np.errstate(**modes)`` sets over the current state (its buffer
    size and error callback kept), or None on NumPy 1.x."""
    if STATE is None:
        return None
    with np.errstate(**modes):
        return STATE.get()
