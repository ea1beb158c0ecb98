"""Re-embedding a channel with another model: a new collection, then one switch in SQL.

The old vectors stay in use until one SQL transaction records the new collection, model and
dimension (and bumps the revision, so every cached read model rebuilds); a crash before it leaves
the channel as it was plus an unused collection.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from sqlalchemy import select

from storage.batches import batches
from storage.errors import StorageError
from storage.parts import StorePart
from storage.queries import bump_revision, channel_row
from storage.sql import ThoughtRow, UtteranceRow
from storage.vectors import (
    WRITE_BATCH,
    collection_name,
    vector_id,
    vector_metadata,
)


class Reembedder(StorePart):
    def reembed(
        self,
        channel: str,
        embedding_model: str,
        dimension: int,
        encode: Callable[[list[str]], np.ndarray],
        progress: Callable[[int, int], None] | None = None,
        batch: int = 256,
    ) -> int:
        """Re-embed every thought of the channel into a new collection, then switch to it.

        Refused if the channel changed meanwhile (another process wrote to it). Returns the number
        of thoughts embedded; ``progress`` gets (thoughts done, thoughts in all) after each batch.
        """
        with self.locks(channel):
            with self.db.read() as session:
                row = channel_row(self.db, session, channel)
                old, revision = row.collection, row.revision
                thoughts = session.execute(
                    select(
                        UtteranceRow.message_id,
                        UtteranceRow.speaker_id,
                        ThoughtRow.idx,
                        ThoughtRow.text,
                    )
                    .join(ThoughtRow)
                    .where(UtteranceRow.channel_id == row.id)
                    .order_by(UtteranceRow.id, ThoughtRow.idx)
                ).all()
            new = f"{collection_name(channel)[:490]}-{time.time_ns():x}"
            self.vectors.create(new, channel)
            done = 0
            for part in batches(thoughts, batch):
                self.vectors.upsert(
                    new,
                    [vector_id(t.message_id, t.idx) for t in part],
                    encode([t.text for t in part]),
                    [vector_metadata(t.message_id, t.idx, t.speaker_id) for t in part],
                )
                done += len(part)
                if progress:
                    progress(done, len(thoughts))
            with self.db.session() as session:
                row = channel_row(self.db, session, channel)
                if row.revision != revision:
                    self.vectors.drop(new)
                    raise StorageError(
                        f"Channel {channel!r} changed while it was re-embedded; run it again"
                        " with the bots stopped."
                    )
                row.collection = new
                row.embedding_model, row.dimension = embedding_model, dimension
                bump_revision(session, row.id)
            self.vectors.drop(old)
            self.read_model.forget(channel)
            return len(thoughts)

    def compact(self, channel: str) -> int:
        """Copy the channel's live vectors into a new collection and drop the old one.

        Why (see :mod:`storage.erasures`): Chroma's log keeps every vector ever written, and its
        metadata, until its index is flushed; dropping the collection is what removes a deleted
        vector's log rows. The copy is switched to in one SQL transaction, refused (and done again
        by the next finish) if the channel changed meanwhile. Returns the vectors copied (0 for a
        channel that is gone).
        """
        with self.locks(channel):
            with self.db.read() as session:
                row = self.db.channel(session, channel)
                if row is None:
                    return 0
                old, revision = row.collection, row.revision
                thoughts = session.execute(
                    select(UtteranceRow.message_id, UtteranceRow.speaker_id, ThoughtRow.idx)
                    .join(ThoughtRow)
                    .where(UtteranceRow.channel_id == row.id)
                    .order_by(UtteranceRow.id, ThoughtRow.idx)
                ).all()
            stored = self.vectors.all_vectors(old)
            kept = [t for t in thoughts if vector_id(t.message_id, t.idx) in stored]
            new = f"{collection_name(channel)[:490]}-{time.time_ns():x}"
            self.vectors.create(new, channel)
            for part in batches(kept, WRITE_BATCH):
                self.vectors.upsert(
                    new,
                    [vector_id(t.message_id, t.idx) for t in part],
                    np.vstack([stored[vector_id(t.message_id, t.idx)] for t in part]),
                    [vector_metadata(t.message_id, t.idx, t.speaker_id) for t in part],
                )
            with self.db.session() as session:
                row = channel_row(self.db, session, channel)
                if row.revision != revision:
                    self.vectors.drop(new)
                    raise StorageError(
                        f"Channel {channel!r} changed while its vectors were compacted; the next"
                        " start or `awai doctor --repair` does it again."
                    )
                row.collection = new
            self.vectors.drop(old)
            return len(kept)
