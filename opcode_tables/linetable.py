"""Line-number tables in the three formats CPython 3.8-3.13 use.

``lnotab`` (3.8, 3.9), ``linetable310`` (3.10) and ``locations`` (3.11+,
with columns) are the values of the table fact ``linetable``.  Reading goes
through the interpreter's own views (``dis.findlinestarts``, ``co_lines()``,
``co_positions()``) so that what the decoder reports is what CPython reports;
writing mirrors CPython's assembler so that an unmodified round trip gives the
same views back.
"""
from __future__ import annotations

import dis
from types import CodeType
from typing import List, NamedTuple, Optional, Set

from .instruction import Positions

CODE_UNIT = 2
NO_POSITIONS: Positions = (None, None, None, None)

# The CodeType.replace() keyword that carries each format.
TABLE_FIELD = {"lnotab": "co_lnotab", "linetable310": "co_linetable", "locations": "co_linetable"}


class LineInfo(NamedTuple):
    """Per code unit line numbers (and 3.11+ positions) of one code object."""

    lines: List[Optional[int]]
    positions: Optional[List[Positions]]
    # Byte offsets where the table starts a new entry (a line start).
    entry_starts: Set[int]


class LineSpan(NamedTuple):
    """What the writer needs about one assembled instruction (prefixes and caches included)."""

    start: int          # byte offset of its first unit (EXTENDED_ARG prefix if any)
    size: int           # bytes, prefixes and caches included
    line: Optional[int]
    positions: Positions
    new_entry: bool     # start a table entry here even if the line is unchanged


def _check_format(fmt: str) -> None:
    if fmt not in TABLE_FIELD:
        raise ValueError(f"unknown line table format {fmt!r}; expected one of {sorted(TABLE_FIELD)}")


# -- reading ----------------------------------------------------------------

