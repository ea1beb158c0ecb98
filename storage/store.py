"""The store the engine talks to: SQL as the record, Chroma for vectors, a cached read model.

Write order (what keeps the two stores agreeing through a crash):
1. SQL: the utterance, its thoughts and summary, ``synced = false`` (an edit also keeps the old
   text as a version and un-syncs the row);
2. Chroma: the old vectors of an edited message are removed and the new ones written;
3. SQL: ``synced = true`` and the channel's revision bumped, in one transaction.
A delete removes the SQL rows and writes a tombstone first, then removes the vectors. Readers see
only synced rows, so a half-written message is invisible until reconciliation finishes it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sqlalchemy import delete, func, select, update

from awai_engine.ports import ChannelInfo, PreparedUtterance
from awai_engine.settings import Settings
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef, Thought
from storage.sql import (
    ChannelRow,
    Database,
    DeletedMessageRow,
    ThoughtRow,
    UtteranceRow,
    UtteranceVersionRow,
)
from storage.state import BackfillCursors, Claims
from storage.vectors import ChromaVectors, collection_name, vector_id


class StorageError(RuntimeError):
    """Storage cannot be used as configured; the message says what to change."""


class EmbeddingMismatchError(StorageError):
    """The channel's vectors were made by another model than the one configured now."""


@dataclass(frozen=True)
class UnsyncedMessage:
    """A message whose vectors may be missing from Chroma (a write was interrupted)."""

    message_id: str
    thoughts: tuple[str, ...]


