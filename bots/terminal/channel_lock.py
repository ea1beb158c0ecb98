"""One terminal command at a time stores a transcript into a channel of an embedded data folder.

Two ``awai import`` (or ``ingest``, ``read``) of one channel at once each open their own embedded
Chroma client on the channel's one vector index: the second's index does not hold the ids the
first just wrote, and its writes fail with "Error finding id", refusing hundreds of messages that
were never wrong. So a command takes the channel's lock file before it stores, and a second one
waits for the first to finish, saying so once; it then finds the messages stored and adds nothing
twice. The lock is an ``flock``: the kernel releases it when its process ends, even killed, so a
crash never leaves a channel locked. A Chroma server orders its own writers: no lock then.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
from collections.abc import Callable, Iterator

from awai_engine.settings import Settings
from bots.terminal.visible import one_line

LOCKS_FOLDER = "locks"


@contextlib.contextmanager
def storing_into(settings: Settings, channel: str, notify: Callable[[str], None]) -> Iterator[None]:
    """Hold ``channel``'s store lock while the block runs, waiting (told through ``notify``)
    while another process holds it."""
    if settings.chroma_url is not None:
        yield
        return
    folder = settings.data_dir / LOCKS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(channel.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    with (folder / f"{name}.lock").open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            notify(
                f"Another awai command is storing into {one_line(channel)}: waiting for it to"
                " finish (Ctrl-C stops waiting; nothing is stored twice)."
            )
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
