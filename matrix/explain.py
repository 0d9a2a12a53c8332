"""Why two ir_counts differ: the difference of the traced-opcode multisets."""
from __future__ import annotations

from collections import Counter
from typing import Dict, Mapping, Optional


def opcode_delta(now: Mapping[str, int], before: Mapping[str, int]) -> Dict[str, int]:
    """opname -> count(now) - count(before), zero entries dropped, sorted by name."""
    delta = Counter(dict(now))
    delta.subtract(Counter(dict(before)))
    return {name: n for name, n in sorted(delta.items()) if n}


def describe_delta(delta: Mapping[str, int]) -> str:
    """'+1 RESUME, -2 CALL_FUNCTION' (additions first), or 'no opcode difference'."""
    if not delta:
        return "no opcode difference"
    ordered = sorted(delta.items(), key=lambda item: (item[1] < 0, item[0]))
    return ", ".join(f"{n:+d} {name}" for name, n in ordered)


def accounts_for(delta: Mapping[str, int], count_delta: Optional[int]) -> bool:
    """Whether the opcode difference adds up to the ir_count difference."""
    return count_delta is not None and sum(delta.values()) == count_delta and (
        count_delta == 0 or bool(delta))


def explain_ir_count(now_count: Optional[int], now_ops: Mapping[str, int],
                     before_count: Optional[int], before_ops: Mapping[str, int]) -> Dict[str, object]:
    """The explanation record used by baselines and cross-version comparison."""
    count_delta = None if now_count is None or before_count is None else now_count - before_count
    delta = opcode_delta(now_ops, before_ops)
    explained = accounts_for(delta, count_delta) and bool(now_ops or before_ops)
    return {"count_delta": count_delta, "opcodes": delta, "text": describe_delta(delta),
            "explained": explained}


# Instructions Dynamo counts in its own Python code (the polyfills it traces for builtins
# such as enumerate, sum, functools.reduce and the match statement's tests) are recorded by
# the Dynamo subject under a tagged name: the program does not have them, so a count
# compared with another compiler's is compared without them (matrix.compare.cross_subject).
POLYFILL_TAG = " [Dynamo polyfill "


def polyfill_opname(opname: str, function: str) -> str:
    return f"{opname}{POLYFILL_TAG}{function}]"


def polyfill_count(opcodes: Mapping[str, int]) -> int:
    """How many of the counted instructions are Dynamo's own polyfills'."""
    return sum(n for name, n in opcodes.items() if POLYFILL_TAG in name)
