"""One terminal command at a time writes into an embedded data folder; the next one waits.

Each command opens its own embedded Chroma client, and opening it already checks every channel
against SQL and repairs what disagrees (:func:`bots.runtime.open_runtime`). A second command
opened while a first is storing holds a stale copy of the vector indexes: it takes the first's
half-done writes for a crash to repair, and its own writes fail with "Error finding id". So a
command that writes takes the data folder's writer lock *before* it opens the runtime, and a
second one waits for the first to finish, saying so once; it then sees everything the first
stored and adds nothing twice. The lock is released by the kernel when its process ends, even
killed (:mod:`storage.file_lock`). A Chroma server orders its own writers: no lock then. A data
folder that cannot hold a lock file (read-only) cannot be written either: the command opens it
unlocked and says what it cannot write as it would have.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from awai_engine.settings import Settings
from bots.runtime import Runtime, open_runtime
from bots.terminal.say import warn
from bots.terminal.visible import one_line
from storage.file_lock import locked

WRITER_LOCK = Path("locks") / "writer.lock"


@contextlib.contextmanager
def writing_runtime(settings: Settings) -> Iterator[Runtime]:
    """The runtime of a command that writes, opened and used under the data folder's writer
    lock (waiting, told once, while another command holds it), closed at the end. What opening
    it repaired is told one notice a line, a channel name's newlines shown as escapes."""
    with (
        _writer_lock(settings),
        contextlib.closing(
            open_runtime(settings, notify=lambda said: warn(one_line(said)))
        ) as runtime,
    ):
        yield runtime


@contextlib.contextmanager
def _writer_lock(settings: Settings) -> Iterator[None]:
    path = settings.data_dir / WRITER_LOCK
    if settings.chroma_url is not None or not _can_hold(path):
        yield
        return
    with locked(path, on_wait=lambda: warn(_waiting(settings.data_dir))):
        yield


def _can_hold(path: Path) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:  # read-only: nothing will be written, so nothing to order
        return False
    return True


def _waiting(data_dir: Path) -> str:
    return (
        f"Another awai command is writing into {data_dir}: waiting for it to finish"
        " (Ctrl-C stops waiting; nothing is stored twice)."
    )
