"""Split a binary stream into JSONL lines with their line numbers and byte offsets.

Memory-safe: a line longer than ``max_line_bytes`` is never held in memory; it is reported as
too long (``data is None``) and skipped up to its newline.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

_CHUNK = 1 << 20


@dataclass(slots=True)
class RawLine:
    line_no: int  # 1-based
    offset: int  # byte offset of the first byte of the line
    end: int  # byte offset just past the newline (or past the last byte when unterminated)
    data: bytes | None  # None when the line exceeded the size limit
    terminated: bool  # False for a final line without a newline (may still be being written)


def iter_lines(
    stream: BinaryIO, *, start_offset: int, start_line: int, max_line_bytes: int, end_offset: int | None = None
) -> Iterator[RawLine]:
    """Lines from ``start_offset`` up to ``end_offset`` (the size the caller saw when it looked at the
    file: bytes appended since are left for next time). A last line with no newline before the end is
    yielded with ``terminated=False``."""
    stream.seek(start_offset)
    offset = start_offset
    line_no = start_line
    pending = bytearray()
    too_long = False
    line_start = offset
    while True:
        want = _CHUNK if end_offset is None else min(_CHUNK, end_offset - offset)
        chunk = stream.read(want) if want > 0 else b""
        if not chunk:
            break
        pos = 0
        while True:
            newline = chunk.find(b"\n", pos)
            if newline < 0:
                if not too_long:
                    pending += chunk[pos:]
                    if len(pending) > max_line_bytes:
                        too_long = True
                        pending.clear()
                offset += len(chunk) - pos
                break
            piece = chunk[pos:newline]
            end = offset + (newline - pos) + 1
            if too_long or len(pending) + len(piece) > max_line_bytes:
                yield RawLine(line_no, line_start, end, None, True)
            else:
                pending += piece
                yield RawLine(line_no, line_start, end, bytes(pending), True)
            pending.clear()
            too_long = False
            line_no += 1
            offset = end
            line_start = end
            pos = newline + 1
    if too_long:
        yield RawLine(line_no, line_start, offset, None, False)
    elif pending:
        yield RawLine(line_no, line_start, offset, bytes(pending), False)
