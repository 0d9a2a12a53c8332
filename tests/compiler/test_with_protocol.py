"""A with statement on an object that is not a context manager raises what the plain run raises
(AttributeError on 3.8-3.10, TypeError from 3.11; 3.14 looks the methods up with LOAD_SPECIAL)."""
from __future__ import annotations

import _thread
import contextlib
import signal

import numpy as np
import pytest

import compiler


class NotAManager:
    pass


class OnlyEnter:
    def __enter__(self):
        return 1


class Manager:
    def __init__(self):
        self.log = []

    def __enter__(self):
        self.log.append("enter")
        return 2.0

    def __exit__(self, *exc):
        self.log.append(exc[0].__name__ if exc[0] else "exit")
        return exc[0] is KeyError  # suppresses KeyError only


def guarded(x, manager, fail):
    try:
        with manager as value:
            if fail:
                raise KeyError("k")
            return x * value
    except AttributeError as err:
        return ("AttributeError", str(err))
    except TypeError as err:
        return ("TypeError", str(err))
    return x - 1.0


def _outcome(fn, *args):
    try:
        value = fn(*args)
    except Exception as err:  # compared below, never swallowed
        return ("raised", type(err).__name__, str(err))
    return ("value", value.tolist() if isinstance(value, np.ndarray) else value)


@pytest.mark.parametrize("make", [NotAManager, OnlyEnter, Manager, lambda: contextlib.nullcontext(3.0)],
                         ids=["not_a_manager", "only_enter", "manager", "nullcontext"])
@pytest.mark.parametrize("fail", [False, True])
def test_with_statement_outcome_matches_plain(make, fail):
    compiler.reset()
    compiled = compiler.compile(guarded)
    plain_manager, compiled_manager = make(), make()
    x = np.arange(3.0)
    assert _outcome(compiled, x, compiled_manager, fail) == _outcome(guarded, x, plain_manager, fail)
    assert getattr(compiled_manager, "log", None) == getattr(plain_manager, "log", None)


class InterruptingEnter:
    """A manager whose ``__enter__`` is a builtin (called with no arguments) that leaves an
    interrupt pending: the interpreter raises KeyboardInterrupt at its next check, inside the
    with block, so ``__exit__`` sees it (CPython 3.15's test_with.InterruptDuringEnter)."""
    __enter__ = _thread.interrupt_main

    def __init__(self):
        self.log = []

    def __exit__(self, *exc):
        self.log.append(exc[0].__name__ if exc[0] else "exit")
        return True  # swallows it


def _nothing():
    pass


def interrupted_with(manager):
    with manager:
        _nothing()  # a Python call: the pending interrupt is raised by here at the latest
        manager.log.append("body")
    manager.log.append("after")
    return len(manager.log)


def _interrupt_outcome(fn, manager):
    try:
        return fn(manager), manager.log
    except KeyboardInterrupt:  # escaped the with block: __exit__ never saw it
        return "KeyboardInterrupt escaped", manager.log


def test_an_interrupt_pending_after_a_native_enter_meets_the_with_block():
    """The manager's __enter__ runs natively at a graph break; the interrupt it leaves pending
    is raised while the break stub hands its values on, which the with block's handler covers
    as it covers that point in the plain frame (opcode_tables.resume: the exit's packer
    call)."""
    # The interrupt raises KeyboardInterrupt only under Python's default SIGINT handler, which
    # code run earlier in this process may have replaced (an asyncio runner left installed by
    # a test of the service swallows it), or set to SIG_IGN (3.8's interrupt_main is then a
    # no-op).
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        compiled = compiler.compile(interrupted_with, backend="eager")
        plain = _interrupt_outcome(interrupted_with, InterruptingEnter())
        # (3.10 and 3.14 raise it before the block is set up: plain lets it escape there too)
        assert plain in [(2, ["KeyboardInterrupt", "after"]), ("KeyboardInterrupt escaped", [])]
        for _ in range(2):
            assert _interrupt_outcome(compiled, InterruptingEnter()) == plain
    finally:
        signal.signal(signal.SIGINT, saved)


def _batches(items, n):
    if n < 1:
        raise ValueError("n must be at least one")
    it = iter(items)
    while batch := tuple(it)[:n]:
        yield batch


def with_blocks_in_a_loop_after_a_handled_error():
    # CPython's test_itertools.test_batched_recipe: subTest's manager around code whose first
    # rounds raise and are handled (their stub then runs the loop on natively), later rounds not
    log = []

    @contextlib.contextmanager
    def sub(n):
        log.append(("enter", n))
        yield
        log.append(("exit", n))

    for items, n in [("", -1), ("", 0), ("", 1), ("a", 1), ("ab", 2)]:
        with sub(n):
            try:
                got = list(_batches(items, n))
            except ValueError as e:
                got = str(e)
            log.append(got)
    return log


def test_a_with_block_reached_again_natively_exits_as_plain():
    """A break stub whose instruction raised runs the rest of the frame natively; coming round
    the loop to its break again, it goes on as plain code (3.14's LOAD_SPECIAL leaves
    [function, self] where the trace kept [bound method, NULL]: leaving through the exit code
    dropped the self, and __exit__ was called without it)."""
    compiled = compiler.compile(with_blocks_in_a_loop_after_a_handled_error, backend="eager")
    want = with_blocks_in_a_loop_after_a_handled_error()
    for _ in range(2):
        assert compiled() == want
