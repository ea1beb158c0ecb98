"""A lock file shared across processes: ``flock`` on a file, waited for and released by the kernel.

The one implementation of every cross-process lock of an embedded data folder (the writer lock of
terminal commands and bots, the read model's per-channel folders): an ``flock`` is released when
its process ends, even killed, so a crash never leaves a data folder locked. A holder may say who
it is: its line is kept in the lock file while it holds the lock, so that a process that finds it
taken can tell whom it waits for (the line of a holder killed stays behind, but is only read
while the lock is held, and the next holder replaces it at once).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from storage.errors import DiskFullError

POLL_SECONDS = 0.2


@contextlib.contextmanager
def locked(
    path: Path,
    exclusive: bool = True,
    on_wait: Callable[[str], None] | None = None,
    holder: str = "",
    folder: Path | None = None,
) -> Iterator[None]:
    """Hold the lock on ``path`` (created, with its folder, if missing) while the block runs.

    ``on_wait`` is called with the current holder's line (empty when it gave none) when another
    process holds the lock, and again whenever the holder changes while this one waits; it may
    raise to give up waiting. ``holder``: this process's line, kept in the file while it holds
    an exclusive lock. ``folder``: the data folder a full disk met here is reported for (by
    default the lock file's own folder)."""
    folder = folder or path.parent
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    with _full_disk_named(folder):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a")
    with handle:
        _take(handle.fileno(), mode, path, on_wait)
        try:
            if holder and exclusive:
                with _full_disk_named(folder):
                    _say(handle.fileno(), holder)
            yield
        finally:
            if holder and exclusive:
                _say(handle.fileno(), "")  # emptying frees space: a full disk cannot refuse it
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def _full_disk_named(folder: Path) -> Iterator[None]:
    """A lock is often a command's first write, so a full disk met there is named with the
    data folder, as storage names it everywhere else."""
    try:
        yield
    except OSError as error:
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DiskFullError(folder, error.strerror) from None
        raise


def holder_of(path: Path) -> str | None:
    """The line of whoever holds the lock on ``path`` exclusively now (empty if it gave none),
    ``None`` when nobody does (or the file does not exist). Taking and dropping a shared lock
    answers it: only an exclusive holder makes that fail."""
    try:
        handle = path.open("r", encoding="utf-8", errors="replace")
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _line(path)
        fcntl.flock(handle, fcntl.LOCK_UN)
        return None


def _take(fd: int, mode: int, path: Path, on_wait: Callable[[str], None] | None) -> None:
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        if on_wait is None:
            fcntl.flock(fd, mode)
            return
    told: str | None = None
    while True:  # polled, so that a new holder met while waiting is told (and may be refused)
        now = _line(path)
        if now != told:
            on_wait(now)
            told = now
        time.sleep(POLL_SECONDS)
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            continue


def _say(fd: int, line: str) -> None:
    """The holder's line, written straight to the file: a buffered write refused by a full disk
    would be tried again, and fail again, when the file is closed."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, line.encode("utf-8"), 0)


def _line(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
