"""A channel's read-model file cut to its first messages: a new generation holding their bytes.

Why: a change other than an append keeps the messages before the first row it changed
(:mod:`storage.read_model_keys`). Their bytes are copied out of the current generation into a
new one, part by part: each part holds them first, so it is a prefix of each (about 0.3 s for
the 245 MB of a 100,000-message channel, read through the page cache, not into the process). Three
things are not laid out by position and are cut otherwise, to what a file written from those
messages alone would hold: the word index's postings (each run of messages appended is grouped
by term) are filtered to the messages kept, its terms (numbered in the order they first appear)
to those the kept messages hold, and the cell levels to those fitted on the rows kept (a level
is fitted once the channel holds its row count: :mod:`awai_engine.cells`). The JSON columns are
written again from their first values.

The generation cut from is then shredded whole (:meth:`storage.read_model_files.ReadModelFiles.cut`),
so no byte of a row from the cut on stays: the new generation holds none of them. Every part is
read whole and checked against its pointer's CRC as it is copied: the prefix of a part that rotted
would otherwise be written with a CRC of its own, and the damage no longer found.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from storage.read_model_keys import HeldRows, RowKeys
from storage.read_model_layout import (
    ARRAYS,
    BY_MESSAGE,
    BY_ROW,
    LIST_COLUMNS,
    PACKED_COLUMNS,
    POSTINGS,
    VECTORS,
    Chunk,
    decoded,
    raw,
    values,
)

_CHUNK = 4 << 20  # bytes read and written at a time: a buffer reused, not the part in memory


def held_rows(parts: Path, meta: dict[str, Any]) -> HeldRows:
    """What the generation at ``parts`` holds of each message's row (its pointer ``meta``): what
    SQL's rows are compared with to find the first that changed."""
    files, count = meta["files"], int(meta["messages"])

    def array(name: str) -> np.ndarray:
        found: np.ndarray = np.frombuffer(_read(parts / name, files[name]), dtype=ARRAYS[name])
        if len(found) != count:
            raise ValueError(f"{name} holds {len(found)} values, not {count}")
        return found

    listed = {name: decoded(_read(parts / name, files[name])) for name in ("message_ids", "scopes")}
    if any(len(column) != count for column in listed.values()):
        raise ValueError("a column holds another number of messages")
    return HeldRows(
        RowKeys(array("row_ids"), array("edited_at"), array("fallbacks")),
        listed["message_ids"],
        listed["scopes"],
        array("ts"),
    )


def cut_generation(
    parts: Path, meta: dict[str, Any], target: Path, messages: int
) -> dict[str, Any]:
    """Write into the empty folder ``target`` the generation of the first ``messages`` (at least
    one, fewer than it holds) of the one at ``parts`` (its pointer ``meta``), each file synced;
    returns ``meta`` with the new counts, levels and parts (the caller names the generation and
    what it was checked against)."""
    files, count = meta["files"], int(meta["messages"])
    cut: dict[str, list[int]] = {}

    def read(name: str, dtype: type) -> np.ndarray:
        return np.frombuffer(_read(parts / name, files[name]), dtype=dtype)

    def copy(name: str, keep: int) -> None:
        cut[name] = _copy(parts / name, target / name, files[name], keep)

    def write(name: str, chunk: Chunk) -> None:
        cut[name] = _write(target / name, chunk)

    first_rows = read("first_rows", np.int64)
    if not 0 < messages < count == len(first_rows):
        raise ValueError(f"cannot cut {count} messages to {messages}")
    rows = int(first_rows[messages])
    for name in BY_ROW:
        width = int(meta["dimension"]) if name == VECTORS else 1
        copy(name, rows * width * np.dtype(ARRAYS[name]).itemsize)
    for name in BY_MESSAGE:
        copy(name, messages * np.dtype(ARRAYS[name]).itemsize)
    postings = {name: read(name, ARRAYS[name]) for name in POSTINGS}
    before = postings["term_positions"] < messages
    for name, array in postings.items():
        write(name, raw(array[before], ARRAYS[name]))
    held = postings["term_ids"][before]
    terms = int(held.max()) + 1 if len(held) else 0  # numbered as first met: the kept come first
    write("terms", values(decoded(_read(parts / "terms", files["terms"]))[:terms]))
    for name in LIST_COLUMNS:
        write(name, values(decoded(_read(parts / name, files[name]))[:messages]))
    packed = kept_packed = 0
    for name in PACKED_COLUMNS:
        end = int(read(f"{name}_ends", np.int64)[messages - 1])
        copy(f"{name}.bin", end)
        copy(f"{name}_ends", messages * np.dtype(np.int64).itemsize)
        packed, kept_packed = packed + files[f"{name}.bin"][0], kept_packed + end
    levels = [fitted for fitted in meta["levels"] if fitted <= rows]
    for depth in range(len(levels)):
        copy(f"level{depth}_cells", rows * np.dtype(np.int32).itemsize)
        for name in (f"level{depth}_centroids", f"level{depth}_child_start"):
            if name in files:
                copy(name, files[name][0])
    return {
        **meta,
        "messages": messages,
        "thoughts": rows,
        "terms": terms,
        "levels": levels,
        "files": cut,
        # The memory estimate of the texts kept (storage.read_model), by their share of the
        # bytes: the texts themselves are not decoded for it.
        "text_bytes": int(meta["text_bytes"]) * kept_packed // max(packed, 1),
    }


