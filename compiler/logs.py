"""Logging channels of the compiler.

Channels are standard ``logging`` loggers named ``tracematrix.<channel>``.
What they say is for people, never for the program: the compiler issues no
Python warnings of its own and writes nothing on the program's stderr unless
a channel is switched on (a fallback worth hearing of, the cache limit, is a
WARNING record that a program's own logging configuration shows).  Switch them on with ``TRACEMATRIX_LOGS=guards,recompiles`` (or ``all``) in
the environment, or ``compiler.logs.enable("guards", ...)``.  Every line of a
frame's compilation carries its ``[frame/recompile]`` marker, as Dynamo's
logs do.  Nothing is logged on the cache-hit path.
"""
from __future__ import annotations

import logging
import sys
from typing import Iterable

CHANNELS = ("graph_breaks", "guards", "recompiles", "bytecode", "graph_code", "fallbacks")

_loggers = {name: logging.getLogger(f"tracematrix.{name}") for name in CHANNELS}
# A library's loggers print nothing unless the program configures logging (its own handlers,
# or a channel switched on here): without this, logging's last-resort handler would write
# warnings on the program's stderr.
logging.getLogger("tracematrix").addHandler(logging.NullHandler())
_handler = logging.StreamHandler(sys.stderr)
_handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))


def get(channel: str) -> logging.Logger:
    return _loggers[channel]


def enable(*channels: str) -> None:
    """Turn channels on (INFO level, to stderr); ``"all"`` means every channel."""
    names: Iterable[str] = CHANNELS if "all" in channels else channels
    for name in names:
        if name not in _loggers:
            raise ValueError(f"unknown log channel {name!r}; accepted: {', '.join(CHANNELS)}, all")
        logger = _loggers[name]
        logger.setLevel(logging.INFO)
        if _handler not in logger.handlers:
            logger.addHandler(_handler)


def enable_from_setting(setting: str) -> None:
    parts = [p.strip() for p in setting.split(",") if p.strip()]
    if parts:
        enable(*parts)


def log(channel: str, compile_id: str, message: str, *args: object) -> None:
    logger = _loggers[channel]
    if logger.isEnabledFor(logging.INFO):
        logger.info(f"[{compile_id}] " + message, *args)


def warn(channel: str, compile_id: str, message: str, *args: object) -> None:
    """A fallback the user should hear of without switching a channel on (the cache limit): a
    WARNING record, which a program that configured logging sees.  Never a Python warning: a
    program's warnings filters (``-W error``) would turn it into an exception, and a
    recording ``catch_warnings`` would count it, so the compiled program would behave
    differently from the plain one."""
    try:
        _loggers[channel].warning(f"[{compile_id}] " + message, *args)
    except Exception:  # pragma: no cover - depends on the program's state
        pass


def log_exception(channel: str, compile_id: str, message: str) -> None:
    """Log with the current exception's traceback (internal errors), at INFO: the program's
    own stderr is not the compiler's to write on (the event records the error; switch the
    channel on to see it).  Logging never raises into the program (a recursion limit that is
    nearly reached, a broken handler)."""
    try:
        _loggers[channel].info(f"[{compile_id}] " + message, exc_info=True)
    except Exception:  # pragma: no cover - depends on the program's state
        pass
