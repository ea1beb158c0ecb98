"""The lines of a transcript file, read in bounded memory.

Why not ``for line in file``: a line is only as long as its writer made it, so a file with no line
end (``/dev/zero``, a dump with one huge line) would be held whole. Here a line longer than the
limit is counted and skipped as it streams past, never kept. Lines end at ``\\n``, ``\\r\\n`` or a
lone ``\\r`` (old Mac files, some exports), so a CR-only file reads as lines, not as one. A FIFO or
a device is refused before a byte is read: it has no end to wait for and no size to check.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

CHUNK_BYTES = 1 << 16
_LINE_END = re.compile(rb"\r\n|\r|\n")


class Chunks(Protocol):
    """What lines are read from: a binary file, or a wrapper that sees its bytes go by."""

    def read(self, size: int, /) -> bytes: ...


@dataclass(frozen=True)
class RawLine:
    """One line: its number, its bytes without the line end (``None`` when longer than the
    limit: skipped unread), its length in bytes, and the file offset just after its line end."""

    number: int
    data: bytes | None
    length: int
    end: int
    terminated: bool


class NotAFileError(OSError):
    """The path names something other than a regular file (a FIFO, a device, a socket)."""


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading if it is a regular file; a FIFO, device or socket is refused
    without waiting for a writer (``O_NONBLOCK``), and checked on the opened file, not the name."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotAFileError(f"{path} is {_kind(mode)}, not a regular file")
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def read_lines(
    handle: Chunks, max_line_bytes: int, first_number: int = 1, offset: int = 0
) -> Iterator[RawLine]:
    """The lines of ``handle`` from its current position (``offset`` in the file), numbered from
    ``first_number``; at most ``max_line_bytes`` plus one chunk is held at any time."""
    number, start = first_number, offset
    pending = b""  # the current line's bytes so far (empty while skipping a long one)
    skipped = 0  # bytes of an over-long line already dropped
    while True:
        chunk = handle.read(CHUNK_BYTES)
        at_end = not chunk
        data = pending + chunk
        position = 0
        for match in _LINE_END.finditer(data):
            if match.group() == b"\r" and match.end() == len(data) and not at_end:
                break  # maybe the first half of \r\n: decide with the next chunk
            length = skipped + match.start() - position
            kept = None if skipped or length > max_line_bytes else data[position : match.start()]
            start += length + match.end() - match.start()
            yield RawLine(number, kept, length, start, True)
            number, skipped, position = number + 1, 0, match.end()
        pending = data[position:]
        if at_end:
            if pending or skipped:
                length = skipped + len(pending)
                kept = None if skipped or length > max_line_bytes else pending
                yield RawLine(number, kept, length, start + length, False)
            return
        if len(pending) > max_line_bytes:
            skipped += len(pending)
            pending = b""
