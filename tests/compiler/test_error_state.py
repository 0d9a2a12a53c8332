"""compiler.error_state and the strict state graphs run under (entry_codegen.strict_errstate):
what is remembered per error state object must be what NumPy says under every state, the
caller's callback and buffer size kept, the caller's state back on exit."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from compiler import error_state
from compiler.entry_codegen import strict_errstate, strict_modes

CALLER_STATES = [{}, {"all": "raise"}, {"all": "ignore"}, {"over": "ignore", "under": "warn"},
                 {"divide": "call", "invalid": "print"}, {"all": "log"}]


def _callback(kind, flag):  # pragma: no cover - only compared by identity
    pass


class _Log:
    def write(self, text):  # pragma: no cover - only compared by identity
        pass


@pytest.mark.parametrize("overrides", [(), ({"all": "ignore"},), ({"divide": "warn"}, {"over": "ignore"})])
@pytest.mark.parametrize("caller", CALLER_STATES)
def test_strict_state_is_what_numpy_errstate_would_set(caller, overrides):
    log = _Log()
    callback = log if caller.get("all") == "log" else _callback
    with np.errstate(call=callback, **caller):
        outside = (np.geterr(), np.geterrcall(), np.getbufsize())
        for _ in range(3):  # the second and third find the remembered state
            with strict_errstate(overrides):
                assert np.geterr() == strict_modes(outside[0], overrides)
                assert np.geterrcall() is callback and np.getbufsize() == outside[2]
                assert error_state.error_modes() == np.geterr()
            assert (np.geterr(), np.geterrcall(), np.getbufsize()) == outside


def test_a_new_state_is_seen_at_once():
    for caller in CALLER_STATES + CALLER_STATES[::-1]:
        with np.errstate(**caller):
            caller_modes = np.geterr()
            with strict_errstate():
                assert np.geterr() == strict_modes(caller_modes, ())
            assert error_state.error_modes() == np.geterr()
    old = np.seterr(all="raise")
    try:
        with strict_errstate():
            assert np.geterr() == {k: "raise" for k in old}
        np.seterr(under="ignore", over="warn")
        with strict_errstate():
            assert np.geterr() == {"divide": "raise", "over": "raise", "under": "ignore", "invalid": "raise"}
    finally:
        np.seterr(**old)


def test_the_strict_state_restores_on_error_and_nests():
    before = np.geterr()
    with pytest.raises(FloatingPointError):
        with strict_errstate():
            with strict_errstate():  # strict already: no change
                np.array([1.0]) / 0.0
    assert np.geterr() == before


def test_threads_keep_their_own_states():
    seen = {}

    def worker(mode):
        with np.errstate(all=mode):
            for _ in range(200):
                with strict_errstate():
                    seen.setdefault(mode, set()).add(tuple(sorted(np.geterr().items())))

    threads = [threading.Thread(target=worker, args=(m,)) for m in ("ignore", "warn", "raise")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen["ignore"] == {tuple(sorted({k: "ignore" for k in np.geterr()}.items()))}
    assert seen["warn"] == seen["raise"] == {tuple(sorted({k: "raise" for k in np.geterr()}.items()))}


def test_state_memo_follows_every_change():
    memo = error_state.StateMemo(lambda modes: dict(modes))
    for change in ({"all": "raise"}, {"over": "ignore"}, {"under": "warn"}, {"all": "ignore"}):
        with np.errstate(**change):
            assert memo() == np.geterr()
            with np.errstate(divide="warn"):
                assert memo() == np.geterr()
            assert memo() == np.geterr()
