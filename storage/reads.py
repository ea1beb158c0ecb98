"""What ingest, export and a waiting reading read from the record: stored texts, tombstones,
every message, whether a write is under way.

Ingest asks before it extracts anything, so a redelivered or deleted message costs no model call;
these reads see unsynced rows too (they are the record), unlike the read model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence

from sqlalchemy import select

from awai_engine.values import Utterance
from storage.batches import IN_BATCH, batches
from storage.queries import channel_row
from storage.sql import ChannelRow, Database, DeletedMessageRow, UtteranceRow


class Reads:
    def __init__(self, database: Database) -> None:
        self.db = database

    def write_under_way(self, channel: str, message_id: str) -> str | None:
        """The scope of the message if its row is written but not yet synced, so readers do not
        see it yet: a writer is between its steps (or died there, and its restart finishes it).
        ``None`` when it is synced, not stored, or set aside (no thought to write vectors for)."""
        with self.db.read() as session:
            row = self.db.channel(session, channel)
            if row is None:
                return None
            return session.scalar(
                select(UtteranceRow.scope).where(
                    UtteranceRow.channel_id == row.id,
                    UtteranceRow.message_id == message_id,
                    UtteranceRow.synced.is_(False),
                    UtteranceRow.thoughts.any(),
                )
            )

    def stored_texts(self, channel: str, message_ids: Sequence[str]) -> dict[str, str]:
        """Current text of the given messages that are stored (absent ids are new)."""
        found: dict[str, str] = {}
        with self.db.read() as session:
            row = self.db.channel(session, channel)
            if row is None:
                return found
            for batch in batches(message_ids):
                query = select(UtteranceRow.message_id, UtteranceRow.text).where(
                    UtteranceRow.channel_id == row.id, UtteranceRow.message_id.in_(batch)
                )
                found.update((message_id, text) for message_id, text in session.execute(query))
        return found

    def stored_edit_times(
        self, channel: str, message_ids: Sequence[str]
    ) -> dict[str, float | None]:
        """The platform edit time of each stored message's text (``None``: never edited)."""
        found: dict[str, float | None] = {}
        with self.db.read() as session:
            row = self.db.channel(session, channel)
            if row is None:
                return found
            for batch in batches(message_ids):
                query = select(UtteranceRow.message_id, UtteranceRow.edited_ts).where(
                    UtteranceRow.channel_id == row.id, UtteranceRow.message_id.in_(batch)
                )
                found.update((message_id, edited) for message_id, edited in session.execute(query))
        return found

    def tombstones(self, channel: str, message_ids: Sequence[str]) -> dict[str, float | None]:
        """The deleted among ``message_ids``, each with its withdrawal's edit time (``None``:
        deleted for good; see :meth:`Utterance.brings_back`)."""
        found: dict[str, float | None] = {}
        with self.db.read() as session:
            row = self.db.channel(session, channel)
            if row is None:
                return found
            for batch in batches(message_ids):
                query = select(DeletedMessageRow.message_id, DeletedMessageRow.withdrawn_ts).where(
                    DeletedMessageRow.channel_id == row.id, DeletedMessageRow.message_id.in_(batch)
                )
                found.update(
                    (message_id, withdrawn) for message_id, withdrawn in session.execute(query)
                )
        return found

    def removal_mark(self) -> str:
        """Every channel's removal count with its row's incarnation, as one digest: a deletion,
        a withdrawal or its undoing, a forget-me, or a channel dropped or made again changes it,
        and nothing changes it back (a count of tombstones would: a withdrawal undone within one
        check leaves it as it was)."""
        digest = hashlib.sha256()
        with self.db.read() as session:
            rows = session.execute(
                select(ChannelRow.id, ChannelRow.incarnation, ChannelRow.removals).order_by(
                    ChannelRow.id
                )
            )
            for channel_id, incarnation, removals in rows:
                digest.update(f"{channel_id}:{incarnation}:{removals};".encode())
        return digest.hexdigest()

    def fallback_utterances(self, channel: str) -> list[Utterance]:
        """Stored messages whose thoughts were made offline as a fallback, in channel order."""
        with self.db.read() as session:
            row = self.db.channel(session, channel)
            if row is None:
                return []
            rows = session.scalars(
                select(UtteranceRow)
                .where(
                    UtteranceRow.channel_id == row.id,
                    UtteranceRow.extraction_fallback.is_(True),
                    UtteranceRow.synced.is_(True),
                )
                .order_by(UtteranceRow.ts, UtteranceRow.id)
            )
            return [stored_utterance(channel, stored) for stored in rows]

    def utterances(self, channel: str) -> Iterator[Utterance]:
        """Every stored message of the channel in channel order, current text (for export)."""
        with self.db.read() as session:
            channel_id = channel_row(self.db, session, channel).id
            rows = session.scalars(
                select(UtteranceRow)
                .where(UtteranceRow.channel_id == channel_id)
                .order_by(UtteranceRow.ts, UtteranceRow.id)
                .execution_options(yield_per=IN_BATCH)
            )
            for row in rows:
                yield stored_utterance(channel, row)


def stored_utterance(channel: str, row: UtteranceRow) -> Utterance:
    """The message a stored row holds (its current text), as ingest took it in."""
    return Utterance(
        channel=channel,
        message_id=row.message_id,
        speaker_id=row.speaker_id,
        speaker_name=row.speaker_name,
        text=row.text,
        ts=row.ts,
        thread_root=row.thread_root,
        addressees=row.addressee_names(),
        scope=row.scope,
        edited_ts=row.edited_ts,  # saved again (a re-extraction), it is not an older version
    )
