"""Re-embedding a channel into a new collection, then one switch in SQL: with another model,
or with the same one to rebuild an index whose files were damaged.

The old vectors stay in use until one SQL transaction records the new collection, model and
dimension (and bumps the revision, so every cached read model rebuilds); a crash before it leaves
the channel as it was plus an unused collection.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from contextlib import suppress

import numpy as np
from sqlalchemy import select, update

from storage.batches import batches
from storage.errors import StorageError
from storage.parts import StorePart
from storage.queries import bump_revision, channel_row, tombstone_ids
from storage.sql import ThoughtRow, UtteranceRow
from storage.vectors import (
    WRITE_BATCH,
    collection_name,
    vector_id,
    vector_metadata,
)

log = logging.getLogger(__name__)

# How old a copy of a channel's vectors that SQL does not name must be before it is taken for a
# crash's leftover rather than a compaction or a re-embed still running in another process
# (a re-embed of 100k messages takes minutes here).
LEFTOVER_SECONDS = 3600


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
                        ThoughtRow.idx,
                        ThoughtRow.text,
                    )
                    .join(ThoughtRow)
                    .where(UtteranceRow.channel_id == row.id)
                    .order_by(UtteranceRow.id, ThoughtRow.idx)
                ).all()
            new = f"{collection_name(channel)[:490]}-{time.time_ns():x}"
            self.vectors.create(new, channel)
            try:
                done = 0
                for part in batches(thoughts, batch):
                    self.vectors.upsert(
                        new,
                        [vector_id(t.message_id, t.idx) for t in part],
                        encode([t.text for t in part]),
                        [vector_metadata(t.message_id, t.idx) for t in part],
                    )
                    done += len(part)
                    if progress:
                        progress(done, len(thoughts))
            except BaseException:
                # The channel stays as it was; the half-made copy goes if it can (on a full disk
                # it may not, and then it is an unused collection, as after a crash).
                with suppress(Exception):
                    self.vectors.drop(new)
                raise
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
                # Every thought of every row now has its vector: a write the old index lost
                # half-way is finished too (not a row a delete is removing: it stays unseen).
                session.execute(
                    update(UtteranceRow)
                    .where(
                        UtteranceRow.channel_id == row.id,
                        UtteranceRow.message_id.not_in(tombstone_ids(row.id)),
                    )
                    .values(synced=True)
                )
                bump_revision(session, row.id)
            self.vectors.drop(old)
            self.read_model.forget(channel)
            return len(thoughts)

    def rebuild(self, channel: str, encode: Callable[[list[str]], np.ndarray]) -> int:
        """Build a damaged index again from the thoughts in SQL, with the channel's own model.

        The damaged collection is dropped first, and its files removed from the data folder:
        nothing can read them, they hold vectors, and a disk that filled once may have room for
        only one copy. Should the rebuild stop half-way, the channel names a collection that is
        gone, which the next reconciliation sees as missing vectors and embeds again. Returns
        the thoughts embedded.
        """
        with self.locks(channel):
            with self.db.read() as session:
                row = channel_row(self.db, session, channel)
                damaged, model, dimension = row.collection, row.embedding_model, row.dimension
            if model is None or dimension is None:
                raise StorageError(f"Channel {channel!r} names no embedding model to rebuild with.")
            self.vectors.drop(damaged)
            try:
                self.vectors.scrub()
            except sqlite3.OperationalError as error:  # VACUUM needs room a full disk lacks
                log.warning("Chroma's file was not vacuumed after the drop (%s)", error)
            return self.reembed(channel, model, dimension, encode)

    def drop_leftovers(self, channel: str, in_use: str | None) -> list[str]:
        """Drop the channel's collections that SQL does not name and nobody can still be
        building; returns their names.

        Those made before the one in use: a compaction killed after its switch and before its
        drop leaves the old collection, whose log still holds the vectors the removal was
        dropping it for. Those made after it and :data:`LEFTOVER_SECONDS` old: a copy killed
        before its switch (one still being built elsewhere is younger). All of them when the
        channel is gone (``in_use`` ``None``). Called by every compaction, so the removal a
        crash interrupted, finished by the next start, takes them with it.
        """
        made = self.vectors.made_for(channel)
        born = made.get(in_use, 0) if in_use is not None else time.time_ns()
        stale = time.time_ns() - LEFTOVER_SECONDS * 1_000_000_000
        doomed = [name for name, at in made.items() if name != in_use and (at < born or at < stale)]
        for name in doomed:
            log.info("dropping %s, a copy of %s's vectors no longer in use", name, channel)
            self.vectors.drop(name)
        return doomed

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
                    self.drop_leftovers(channel, None)
                    return 0
                old, revision = row.collection, row.revision
                thoughts = session.execute(
                    select(UtteranceRow.message_id, ThoughtRow.idx)
                    .join(ThoughtRow)
                    .where(UtteranceRow.channel_id == row.id)
                    .order_by(UtteranceRow.id, ThoughtRow.idx)
                ).all()
            self.drop_leftovers(channel, old)
            stored = self.vectors.vectors_of(
                old, [vector_id(t.message_id, t.idx) for t in thoughts]
            )
            kept = [t for t in thoughts if vector_id(t.message_id, t.idx) in stored]
            new = f"{collection_name(channel)[:490]}-{time.time_ns():x}"
            self.vectors.create(new, channel)
            for part in batches(kept, WRITE_BATCH):
                self.vectors.upsert(
                    new,
                    [vector_id(t.message_id, t.idx) for t in part],
                    np.vstack([stored[vector_id(t.message_id, t.idx)] for t in part]),
                    [vector_metadata(t.message_id, t.idx) for t in part],
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
