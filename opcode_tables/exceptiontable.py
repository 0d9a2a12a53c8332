"""The 3.11+ ``co_exceptiontable`` codec.

Each entry is four varints -- start, size, target (all in code units) and
``depth << 1 | lasti`` -- written in 6-bit groups, most significant first,
bit 6 marking "more groups follow" and bit 7 marking the first byte of an
entry.  The writer mirrors CPython's assembler byte for byte, so re-encoding a
parsed table gives the original bytes.
"""
from __future__ import annotations

from typing import Iterator, List, NamedTuple, Tuple

_CONTINUATION = 0x40
_ENTRY_START = 0x80
_CODE_UNIT = 2


class ExceptionEntry(NamedTuple):
    """One row of the table, in byte offsets (``end`` exclusive), like ``dis``."""

    start: int
    end: int
    target: int
    depth: int
    lasti: bool


def _read_varint(data: bytes, pos: int) -> Tuple[int, int]:
    byte = data[pos]
    value = byte & 0x3F
    pos += 1
    while byte & _CONTINUATION:
        byte = data[pos]
        value = (value << 6) | (byte & 0x3F)
        pos += 1
    return value, pos


def parse_exception_table(data: bytes) -> List[ExceptionEntry]:
    """Decode ``co_exceptiontable`` into entries with byte offsets."""
    entries: List[ExceptionEntry] = []
    pos = 0
    while pos < len(data):
        if not data[pos] & _ENTRY_START:
            raise ValueError(f"malformed exception table: byte {pos} does not start an entry")
        start, pos = _read_varint(data, pos)
        size, pos = _read_varint(data, pos)
        target, pos = _read_varint(data, pos)
        depth_lasti, pos = _read_varint(data, pos)
        entries.append(ExceptionEntry(
            start * _CODE_UNIT, (start + size) * _CODE_UNIT, target * _CODE_UNIT,
            depth_lasti >> 1, bool(depth_lasti & 1)))
    return entries


def _varint_bytes(value: int, first_flag: int) -> Iterator[int]:
    if not 0 <= value < (1 << 30):
        raise ValueError(f"exception table value {value} out of range 0..2**30")
    groups = [value & 0x3F]
    value >>= 6
    while value:
        groups.append(value & 0x3F)
        value >>= 6
    groups.reverse()
    for i, group in enumerate(groups):
        flag = first_flag if i == 0 else 0
        more = _CONTINUATION if i < len(groups) - 1 else 0
        yield group | flag | more


def encode_exception_table(entries: List[ExceptionEntry]) -> bytes:
    """Encode entries (byte offsets, ``end`` exclusive) as ``co_exceptiontable`` bytes."""
    out = bytearray()
    for entry in entries:
        if entry.start % _CODE_UNIT or entry.end % _CODE_UNIT or entry.target % _CODE_UNIT:
            raise ValueError(f"exception table entry {entry} is not aligned to code units")
        if entry.end <= entry.start:
            raise ValueError(f"exception table entry {entry} covers no code")
        out.extend(_varint_bytes(entry.start // _CODE_UNIT, _ENTRY_START))
        out.extend(_varint_bytes((entry.end - entry.start) // _CODE_UNIT, 0))
        out.extend(_varint_bytes(entry.target // _CODE_UNIT, 0))
        out.extend(_varint_bytes((entry.depth << 1) | int(entry.lasti), 0))
    return bytes(out)
