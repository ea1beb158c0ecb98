"""A matrix of rows that grows at its end without copying the rows it was loaded from a file.

Why: a persisted read model's vectors are memory-mapped from their file (186 MB at 100,000
messages), and the first message appended to it used to copy all of them into a new array:
+186 MiB of the process's own memory and most of a second, paid by every ingest into a large
channel. Here the grown array is one range of addresses whose first part maps the file again
(copy-on-write, so it is never written through; nothing writes those rows anyway) and whose
rest is anonymous memory for the rows appended since. Readers still see one plain ``ndarray``,
so every slice and ``take`` over the rows works as before, and the file's pages stay shared
page cache, read only where a reading scores them.

Only on Linux (``mmap`` at a fixed address through libc); elsewhere, or for an array not backed
by a file, the rows are copied as before.

A mapped file is never zeroed under the process reading it. A removal shreds the channel's
file (zeros over its bytes, so nothing removed stays on disk), and a private mapping shows a
write to its file: another process's shred once turned a holder's rows into zeros, which it
then read, and wrote into its next file. So every mapping holds a shared ``flock`` on the file
through a descriptor of its own (:func:`mapped`, :func:`mapped_bytes`, :func:`grown`); a
:func:`shred` zeros a file only when it can take the lock exclusively, and otherwise unlinks it
alone; the last mapping to let go of a file that was unlinked zeros it then. A holder drops its timeline once its file is gone
(:func:`file_gone`), so the bytes do not outlive the removal for long.
"""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os
import sys
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

_PROT = mmap.PROT_READ | mmap.PROT_WRITE
_MAP_FIXED = 0x10  # Linux's values (asm-generic/mman-common.h); the mmap module lacks these two
_MAP_NORESERVE = 0x4000


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    libc.munmap.restype = ctypes.c_int
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.madvise.restype = ctypes.c_int
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return libc


_LIBC = _libc()
_FAILED = ctypes.c_void_p(-1).value
_ZEROS = bytes(1 << 20)
# The descriptor each map made by :func:`mapped` or :func:`mapped_bytes` holds its lock by.
_HELD: weakref.WeakKeyDictionary[mmap.mmap, int] = weakref.WeakKeyDictionary()
# How often, and how far apart, a shred tries again for a file a holder may be letting go of
# just then (its check of the file, under the exclusive lock, takes microseconds).
_RETRIES, _RETRY_SECONDS = 3, 0.001


def mapped(path: Path, dtype: type, shape: tuple[int, int]) -> np.memmap:
    """``path``'s rows as a read-only memory map that a :func:`shred` will not zero under it.

    The map keeps a descriptor of its own with a shared lock on the file until the last array
    using it is gone; then, if the file was unlinked meanwhile, that descriptor zeros it."""
    with _locked_open(path) as descriptor, os.fdopen(os.dup(descriptor), "rb") as handle:
        rows = np.memmap(handle, dtype=dtype, mode="r", shape=shape)
    mapping = rows.base
    assert isinstance(mapping, mmap.mmap)  # numpy maps a file through one
    _hold(mapping, descriptor)
    return rows


def mapped_bytes(path: Path, length: int) -> mmap.mmap:
    """The first ``length`` bytes of ``path`` (``length`` ≥ 1), read-only and mapped, held as
    :func:`mapped` holds a file: a :func:`shred` elsewhere does not zero them under this map."""
    with _locked_open(path) as descriptor:
        mapping = mmap.mmap(descriptor, length, access=mmap.ACCESS_READ)
    _hold(mapping, descriptor)
    return mapping


@contextmanager
def _locked_open(path: Path) -> Iterator[int]:
    """A descriptor of ``path`` holding a shared lock on it, closed if the block fails (it is
    the mapping's to close once the block succeeds: :func:`_hold`). Opened for writing where
    the folder allows, so its last holder can zero it without reopening it (which only Linux's
    /proc can do for an unlinked file)."""
    try:
        descriptor = os.open(path, os.O_RDWR)
    except OSError:  # a read-only file or folder (or none: the read-only open says so)
        descriptor = os.open(path, os.O_RDONLY)
    try:
        _share(descriptor)
        yield descriptor
    except BaseException:
        os.close(descriptor)
        raise


def _share(descriptor: int) -> None:
    """Take the file's shared lock; ``FileNotFoundError`` if it was shredded meanwhile (the
    lock waited for the shred, which zeroed it: those are no rows to map)."""
    fcntl.flock(descriptor, fcntl.LOCK_SH)
    if os.fstat(descriptor).st_nlink == 0:
        raise FileNotFoundError("the file was shredded while it was being opened")


