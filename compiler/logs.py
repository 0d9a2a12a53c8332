"""Logging channels of the compiler.

Channels are standard ``logging`` loggers named ``tracematrix.<channel>``.
Switch them on with ``TRACEMATRIX_LOGS=guards,recompiles`` (or ``all``) in
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


def log_exception(channel: str, compile_id: str, message: str) -> None:
    """Log with the current exception's traceback (internal errors), at INFO: the program's
    own stderr is not the compiler's to write on (the event records the error; switch the
    channel on to see it).  Logging never raises into the program (a recursion limit that is
    nearly reached, a broken handler)."""
    try:
        _loggers[channel].info(f"[{compile_id}] " + message, exc_info=True)
    except Exception:  # pragma: no cover - depends on the program's state
        pass
