"""A writer caught between the steps of storing a message, for tests of what readers do then.

Storage writes a message in three steps (storage/writes.py: rows unsynced, vectors, rows marked
synced); readers see it only after the third. :class:`HeldWriter` stores one message in a thread
of its own and holds it before its vector upsert, as a slow Chroma server or a process that died
there would, until the test lets it go.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from awai_engine.values import Utterance
from bots.runtime import Runtime

HELD_SECONDS = 60.0
WAITING = "waiting for the writer of"
"""How :meth:`awai_engine.engine.Engine.await_write` logs that a reading waits for a writer."""


class HeldWriter:
    """A runtime storing one message whose vector upsert waits until :meth:`release`."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.holding = threading.Event()
        self._released = threading.Event()
        self._thread = threading.Thread(target=self._store, daemon=True)
        self.error: BaseException | None = None
        vectors = runtime.store.vectors
        upsert = vectors.upsert

        def held_upsert(*args: Any, **kwargs: Any) -> Any:
            self.holding.set()
            assert self._released.wait(HELD_SECONDS), "the held writer was never released"
            return upsert(*args, **kwargs)

        vectors.upsert = held_upsert  # type: ignore[method-assign]  # this runtime's only

    def start(self, message: Utterance) -> None:
        self._message = message
        self._thread.start()
        assert self.holding.wait(HELD_SECONDS), "the writer never reached its vector upsert"

    def release(self) -> None:
        self._released.set()
        self._thread.join(HELD_SECONDS)
        assert self.error is None, self.error

    def _store(self) -> None:
        try:
            self.runtime.engine.ingest([self._message])
        except BaseException as error:  # reported by release()
            self.error = error


class ReleaseWhenWaitedFor(logging.Handler):
    """Lets a held writer go once a reader logs that it waits for it, so a test knows the
    reading did wait (it cannot have found the message before the writer finished). The
    engine's logger must let INFO through (``caplog.at_level``) for the record to be made."""

    def __init__(self, writer: HeldWriter) -> None:
        super().__init__()
        self.writer = writer

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith(WAITING):
            threading.Thread(target=self.writer.release, daemon=True).start()