def _hold(mapping: mmap.mmap, descriptor: int) -> None:
    """``mapping`` keeps ``descriptor`` (and its lock) until it is gone."""
    _HELD[mapping] = descriptor
    weakref.finalize(mapping, _let_file_go, descriptor, os.getpid())


def shred(path: Path) -> None:
    """Unlink ``path`` with zeros over its bytes first, or, while a process maps it, unlink it
    alone: the last mapping to let go of it zeros it then (see the module)."""
    descriptor = os.open(path, os.O_RDWR)
    try:
        if _exclusive(descriptor):
            _zero(descriptor)  # before the unlink: a kill between the two leaves only zeros
            os.unlink(path)
            return
        os.unlink(path)
        # A holder that let go while this one unlinked checked the file before the unlink, under
        # the exclusive lock: once it has closed, the file is this shred's to zero. A holder that
        # stays finds it unlinked when it lets go, and zeros it then.
        for attempt in range(_RETRIES):
            if _exclusive(descriptor):
                _zero(descriptor)
                return
            if attempt + 1 < _RETRIES:
                time.sleep(_RETRY_SECONDS)
    finally:
        os.close(descriptor)


def file_gone(rows: np.ndarray) -> bool:
    """Whether the file ``rows`` are mapped from was unlinked (shredded, or replaced by a
    newer generation) since it was mapped; ``False`` for an array not mapped from a file."""
    descriptor = _descriptor(rows)
    if descriptor is None:
        return False
    try:
        return os.fstat(descriptor).st_nlink == 0
    except OSError:
        return True


def grown(rows: np.ndarray, used: int, capacity: int) -> np.ndarray:
    """A writable array of ``capacity`` rows whose first ``used`` are those of ``rows``.

    When ``rows`` is a read-only memory map of a file from its start (as a persisted read model
    loads its vectors), or an array this function made over one, the file's rows are mapped
    again rather than copied, and only the rows after them are copied. The file is held open
    by the array, so it maps the same bytes again when it grows, even after the file was
    unlinked (a newer generation written, or the channel's file shredded by another process)."""
    backing = file_backing(rows)
    if backing is None or _LIBC is None or rows.ndim != 2 or not capacity >= used >= backing[1]:
        return _copied(rows, used, capacity)
    source, file_rows = backing
    row_bytes = rows.shape[1] * rows.itemsize
    try:
        # A descriptor of its own (an unlinked file opens again through /proc), so the shared
        # lock it holds lasts as long as this array, whoever else lets go of the file.
        path = source if isinstance(source, str) else f"/proc/self/fd/{source}"
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:  # unlinked before it was first held open: its rows are copied
        return _copied(rows, used, capacity)
    try:
        if isinstance(source, str):
            _share(descriptor)
        else:  # a file this process held all along: never zeroed, even if unlinked since
            fcntl.flock(descriptor, fcntl.LOCK_SH)
    except OSError:  # shredded before it was held: ``rows`` still maps what it read, copied
        os.close(descriptor)
        return _copied(rows, used, capacity)
    total = _pages(capacity * row_bytes)
    address = _LIBC.mmap(
        None, total, _PROT, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE, -1, 0
    )
    if address in (None, _FAILED):
        os.close(descriptor)
        return _copied(rows, used, capacity)
    region = (ctypes.c_byte * total).from_address(address)
    # Unmapped, and the file let go, when no array uses the region any more.
    weakref.finalize(region, _release, address, total, descriptor, os.getpid())
    # The file's whole pages; the last one's bytes past its rows are copy-on-write like the
    # rest, and the rows appended after the file's are written over them below.
    length = _pages(file_rows * row_bytes)
    if os.fstat(descriptor).st_size < file_rows * row_bytes or (
        _LIBC.mmap(address, length, _PROT, mmap.MAP_PRIVATE | _MAP_FIXED, descriptor, 0) != address
    ):
        return _copied(rows, used, capacity)
    region.awai_file = (descriptor, file_rows)  # type: ignore[attr-defined]
    array: np.ndarray = np.frombuffer(
        memoryview(region).cast("B"), dtype=rows.dtype, count=capacity * rows.shape[1]
    )
    array = array.reshape(capacity, rows.shape[1])
    array[file_rows:used] = rows[file_rows:used]
    return array


