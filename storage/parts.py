"""What every writing part of the store works on, handed over once.

The store is split by job (channels, writes, repair, re-embedding); each of those jobs touches
the same four things: the SQL record, the channel's vectors, the per-channel locks and the cached
read model. One base keeps that wiring in one place, so a fifth shared resource is one edit.
"""

from __future__ import annotations

from storage.locks import ChannelLocks
from storage.read_model import ReadModel
from storage.sql import Database
from storage.vectors import ChromaVectors


class StorePart:
    def __init__(
        self,
        database: Database,
        vectors: ChromaVectors,
        locks: ChannelLocks,
        read_model: ReadModel,
    ) -> None:
        self.db = database
        self.vectors = vectors
        self.locks = locks
        self.read_model = read_model
