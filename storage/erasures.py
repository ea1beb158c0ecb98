"""The last steps of every removal, so a deleted or forgotten message leaves no bytes on disk.

Why more than ``DELETE``: both databases keep what was deleted for a while.
- Chroma keeps every write in its log (``embeddings_queue`` in ``chroma.sqlite3``: the vector
  and its metadata, the message id) until its index is flushed, which for a small collection
  can be never (``hnsw:sync_threshold``: 2,000 writes, ``storage.vectors.PERSIST_EVERY``; 1,000
  in collections made before); deleting a vector only appends a delete to that log. Dropping a collection drops its log, so the channel's live
  vectors are copied into a new collection and the old one dropped (:meth:`AwaiStore.
  compact_vectors`). Embedded, the dropped collection's index folder is removed and
  ``chroma.sqlite3`` vacuumed (Chroma's own ``chroma vacuum`` cannot run while the folder is
  open); a Chroma server's files are its operator's (see ``docs/privacy.md``).
- SQLite overwrites deleted content with zeros (``secure_delete``, set on every connection), and
  :meth:`storage.sql.Database.scrub` checkpoints and truncates the write-ahead log and vacuums,
  so no freed page keeps a deleted text.

A removal first writes a :class:`PendingErasureRow` (in its own transaction, before anything is
removed), and the row goes only when every step is done: a crash at any point leaves the row,
and the next start or ``awai doctor --repair`` finishes the work (every step is idempotent).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Float, Integer, String, delete, select
from sqlalchemy.orm import Mapped, mapped_column

from storage.sql import Base, Database
from storage.state import ClaimRow

log = logging.getLogger(__name__)


class PendingErasureRow(Base):
    """A removal whose last steps are not done yet; ``speaker_id`` when a speaker is forgotten.

    It holds the speaker's id until the forget is finished (needed to finish it), then goes.
    """

    __tablename__ = "pending_erasures"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    channel_key: Mapped[str] = mapped_column(String(512))
    speaker_id: Mapped[str | None] = mapped_column(String(255))
    requested_at: Mapped[float] = mapped_column(Float)


@dataclass(frozen=True)
class PendingErasure:
    channel: str
    speaker_id: str | None


class Erasures:
    """Records removals in progress and finishes them: vectors rewritten, files scrubbed.

    ``compact`` rewrites one channel's vectors (a no-op for a channel that is gone); ``scrub``
    removes what the vector store keeps of dropped data on disk; ``discard_read_model`` shreds
    the channel's persisted read model (:mod:`storage.read_model_files`).
    """

    def __init__(
        self,
        database: Database,
        compact: Callable[[str], object],
        scrub_vectors: Callable[[], None],
        discard_read_model: Callable[[str], None],
    ) -> None:
        self.db = database
        self._compact = compact
        self._scrub_vectors = scrub_vectors
        self._discard_read_model = discard_read_model

    def begin(self, channel: str, speaker_id: str | None = None) -> None:
        """Record a removal before it starts (a speaker's forget, or a deleted message)."""
        with self.db.session() as session:
            known = session.scalars(
                select(PendingErasureRow.id).where(
                    PendingErasureRow.channel_key == channel,
                    _speaker_is(speaker_id),
                )
            ).first()
            if known is None:
                session.add(
                    PendingErasureRow(
                        channel_key=channel, speaker_id=speaker_id, requested_at=time.time()
                    )
                )

    def pending(self, channel: str | None = None) -> list[PendingErasure]:
        with self.db.read() as session:
            query = select(PendingErasureRow.channel_key, PendingErasureRow.speaker_id).order_by(
                PendingErasureRow.id
            )
            if channel is not None:
                query = query.where(PendingErasureRow.channel_key == channel)
            return [PendingErasure(key, speaker) for key, speaker in session.execute(query)]

    def finish(self, channels: Sequence[str] | None = None) -> int:
        """Rewrite the vectors of the channels with removals pending (all, or those given),
        scrub the files, then drop their pending rows; returns how many channels were done.

        A speaker's forget must have removed their rows first (the schema service does, and
        resumes an interrupted one before calling this).
        """
        due = sorted(
            {item.channel for item in self.pending()}
            if channels is None
            else set(channels) & {item.channel for item in self.pending()}
        )
        if not due:
            return 0
        for channel in due:
            self._compact(channel)
            self._discard_read_model(channel)  # its file on disk, if a crash left one
        self._scrub_vectors()
        speakers = {
            item.speaker_id for item in self.pending() if item.speaker_id and item.channel in due
        }
        with self.db.session() as session:
            for speaker in speakers:  # a forgotten person's requests (claim keys name the asker)
                session.execute(
                    delete(ClaimRow).where(ClaimRow.key.contains(speaker, autoescape=True))
                )
            session.execute(delete(PendingErasureRow).where(PendingErasureRow.channel_key.in_(due)))
        self.db.scrub()
        log.info("finished removals in %d channel(s)", len(due))
        return len(due)


def _speaker_is(speaker_id: str | None) -> ColumnElement[bool]:
    column = PendingErasureRow.speaker_id
    return column.is_(None) if speaker_id is None else column == speaker_id
