"""One process at a time writes into an embedded data folder; a command waits, a bot is refused.

Each process opens its own embedded Chroma client, and opening it already checks every channel
against SQL and repairs what disagrees (:func:`bots.runtime.open_runtime`). A second process
opened while a first is storing holds a stale copy of the vector indexes: it takes the first's
half-done writes for a crash to repair, and its own writes fail with "Error finding id" or damage
the index. So every process that writes — the terminal commands that store, ``awai doctor
--repair``, ``awai db upgrade``, and the Slack and Discord bots — takes the data folder's writer
lock *before* it opens anything, and says in the lock file who it is (:mod:`storage.file_lock`).

A command that finds the lock taken by another command waits for it to finish, saying once whom
it waits for; it then sees everything the first stored and adds nothing twice. A bot holds the
lock for as long as it runs, so waiting for one would never end: a command or a second bot that
finds a bot holding the lock is refused at once (exit 2), with the bot named and what to do. The
lock is released by the kernel when its process ends, even killed. A Chroma server orders its own
writers: no lock then. A data folder that cannot hold a lock file (read-only) cannot be written
either: the command opens it unlocked and says what it cannot write as it would have.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from awai_engine.settings import Settings
from bots.runtime import Runtime, open_runtime
from bots.terminal.say import warn
from bots.terminal.visible import one_line
from storage.errors import StorageError
from storage.file_lock import holder_of, locked

WRITER_LOCK = Path("locks") / "writer.lock"


class FolderInUseError(StorageError):
    """A bot holds the data folder's writer lock, so this process may not write into it."""


@dataclass(frozen=True)
class Holder:
    """Who holds the writer lock, as kept in the lock file."""

    command: str
    """What runs, as typed: ``awai ingest``, ``awai slack``."""
    pid: int
    since: float
    until_stopped: bool
    """A bot: it holds the lock for as long as it runs."""

    def line(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def parse(cls, line: str) -> Holder | None:
        """The holder a lock file names; ``None`` for an empty or foreign line."""
        try:
            found = json.loads(line)
            return cls(
                str(found["command"]),
                int(found["pid"]),
                float(found["since"]),
                bool(found["until_stopped"]),
            )
        except (ValueError, TypeError, KeyError):
            return None

    def named(self) -> str:
        started = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(self.since))
        return f"{one_line(self.command)} (process {self.pid}, running since {started})"


@contextlib.contextmanager
def writing_runtime(settings: Settings, command: str) -> Iterator[Runtime]:
    """The runtime of a command that writes (``command``, e.g. ``ingest``), opened and used under
    the data folder's writer lock (waiting, told once, while another command holds it), closed at
    the end. What opening it repaired is told one notice a line, a channel name's newlines shown
    as escapes."""
    with (
        writer_lock(settings, command),
        contextlib.closing(
            open_runtime(settings, notify=lambda said: warn(one_line(said)))
        ) as runtime,
    ):
        yield runtime


@contextlib.contextmanager
def writer_lock(settings: Settings, command: str, until_stopped: bool = False) -> Iterator[None]:
    """Hold the data folder's writer lock while the block runs, as ``awai {command}``; no lock
    with a Chroma server or on a folder that cannot hold the lock file. Raises
    :class:`FolderInUseError` when a bot holds it."""
    path = settings.data_dir / WRITER_LOCK
    if settings.chroma_url is not None or not _can_hold(path):
        yield
        return
    me = Holder(f"awai {command}", os.getpid(), time.time(), until_stopped)
    with locked(
        path,
        on_wait=lambda line: _wait_or_refuse(settings.data_dir, line),
        holder=me.line(),
        folder=settings.data_dir,
    ):
        yield


def writer(settings: Settings) -> Holder | None:
    """Who writes into the embedded data folder right now (``None``: nobody, or a Chroma
    server); a holder that did not say who it is is named as an unknown awai process."""
    if settings.chroma_url is not None:
        return None
    line = holder_of(settings.data_dir / WRITER_LOCK)
    if line is None:
        return None
    return Holder.parse(line) or Holder("another awai process", 0, time.time(), False)


def _wait_or_refuse(data_dir: Path, line: str) -> None:
    holder = Holder.parse(line)
    if holder is not None and holder.until_stopped:
        raise FolderInUseError(
            f"{holder.named()} writes into {data_dir} for as long as it runs, and an embedded"
            " data folder takes one writer at a time. Stop it (Ctrl-C or SIGTERM) and run this"
            " again, or use another --data-dir; for several processes on one store, use a"
            " Chroma server and PostgreSQL (deploy/README.md)."
        )
    who = holder.named() if holder is not None else "Another awai command"
    warn(
        f"{who} is writing into {data_dir}: waiting for it to finish"
        " (Ctrl-C stops waiting; nothing is stored twice)."
    )


def _can_hold(path: Path) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:  # read-only: nothing will be written, so nothing to order
        return False
    return True