def _read(path: Path, committed: Sequence[int]) -> bytes:
    """A part's committed bytes, checked against their CRC."""
    length, crc = committed
    with path.open("rb") as handle:
        found = handle.read(length)
    if len(found) != length or zlib.crc32(found) != crc:
        raise ValueError(f"{path.name} is not what was written")
    return found


def _copy(source: Path, target: Path, committed: Sequence[int], keep: int) -> list[int]:
    """Copy the first ``keep`` bytes of a part into a new file, synced, once all its committed
    bytes are read and checked against their CRC (through the page cache, a buffer at a time);
    the copy's length and CRC."""
    length, crc = committed
    if keep > length:
        raise ValueError(f"{source.name} holds {length} bytes, not {keep}")
    whole = kept = done = 0
    buffer = memoryview(bytearray(_CHUNK))
    with source.open("rb", buffering=0) as reading:
        while done < length:
            size = reading.readinto(buffer[: min(_CHUNK, length - done)])
            if not size:
                raise ValueError(f"{source.name} is shorter than was written")
            whole = zlib.crc32(buffer[:size], whole)
            if done < keep:
                kept = zlib.crc32(buffer[: min(size, keep - done)], kept)
            done += size
        if whole != crc:
            raise ValueError(f"{source.name} is not what was written")
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            _copy_range(reading.fileno(), descriptor, keep, buffer)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    return [keep, kept]


def _copy_range(source: int, target: int, length: int, buffer: memoryview) -> None:
    """Copy ``source``'s first ``length`` bytes to ``target`` in the kernel, where it can (Linux:
    the 245 MB of a 100,000-message channel in 0.1 s, where writing them from this process took
    0.65 s), else through ``buffer``."""
    done = 0
    copy = getattr(os, "copy_file_range", None)
    while done < length:
        try:
            if copy is not None:
                copied = copy(source, target, length - done, done, done)
            else:
                chunk = buffer[: min(len(buffer), length - done)]
                copied = os.pwrite(target, chunk[: os.preadv(source, [chunk], done)], done)
        except OSError:  # a file system that cannot copy in the kernel: through the buffer
            if copy is None:
                raise
            copy = None
            continue
        if not copied:
            raise ValueError("the part is shorter than was written")
        done += copied


def _write(target: Path, chunk: Chunk) -> list[int]:
    """A new file holding ``chunk``, synced; its length and CRC."""
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        _write_all(descriptor, memoryview(chunk))
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    return [memoryview(chunk).nbytes, zlib.crc32(chunk)]


def _write_all(descriptor: int, view: memoryview) -> None:
    while view:
        view = view[os.write(descriptor, view) :]