def read_line_info(code: CodeType, fmt: str) -> LineInfo:
    """Line (and position) of every code unit, plus where table entries start."""
    _check_format(fmt)
    n_units = len(code.co_code) // CODE_UNIT
    lines: List[Optional[int]] = [None] * n_units
    starts: Set[int] = set()
    positions: Optional[List[Positions]] = None
    if fmt == "lnotab":
        ordered = sorted(dis.findlinestarts(code))
        for i, (offset, line) in enumerate(ordered):
            end = ordered[i + 1][0] if i + 1 < len(ordered) else len(code.co_code)
            starts.add(offset)
            for unit in range(offset // CODE_UNIT, min(end, len(code.co_code)) // CODE_UNIT):
                lines[unit] = line
    elif fmt == "linetable310":
        for start, end, line in code.co_lines():
            starts.add(start)
            for unit in range(start // CODE_UNIT, end // CODE_UNIT):
                lines[unit] = line
    else:
        positions = list(code.co_positions())
        if len(positions) != n_units:
            raise ValueError(f"{code.co_name}: co_positions() gave {len(positions)} entries for {n_units} code units")
        lines = [pos[0] for pos in positions]
        previous = object()
        for unit, line in enumerate(lines):
            if line != previous:
                starts.add(unit * CODE_UNIT)
            previous = line
    return LineInfo(lines, positions, starts)


# -- writing ----------------------------------------------------------------

def encode_line_table(fmt: str, spans: List[LineSpan], firstlineno: int) -> bytes:
    """The line table of the given format for instructions laid out as ``spans``."""
    _check_format(fmt)
    if fmt == "lnotab":
        return _encode_lnotab(spans, firstlineno)
    if fmt == "linetable310":
        return _encode_linetable310(spans, firstlineno)
    return _encode_locations(spans, firstlineno)


def _signed_byte(value: int) -> int:
    return value & 0xFF


def _encode_lnotab(spans: List[LineSpan], firstlineno: int) -> bytes:
    # (byte increment, signed line increment) pairs; a pair is needed only
    # where the line changes, as dis.findlinestarts reports only changes.
    out = bytearray()
    last_offset, last_line = 0, firstlineno
    for span in spans:
        line = span.line if span.line is not None else last_line
        if line == last_line:
            continue
        d_bytes, d_line = span.start - last_offset, line - last_line
        while d_bytes > 255:
            out += bytes((255, 0))
            d_bytes -= 255
        step = 127 if d_line > 0 else -128
        while not -128 <= d_line <= 127:
            out += bytes((d_bytes, _signed_byte(step)))
            d_bytes = 0
            d_line -= step
        out += bytes((d_bytes, _signed_byte(d_line)))
        last_offset, last_line = span.start, line
    return bytes(out)


def _encode_linetable310(spans: List[LineSpan], firstlineno: int) -> bytes:
    # Mirrors 3.10's assemble_line_range: (byte delta <= 254, signed line delta)
    # pairs, -128 meaning "no line"; deltas are taken against the last real line.
    out = bytearray()
    state = {"prev_line": firstlineno}

    def emit_range(d_bytes: int, line: Optional[int]) -> None:
        if d_bytes == 0:
            return
        if line is None:
            d_line = -128
        else:
            d_line = line - state["prev_line"]
            state["prev_line"] = line
            while d_line > 127:
                out.extend((0, 127))
                d_line -= 127
            while d_line < -127:
                out.extend((0, _signed_byte(-127)))
                d_line += 127
        while d_bytes > 254:
            out.extend((254, _signed_byte(d_line)))
            d_line = -128 if line is None else 0
            d_bytes -= 254
        out.extend((d_bytes, _signed_byte(d_line)))

    current: Optional[int] = firstlineno
    range_start = 0
    end = 0
    for span in spans:
        if span.line != current or (span.new_entry and span.start != range_start):
            emit_range(span.start - range_start, current)
            range_start, current = span.start, span.line
        end = span.start + span.size
    emit_range(end - range_start, current)
    return bytes(out)


# 3.11+ location entry codes (Objects/locations.md).
_LOC_NONE = 15
_LOC_LONG = 14
_LOC_NO_COLUMN = 13
_LOC_ONE_LINE = 10
_MAX_ENTRY_UNITS = 8


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 64:
        out.append((value & 63) | 64)
        value >>= 6
    out.append(value)
    return bytes(out)


def _svarint(value: int) -> bytes:
    return _varint(((-value) << 1) | 1 if value < 0 else value << 1)


def _encode_locations(spans: List[LineSpan], firstlineno: int) -> bytes:
    out = bytearray()
    prev_line = firstlineno
    # One entry (or 8-unit chunks) per instruction, as 3.11's assembler writes
    # them: 3.11's co_lines() reports entry boundaries even within one line.
    for span in spans:
        positions, units = span.positions, span.size // CODE_UNIT
        while units > 0:
            length = min(units, _MAX_ENTRY_UNITS)
            prev_line = _write_location(out, positions, length, prev_line)
            units -= length
    return bytes(out)


def _write_location(out: bytearray, positions: Positions, length: int, prev_line: int) -> int:
    """Append one entry (mirrors write_location_info_entry); returns the new reference line."""
    line, end_line, col, end_col = positions

    def first(code: int) -> None:
        out.append(0x80 | (code << 3) | (length - 1))

    if line is None:
        first(_LOC_NONE)
        return prev_line
    delta = line - prev_line
    if col is None or end_col is None:
        if end_line is None or end_line == line:
            first(_LOC_NO_COLUMN)
            out += _svarint(delta)
            return line
    elif end_line == line:
        if delta == 0 and col < 80 and 0 <= end_col - col < 16:
            first(col // 8)
            out.append(((col % 8) << 4) | (end_col - col))
            return prev_line
        if 0 <= delta < 3 and col < 128 and end_col < 128:
            first(_LOC_ONE_LINE + delta)
            out += bytes((col, end_col))
            return line
    if end_line is None or end_line < line:
        raise ValueError(f"position {positions} cannot be encoded: end line before start line")
    first(_LOC_LONG)
    out += _svarint(delta)
    out += _varint(end_line - line)
    out += _varint(0 if col is None else col + 1)
    out += _varint(0 if end_col is None else end_col + 1)
    return line


def on_one_line(code: CodeType, fmt: str, line: int) -> CodeType:
    """``code`` with every instruction on ``line`` (its ``co_firstlineno`` too): a frame of
    it reports that line (``frame.f_lineno`` is never None, which inspect and traceback
    need) and a trace function sees one "line" event for it."""
    _check_format(fmt)
    code = code.replace(co_firstlineno=line)
    table = encode_line_table(fmt, [LineSpan(0, len(code.co_code), line, (line, line, None, None), True)], line)
    return code.replace(**{TABLE_FIELD[fmt]: table})
