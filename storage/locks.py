"""Per-channel write locks: writers of one channel take turns, channels write in parallel.

In-process only: across processes the SQL write transaction is what serialises (see
:mod:`storage.sql`); this lock keeps one process's three write steps of a channel together.
"""

from __future__ import annotations

import threading


class ChannelLocks:
    def __init__(self) -> None:
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    def __call__(self, channel: str) -> threading.RLock:
        """The channel's lock (re-entrant: a part holding it may call another part that takes it)."""
        with self._guard:
            return self._locks.setdefault(channel, threading.RLock())