def let_go(rows: np.ndarray) -> None:
    """Unmap from this process the pages of ``rows``' file that were touched: they stay in the
    page cache, shared and clean, and a later touch maps them again (a minor fault, no read).

    Why: the kernel maps the cached pages around each one touched (fault-around, 64 KiB;
    ``MADV_RANDOM`` does not turn it off), so gathering rows spread over a channel (a speaker's
    thoughts, a cell's, a strided sample) maps nearly the whole file: a process holding a
    100,000-message channel counted its 186 MB of vectors in its RSS after a few readings
    although each reading uses a few thousand rows. Only the file's whole pages are let go,
    never the rows appended after them (private memory, whose loss would lose them); nothing
    else (another array, a copy of ``rows``) is affected. A no-op for an array not mapped from a
    file."""
    root, base = rows, rows.base
    while isinstance(base, np.ndarray):
        root, base = base, base.base
    if isinstance(base, mmap.mmap):  # a view of an np.memmap: read-only, it is clean file pages
        if isinstance(root, np.memmap) and root.mode == "r":
            base.madvise(mmap.MADV_DONTNEED)
        return
    if isinstance(base, memoryview):
        base = base.obj
    found = getattr(base, "awai_file", None)
    if not isinstance(found, tuple) or _LIBC is None:
        return
    length = found[1] * rows.shape[-1] * rows.itemsize // mmap.PAGESIZE * mmap.PAGESIZE
    if length:
        _LIBC.madvise(ctypes.addressof(base), length, mmap.MADV_DONTNEED)  # type: ignore[arg-type]


def file_backing(rows: np.ndarray) -> tuple[str | int, int] | None:
    """The file whose first rows ``rows`` maps (the descriptor an array of :func:`mapped` or
    :func:`grown` holds it by, or its path), and how many: for a read-only ``np.memmap`` from
    the file's start, or an array :func:`grown` made; ``None`` for any other array."""
    if isinstance(rows, np.memmap) and isinstance(rows.base, mmap.mmap):  # not a view of one
        source: str | int | None = _HELD.get(rows.base)
        if source is None and rows.filename:
            source = str(rows.filename)
        whole = rows.mode == "r" and rows.offset == 0 and source is not None
        return (source, len(rows)) if whole else None
    base: object = rows
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    found = getattr(base, "awai_file", None)
    if not isinstance(found, tuple) or rows.ctypes.data != ctypes.addressof(base):  # type: ignore[arg-type]
        return None  # not ours, or a view that does not start at the first row
    return found


def _descriptor(rows: np.ndarray) -> int | None:
    """The descriptor by which the map under ``rows`` holds its file, if it is one of ours."""
    base: object = rows
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, mmap.mmap):
        return _HELD.get(base)
    if isinstance(base, memoryview):
        base = base.obj
    found = getattr(base, "awai_file", None)
    return found[0] if isinstance(found, tuple) else None


def _release(address: int, length: int, descriptor: int, owner: int) -> None:
    _LIBC.munmap(address, length)
    _let_file_go(descriptor, owner)


def _let_file_go(descriptor: int, owner: int) -> None:
    """Close a mapping's descriptor; if its file was unlinked (shredded while mapped) and no
    other mapping holds it, zero it first: the shred left that to its last holder.

    The exclusive lock is taken before the file is looked at, so a shred that unlinks it
    meanwhile either is seen here or finds the lock free once this has closed. A forked child
    (``owner`` is the process that mapped it) shares the parent's lock: it only closes its
    copy, never zeros the file under the parent."""
    try:
        # The lock first, then the look (see above).
        if os.getpid() == owner and _exclusive(descriptor) and os.fstat(descriptor).st_nlink == 0:
            _zero_held(descriptor)
    except OSError:  # a read-only folder: the blocks are freed as they are
        pass
    finally:
        os.close(descriptor)


def _zero_held(descriptor: int) -> None:
    """Zero an unlinked file through a holder's descriptor: directly if it was opened for
    writing, else through /proc (Linux)."""
    try:
        _zero(descriptor)
    except OSError:
        writer = os.open(f"/proc/self/fd/{descriptor}", os.O_WRONLY)
        try:
            _zero(writer)
        finally:
            os.close(writer)


def _exclusive(descriptor: int) -> bool:
    """Whether the file's lock could be taken exclusively now (no mapping holds it)."""
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _zero(descriptor: int) -> None:
    """Zeros over the whole file, synced."""
    size = os.fstat(descriptor).st_size
    for offset in range(0, size, len(_ZEROS)):
        os.pwrite(descriptor, _ZEROS[: min(len(_ZEROS), size - offset)], offset)
    os.fsync(descriptor)


def _copied(rows: np.ndarray, used: int, capacity: int) -> np.ndarray:
    array = np.empty((capacity, *rows.shape[1:]), dtype=rows.dtype)
    array[:used] = rows[:used]
    return array


def _pages(size: int) -> int:
    return max(mmap.PAGESIZE, -(-size // mmap.PAGESIZE) * mmap.PAGESIZE)
