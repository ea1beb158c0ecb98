"""A lock file shared across processes: ``flock`` on a file, waited for and released by the kernel.

The one implementation of every cross-process lock of an embedded data folder (the writer lock of
terminal commands, the read model's per-channel folders): an ``flock`` is released when its process
ends, even killed, so a crash never leaves a data folder locked.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def locked(
    path: Path, exclusive: bool = True, on_wait: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold the lock on ``path`` (created, with its folder, if missing) while the block runs;
    ``on_wait`` is called once when another process holds it and this one has to wait."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(handle, mode)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