class AwaiStore:
    def __init__(self, database: Database, vectors: ChromaVectors) -> None:
        self.db = database
        self.vectors = vectors
        self.cursors = BackfillCursors(database)
        self.claims = Claims(database)
        self._timelines: dict[str, Timeline] = {}
        self._locks: dict[str, threading.RLock] = {}
        self._locks_guard = threading.Lock()

    @classmethod
    def open(cls, settings: Settings) -> AwaiStore:
        """Open (creating if needed) the configured SQL database and embedded Chroma folder."""
        if settings.database_url is None or settings.chroma_path is None:
            _check_writable(settings.data_dir)
        chroma_path = settings.resolved_chroma_path()
        _check_writable(chroma_path)
        try:
            database = Database(settings.resolved_database_url())
        except Exception as error:
            raise StorageError(
                f"Cannot open the database {settings.resolved_database_url()}: {error}"
            ) from error
        return cls(database, ChromaVectors.embedded(chroma_path))

    def close(self) -> None:
        self.db.dispose()

    def lock(self, channel: str) -> threading.RLock:
        """The per-channel write lock: writers of one channel take turns, channels run in parallel."""
        with self._locks_guard:
            return self._locks.setdefault(channel, threading.RLock())

    # -- channels ------------------------------------------------------------------------------

    def ensure_channel(self, channel: str, embedding_model: str, dimension: int) -> ChannelInfo:
        with self.db.session() as session:
            row = self.db.channel(session, channel)
            if row is None:
                row = ChannelRow(
                    key=channel,
                    collection=collection_name(channel),
                    embedding_model=embedding_model,
                    dimension=dimension,
                    revision=0,
                )
                session.add(row)
                session.flush()
                self.vectors.create(row.collection, channel)
            elif (row.embedding_model, row.dimension) != (embedding_model, dimension):
                raise EmbeddingMismatchError(
                    f"Channel {channel!r} was embedded with {row.embedding_model!r}"
                    f" ({row.dimension} dimensions), but the configured model is {embedding_model!r}"
                    f" ({dimension}). Set AWAI_EMBEDDING__MODEL={row.embedding_model} or re-embed"
                    f" the channel with `awai reembed {channel}`."
                )
            return ChannelInfo(row.key, row.embedding_model, row.dimension)

    def channels(self) -> list[str]:
        with self.db.session() as session:
            return list(session.scalars(select(ChannelRow.key).order_by(ChannelRow.key)))

    def channel_info(self, channel: str) -> ChannelInfo | None:
        with self.db.session() as session:
            row = self.db.channel(session, channel)
            return ChannelInfo(row.key, row.embedding_model, row.dimension) if row else None

    # -- reads for ingest ----------------------------------------------------------------------

    def stored_texts(self, channel: str, message_ids: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        with self.db.session() as session:
            row = self.db.channel(session, channel)
            if row is None:
                return found
            for start in range(0, len(message_ids), 500):
                query = select(UtteranceRow.message_id, UtteranceRow.text).where(
                    UtteranceRow.channel_id == row.id,
                    UtteranceRow.message_id.in_(message_ids[start : start + 500]),
                )
                found.update((row[0], row[1]) for row in session.execute(query))
        return found

    def deleted_ids(self, channel: str, message_ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        with self.db.session() as session:
            row = self.db.channel(session, channel)
            if row is None:
                return found
            for start in range(0, len(message_ids), 500):
                query = select(DeletedMessageRow.message_id).where(
                    DeletedMessageRow.channel_id == row.id,
                    DeletedMessageRow.message_id.in_(message_ids[start : start + 500]),
                )
                found.update(session.scalars(query))
        return found

    # -- writes --------------------------------------------------------------------------------

    def save(self, channel: str, items: Sequence[PreparedUtterance]) -> None:
        ordered = sorted(items, key=lambda item: item.utterance.ts)  # stable: arrival breaks ties
        with self.lock(channel):
            collection, revision_before, edited = self._write_rows(channel, ordered)
            ids, vectors, metadatas = [], [], []
            for item in ordered:
                for thought, vector in zip(item.extraction.thoughts, item.vectors, strict=True):
                    ids.append(vector_id(item.utterance.message_id, thought.index))
                    vectors.append(vector)
                    metadatas.append(
                        {
                            "message_id": item.utterance.message_id,
                            "thought": thought.index,
                            "speaker_id": item.utterance.speaker_id,
                        }
                    )
            self.vectors.delete_messages(collection, edited)
            if ids:
                self.vectors.upsert(collection, ids, np.vstack(vectors), metadatas)
            revision = self._mark_synced(channel, [item.utterance.message_id for item in ordered])
            self._update_cached_timeline(channel, ordered, edited, revision_before, revision)

    def _write_rows(
        self, channel: str, items: Sequence[PreparedUtterance]
    ) -> tuple[str, int, list[str]]:
        """Phase 1: rows written unsynced; returns the collection, prior revision, edited ids."""
        edited: list[str] = []
        with self.db.session() as session:
            channel_row = self._channel_row(session, channel)
            existing = {
                row.message_id: row
                for row in session.scalars(
                    select(UtteranceRow).where(
                        UtteranceRow.channel_id == channel_row.id,
                        UtteranceRow.message_id.in_([i.utterance.message_id for i in items]),
                    )
                )
            }
            now = time.time()
            for item in items:
                utterance = item.utterance
                row = existing.get(utterance.message_id)
                if row is None:
                    row = UtteranceRow(channel_id=channel_row.id, message_id=utterance.message_id)
                    session.add(row)
                else:
                    edited.append(utterance.message_id)
                    row.versions.append(UtteranceVersionRow(text=row.text, replaced_at=now))
                    row.edited_at = now
                    row.thoughts.clear()
                    session.flush()
                row.speaker_id = utterance.speaker_id
                row.speaker_name = utterance.speaker_name
                row.text = utterance.text
                row.ts = utterance.ts if row.ts is None else row.ts  # an edit keeps its place
                row.thread_root = utterance.thread_root
                row.addressees = json.dumps(list(utterance.addressees), ensure_ascii=False)
                row.summary = item.extraction.summary
                row.synced = False
                row.thoughts.extend(
                    ThoughtRow(idx=thought.index, text=thought.text)
                    for thought in item.extraction.thoughts
                )
            revision_before = channel_row.revision
            if edited:  # edited rows just became invisible to readers
                channel_row.revision += 1
            return channel_row.collection, revision_before, edited

    def _mark_synced(self, channel: str, message_ids: Sequence[str]) -> int:
        """Phase 3: the rows become visible to readers."""
        with self.db.session() as session:
            channel_row = self._channel_row(session, channel)
            for start in range(0, len(message_ids), 500):
                session.execute(
                    update(UtteranceRow)
                    .where(
                        UtteranceRow.channel_id == channel_row.id,
                        UtteranceRow.message_id.in_(message_ids[start : start + 500]),
                    )
                    .values(synced=True)
                )
            channel_row.revision += 1
            return channel_row.revision

    def delete(self, channel: str, message_id: str) -> bool:
        with self.lock(channel), self.db.session() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return False
            row = session.scalars(
                select(UtteranceRow).where(
                    UtteranceRow.channel_id == channel_row.id, UtteranceRow.message_id == message_id
                )
            ).one_or_none()
            if session.get(DeletedMessageRow, (channel_row.id, message_id)) is None:
                session.add(DeletedMessageRow(channel_id=channel_row.id, message_id=message_id))
            if row is not None:
                session.delete(row)
            channel_row.revision += 1
            collection = channel_row.collection
        # After the commit: a crash here leaves orphan vectors, which reconciliation removes.
        self.vectors.delete_messages(collection, [message_id])
        self._timelines.pop(channel, None)
        return row is not None

    def _channel_row(self, session, channel: str) -> ChannelRow:  # type: ignore[no-untyped-def]
        row = self.db.channel(session, channel)
        if row is None:
            raise StorageError(f"Unknown channel {channel!r}.")
        return row

    # -- the read model ------------------------------------------------------------------------

    def timeline(self, channel: str) -> Timeline:
        revision = self._revision(channel)
        cached = self._timelines.get(channel)
        if cached is not None and cached.revision == revision:
            return cached
        with self.lock(channel):
            revision = self._revision(channel)
            cached = self._timelines.get(channel)
            if cached is None or cached.revision != revision:
                cached = self._build_timeline(channel, revision)
                self._timelines[channel] = cached
            return cached

    def _revision(self, channel: str) -> int:
        with self.db.session() as session:
            revision = session.scalar(select(ChannelRow.revision).where(ChannelRow.key == channel))
        return -1 if revision is None else revision

    def _build_timeline(self, channel: str, revision: int) -> Timeline:
        with self.db.session() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return Timeline(dimension=0, revision=revision)
            rows = session.execute(
                select(
                    UtteranceRow.id,
                    UtteranceRow.message_id,
                    UtteranceRow.speaker_id,
                    UtteranceRow.speaker_name,
                    UtteranceRow.ts,
                    UtteranceRow.thread_root,
                    UtteranceRow.text,
                    UtteranceRow.summary,
                    UtteranceRow.addressees,
                )
                .where(UtteranceRow.channel_id == channel_row.id, UtteranceRow.synced.is_(True))
                .order_by(UtteranceRow.ts, UtteranceRow.id)
            ).all()
            thoughts: dict[int, list[Thought]] = {}
            query = (
                select(ThoughtRow.utterance_id, ThoughtRow.idx, ThoughtRow.text)
                .join(UtteranceRow)
                .where(UtteranceRow.channel_id == channel_row.id, UtteranceRow.synced.is_(True))
                .order_by(ThoughtRow.utterance_id, ThoughtRow.idx)
            )
            for utterance_id, idx, text in session.execute(query):
                thoughts.setdefault(utterance_id, []).append(Thought(index=idx, text=text))
            collection, dimension = channel_row.collection, channel_row.dimension or 0
        stored = self.vectors.all_vectors(collection)
        timeline = Timeline(dimension=dimension, revision=revision)
        for row in rows:
            message_thoughts = tuple(thoughts.get(row.id, ()))
            ids = [vector_id(row.message_id, thought.index) for thought in message_thoughts]
            if not message_thoughts or any(i not in stored for i in ids):
                continue  # vectors missing: invisible until reconciliation re-embeds it
            ref = MessageRef(
                message_id=row.message_id,
                speaker_id=row.speaker_id,
                speaker_name=row.speaker_name,
                ts=row.ts,
                position=len(timeline.messages),
                thread_root=row.thread_root,
            )
            timeline.append(
                ref,
                row.text,
                row.summary,
                message_thoughts,
                np.vstack([stored[i] for i in ids]),
                tuple(json.loads(row.addressees or "[]")),
            )
        return timeline

    def _update_cached_timeline(
        self,
        channel: str,
        items: Sequence[PreparedUtterance],
        edited: Sequence[str],
        revision_before: int,
        revision: int,
    ) -> None:
        """Append newest messages to the cached read model in place; otherwise let it rebuild."""
        cached = self._timelines.get(channel)
        appendable = (
            cached is not None
            and cached.revision == revision_before
            and not edited
            and (not cached.messages or items[0].utterance.ts >= cached.messages[-1].ref.ts)
        )
        if not appendable or cached is None:
            self._timelines.pop(channel, None)
            return
        for item in items:
            utterance = item.utterance
            ref = MessageRef(
                message_id=utterance.message_id,
                speaker_id=utterance.speaker_id,
                speaker_name=utterance.speaker_name,
                ts=utterance.ts,
                position=len(cached.messages),
                thread_root=utterance.thread_root,
            )
            cached.append(
                ref,
                utterance.text,
                item.extraction.summary,
                item.extraction.thoughts,
                item.vectors,
                utterance.addressees,
            )
        cached.revision = revision

    # -- reconciliation ------------------------------------------------------------------------

    def unsynced(self, channel: str) -> list[UnsyncedMessage]:
        """Messages whose write was interrupted before their vectors were confirmed."""
        with self.db.session() as session:
            channel_row = self._channel_row(session, channel)
            rows = session.scalars(
                select(UtteranceRow).where(
                    UtteranceRow.channel_id == channel_row.id, UtteranceRow.synced.is_(False)
                )
            ).all()
            return [
                UnsyncedMessage(row.message_id, tuple(t.text for t in row.thoughts)) for row in rows
            ]

    def complete(self, channel: str, message_id: str, vectors: np.ndarray) -> None:
        """Finish an interrupted write: replace the message's vectors, then mark it synced."""
        with self.lock(channel):
            with self.db.session() as session:
                channel_row = self._channel_row(session, channel)
                row = session.scalars(
                    select(UtteranceRow).where(
                        UtteranceRow.channel_id == channel_row.id,
                        UtteranceRow.message_id == message_id,
                    )
                ).one()
                ids = [vector_id(message_id, t.idx) for t in row.thoughts]
                metadatas = [
                    {"message_id": message_id, "thought": t.idx, "speaker_id": row.speaker_id}
                    for t in row.thoughts
                ]
                collection = channel_row.collection
            self.vectors.delete_messages(collection, [message_id])
            self.vectors.upsert(collection, ids, vectors, metadatas)
            self._mark_synced(channel, [message_id])
            self._timelines.pop(channel, None)

    def orphan_vector_ids(self, channel: str) -> list[str]:
        """Vector ids in Chroma with no synced SQL thought behind them."""
        with self.db.session() as session:
            channel_row = self._channel_row(session, channel)
            expected = {
                vector_id(message_id, idx)
                for message_id, idx in session.execute(
                    select(UtteranceRow.message_id, ThoughtRow.idx)
                    .join(ThoughtRow)
                    .where(UtteranceRow.channel_id == channel_row.id)
                )
            }
            collection = channel_row.collection
        return [i for i in self.vectors.all_ids(collection) if i not in expected]

    def remove_vectors(self, channel: str, ids: Sequence[str]) -> None:
        with self.lock(channel):
            with self.db.session() as session:
                collection = self._channel_row(session, channel).collection
            self.vectors.delete_ids(collection, ids)
            self._timelines.pop(channel, None)

    def message_count(self, channel: str) -> int:
        with self.db.session() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return 0
            return (
                session.scalar(
                    select(func.count()).where(UtteranceRow.channel_id == channel_row.id)
                )
                or 0
            )

    def drop_channel(self, channel: str) -> None:
        """Remove a whole channel from both stores (uninstall, leaving a guild)."""
        with self.lock(channel):
            with self.db.session() as session:
                channel_row = self.db.channel(session, channel)
                if channel_row is None:
                    return
                collection = channel_row.collection
                session.execute(delete(ChannelRow).where(ChannelRow.id == channel_row.id))
            self.vectors.drop(collection)
            self._timelines.pop(channel, None)


def _check_writable(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".awai-write-check"
        probe.write_text("ok")
        probe.unlink()
    except OSError as error:
        raise StorageError(
            f"The data directory {path} is not writable ({error.strerror or error})."
            " Set AWAI_DATA_DIR to a folder AWAI may write to."
        ) from None
