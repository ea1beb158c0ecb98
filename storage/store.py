"""The store the engine talks to: SQL as the record, Chroma for vectors, a cached read model.

Write order (what keeps the two stores agreeing through a crash):
1. SQL, one transaction: the utterance, its thoughts and summary, ``synced = false`` (an edit also
   keeps the old text as a version). Tombstones and already-stored rows are checked inside that
   same transaction, so a redelivered message is a no-op and a deleted one never comes back.
2. Chroma: the old vectors of an edited message are removed and the new ones written;
3. SQL, one transaction: ``synced = true`` and the channel's revision bumped.
A delete removes the SQL rows and writes a tombstone first (one transaction), then removes the
vectors. Readers see only synced rows. Every crash point therefore leaves a state
:mod:`awai_engine.reconcile` recognises: an unsynced row (finish it: re-embed its thoughts), or
vectors no thought accounts for (remove them). Each step is idempotent, so a step interrupted and
done again (a redelivered event, a second repair) ends in the same state.

Threads: writers of one channel take turns on a per-channel lock held across the three steps
(channels write in parallel); SQL transactions are short and never wait on Chroma (see
:mod:`storage.sql` for how SQLite writers of several threads and processes are serialised).
Readers take no lock unless the cached read model must be rebuilt. The cache is a
:class:`~awai_engine.timeline.Timeline` tagged with the channel's revision, a counter in SQL bumped
with ``revision = revision + 1`` by every change readers must see; an edit does not bump it until
its vectors are written, so a message being edited stays readable (as it was) meanwhile. A writer
appends its new messages to the cached timeline in place only if the revision it bumped from is
the one the cache holds (nothing else, not even another process, changed the channel in between);
otherwise the cache is dropped and rebuilt on the next read.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from awai_engine.embedding_backends import configuration_for
from awai_engine.ports import ChannelInfo, PreparedUtterance
from awai_engine.reconcile import ChannelAudit, PendingMessage
from awai_engine.settings import RecallIndexSettings, Settings
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef, Thought, Utterance
from storage.schemas import SqlSchemaStore
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

IN_BATCH = 500


class StorageError(RuntimeError):
    """Storage cannot be used as configured; the message says what to change."""


class EmbeddingMismatchError(StorageError):
    """The channel's vectors were made by another model than the one configured now."""


@dataclass(frozen=True)
class _RowState:
    message: PendingMessage
    synced: bool
    vector_ids: tuple[str, ...]


@dataclass
class _WritePlan:
    """What step 1 of a save wrote: the items that need vectors, and which replaced old ones."""

    collection: str
    written: list[PreparedUtterance] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)


class AwaiStore:
    def __init__(
        self,
        database: Database,
        vectors: ChromaVectors,
        recall_index: RecallIndexSettings | None = None,
    ) -> None:
        self.db = database
        self.vectors = vectors
        self.recall_index = recall_index or RecallIndexSettings()
        self.cursors = BackfillCursors(database)
        self.claims = Claims(database)
        self.schemas = SqlSchemaStore(database)
        self._timelines: dict[str, Timeline] = {}
        self._locks: dict[str, threading.RLock] = {}
        self._locks_guard = threading.Lock()

    @classmethod
    def open(cls, settings: Settings) -> AwaiStore:
        """Open (creating if needed) the configured SQL database and Chroma: the embedded folder,
        or the Chroma server of ``settings.chroma_url``."""
        embedded = settings.chroma_url is None
        if settings.database_url is None or (embedded and settings.chroma_path is None):
            _check_writable(settings.data_dir)
        if embedded:
            _check_writable(settings.resolved_chroma_path())
        try:
            database = Database(settings.resolved_database_url())
        except Exception as error:
            raise StorageError(
                f"Cannot open the database {_without_password(settings.resolved_database_url())}:"
                f" {error}"
            ) from error
        try:
            vectors = (
                ChromaVectors.embedded(settings.resolved_chroma_path())
                if settings.chroma_url is None
                else ChromaVectors.server(settings.chroma_url)
            )
        except Exception as error:
            database.dispose()
            raise StorageError(
                f"Cannot use the Chroma server at {settings.chroma_url} (AWAI_CHROMA_URL): {error}"
                if settings.chroma_url
                else f"Cannot open Chroma in {settings.resolved_chroma_path()}: {error}"
            ) from error
        return cls(database, vectors, settings.recall_index)

    def close(self) -> None:
        self.db.dispose()

    def lock(self, channel: str) -> threading.RLock:
        """The per-channel write lock: writers of one channel take turns, channels run in parallel."""
        with self._locks_guard:
            return self._locks.setdefault(channel, threading.RLock())

    # -- channels ------------------------------------------------------------------------------

    def ensure_channel(self, channel: str, embedding_model: str, dimension: int) -> ChannelInfo:
        with self.db.read() as session:
            row = self.db.channel(session, channel)
        if row is None:
            # The collection first: a crash before the row leaves an empty collection that the
            # next attempt reuses, never a channel row without its collection.
            self.vectors.create(collection_name(channel), channel)
            with self.db.session() as session:
                row = self.db.channel(session, channel)  # another writer may have won
                if row is None:
                    row = ChannelRow(
                        key=channel,
                        collection=collection_name(channel),
                        embedding_model=embedding_model,
                        dimension=dimension,
                        revision=0,
                    )
                    session.add(row)
        if (row.embedding_model, row.dimension) != (embedding_model, dimension):
            raise EmbeddingMismatchError(
                f"Channel {channel!r} was embedded with {row.embedding_model!r}"
                f" ({row.dimension} dimensions), but the configured model is {embedding_model!r}"
                f" ({dimension}). Set {configuration_for(row.embedding_model or '')} or re-embed"
                f" the channel with the configured model: `awai reembed {channel}`."
            )
        return ChannelInfo(row.key, row.embedding_model, row.dimension)

    def channels(self) -> list[str]:
        with self.db.read() as session:
            return list(session.scalars(select(ChannelRow.key).order_by(ChannelRow.key)))

    def channel_info(self, channel: str) -> ChannelInfo | None:
        with self.db.read() as session:
            row = self.db.channel(session, channel)
            return ChannelInfo(row.key, row.embedding_model, row.dimension) if row else None

    # -- reads for ingest ----------------------------------------------------------------------

    def stored_texts(self, channel: str, message_ids: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        with self.db.read() as session:
            row = self.db.channel(session, channel)
            if row is None:
                return found
            for start in range(0, len(message_ids), IN_BATCH):
                query = select(UtteranceRow.message_id, UtteranceRow.text).where(
                    UtteranceRow.channel_id == row.id,
                    UtteranceRow.message_id.in_(message_ids[start : start + IN_BATCH]),
                )
                found.update((row[0], row[1]) for row in session.execute(query))
        return found

    def deleted_ids(self, channel: str, message_ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        with self.db.read() as session:
            row = self.db.channel(session, channel)
            if row is None:
                return found
            for start in range(0, len(message_ids), IN_BATCH):
                found.update(_tombstoned(session, row.id, message_ids[start : start + IN_BATCH]))
        return found

    def utterances(self, channel: str) -> Iterator[Utterance]:
        """Every stored message of the channel in channel order, current text (for export)."""
        with self.db.read() as session:
            channel_row = self._channel_row(session, channel)
            rows = session.scalars(
                select(UtteranceRow)
                .where(UtteranceRow.channel_id == channel_row.id)
                .order_by(UtteranceRow.ts, UtteranceRow.id)
                .execution_options(yield_per=IN_BATCH)
            )
            for row in rows:
                yield Utterance(
                    channel=channel,
                    message_id=row.message_id,
                    speaker_id=row.speaker_id,
                    speaker_name=row.speaker_name,
                    text=row.text,
                    ts=row.ts,
                    thread_root=row.thread_root,
                    addressees=row.addressee_names(),
                )

    # -- writes --------------------------------------------------------------------------------

    def save(self, channel: str, items: Sequence[PreparedUtterance]) -> None:
        """Store new and edited messages (see the module docstring for the write order).

        A message whose tombstone exists is not stored; one already stored with the same text is
        left alone. Both are decided inside the write transaction, so two threads or processes
        saving the same message store it once.
        """
        latest = {item.utterance.message_id: item for item in items}  # a repeated id: last wins
        ordered = sorted(latest.values(), key=lambda item: item.utterance.ts)  # stable on ties
        with self.lock(channel):
            plan = self._write_rows(channel, ordered)
            if not plan.written:
                return
            ids, vectors, metadatas = [], [], []
            for item in plan.written:
                for thought, vector in zip(item.extraction.thoughts, item.vectors, strict=True):
                    ids.append(vector_id(item.utterance.message_id, thought.index))
                    vectors.append(vector)
                    metadatas.append(
                        _metadata(
                            item.utterance.message_id, thought.index, item.utterance.speaker_id
                        )
                    )
            self.vectors.delete_messages(plan.collection, plan.replaced)
            self.vectors.upsert(plan.collection, ids, np.vstack(vectors), metadatas)
            prior = self._mark_synced(channel, [item.utterance.message_id for item in plan.written])
            self._update_cached_timeline(channel, plan, prior)

    def _write_rows(self, channel: str, items: Sequence[PreparedUtterance]) -> _WritePlan:
        """Step 1: rows written unsynced, in one transaction that also decides what to skip."""
        with self.db.session() as session:
            channel_row = self._channel_row(session, channel)
            plan = _WritePlan(collection=channel_row.collection)
            message_ids = [item.utterance.message_id for item in items]
            tombstoned: set[str] = set()
            existing: dict[str, UtteranceRow] = {}
            for start in range(0, len(message_ids), IN_BATCH):
                batch = message_ids[start : start + IN_BATCH]
                tombstoned.update(_tombstoned(session, channel_row.id, batch))
                existing.update(
                    (row.message_id, row)
                    for row in session.scalars(
                        select(UtteranceRow).where(
                            UtteranceRow.channel_id == channel_row.id,
                            UtteranceRow.message_id.in_(batch),
                        )
                    )
                )
            now = time.time()
            for item in items:
                utterance = item.utterance
                if utterance.message_id in tombstoned:
                    continue
                row = existing.get(utterance.message_id)
                if row is None:
                    row = UtteranceRow(channel_id=channel_row.id, message_id=utterance.message_id)
                    session.add(row)
                elif row.text == utterance.text and row.synced:
                    continue  # redelivered, or saved meanwhile by another writer
                else:
                    if row.text != utterance.text:  # an edit; else an interrupted write redone
                        row.versions.append(UtteranceVersionRow(text=row.text, replaced_at=now))
                        row.edited_at = now
                    plan.replaced.append(utterance.message_id)
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
                plan.written.append(item)
            return plan

    def _mark_synced(self, channel: str, message_ids: Sequence[str]) -> int:
        """Step 3: the rows become visible to readers; returns the revision bumped from."""
        with self.db.session() as session:
            channel_row = self._channel_row(session, channel)
            for start in range(0, len(message_ids), IN_BATCH):
                session.execute(
                    update(UtteranceRow)
                    .where(
                        UtteranceRow.channel_id == channel_row.id,
                        UtteranceRow.message_id.in_(message_ids[start : start + IN_BATCH]),
                    )
                    .values(synced=True)
                )
            return _bump_revision(session, channel_row.id) - 1

    def delete(self, channel: str, message_id: str) -> bool:
        with self.lock(channel):
            with self.db.session() as session:
                channel_row = self.db.channel(session, channel)
                if channel_row is None:
                    return False
                row = session.scalars(
                    select(UtteranceRow).where(
                        UtteranceRow.channel_id == channel_row.id,
                        UtteranceRow.message_id == message_id,
                    )
                ).one_or_none()
                if session.get(DeletedMessageRow, (channel_row.id, message_id)) is None:
                    session.add(DeletedMessageRow(channel_id=channel_row.id, message_id=message_id))
                if row is not None:
                    session.delete(row)
                    _bump_revision(session, channel_row.id)
                collection = channel_row.collection
            # After the commit: a crash here leaves orphan vectors, which reconciliation removes.
            self.vectors.delete_messages(collection, [message_id])
            self._timelines.pop(channel, None)
        return row is not None

    def delete_speaker(self, channel: str, speaker_id: str) -> list[str]:
        """Remove every message of one speaker (rows, thoughts, edit history, vectors) for good.

        One transaction writes the tombstones and deletes the rows, unsynced ones included, so
        none of the speaker's messages can come back; their vectors go after it. Returns the ids.
        """
        with self.lock(channel):
            with self.db.session() as session:
                channel_row = self.db.channel(session, channel)
                if channel_row is None:
                    return []
                mine = (UtteranceRow.channel_id == channel_row.id) & (
                    UtteranceRow.speaker_id == speaker_id
                )
                ids = list(session.scalars(select(UtteranceRow.message_id).where(mine)))
                for start in range(0, len(ids), IN_BATCH):
                    part = ids[start : start + IN_BATCH]
                    known = _tombstoned(session, channel_row.id, part)
                    session.add_all(
                        DeletedMessageRow(channel_id=channel_row.id, message_id=message_id)
                        for message_id in part
                        if message_id not in known
                    )
                session.execute(delete(UtteranceRow).where(mine))
                if ids:
                    _bump_revision(session, channel_row.id)
                collection = channel_row.collection
            for start in range(0, len(ids), IN_BATCH):
                self.vectors.delete_messages(collection, ids[start : start + IN_BATCH])
            self._timelines.pop(channel, None)
        return ids

    def _channel_row(self, session: Session, channel: str) -> ChannelRow:
        row = self.db.channel(session, channel)
        if row is None:
            raise StorageError(f"Unknown channel {channel!r}.")
        return row

    # -- the read model ------------------------------------------------------------------------

    def timeline(self, channel: str) -> Timeline:
        cached = self._timelines.get(channel)
        if cached is not None and cached.revision == self._revision(channel):
            return cached
        with self.lock(channel):
            cached = self._timelines.get(channel)
            if cached is None or cached.revision != self._revision(channel):
                cached = self._build_timeline(channel)
                self._timelines[channel] = cached
            return cached

    def _revision(self, channel: str) -> int:
        with self.db.read() as session:
            revision = session.scalar(select(ChannelRow.revision).where(ChannelRow.key == channel))
        return -1 if revision is None else revision

    def _build_timeline(self, channel: str) -> Timeline:
        """Read the synced rows and their revision from one snapshot, then their vectors."""
        with self.db.read() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return Timeline(dimension=0, revision=-1)
            revision = channel_row.revision
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
        timeline = Timeline(dimension=dimension, revision=revision, index=self.recall_index)
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

    def _update_cached_timeline(self, channel: str, plan: _WritePlan, prior: int) -> None:
        """Append newest messages to the cached read model in place; otherwise let it rebuild."""
        cached = self._timelines.get(channel)
        items = plan.written
        appendable = (
            cached is not None
            and cached.revision == prior
            and not plan.replaced
            and (not cached.messages or items[0].utterance.ts >= cached.messages[-1].ref.ts)
        )
        if not appendable or cached is None:
            self._timelines.pop(channel, None)
            return
        try:
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
        except Exception:
            self._timelines.pop(channel, None)
            raise
        cached.revision = prior + 1

    # -- reconciliation (see awai_engine.reconcile) --------------------------------------------

    def audit(self, channel: str, thorough: bool) -> ChannelAudit:
        """What disagrees between SQL and Chroma; only counts unless ``thorough`` or they differ."""
        with self.db.read() as session:
            channel_row = self._channel_row(session, channel)
            unsynced = _count(session, channel_row.id, UtteranceRow.synced.is_(False))
            thought_count = session.scalar(
                select(func.count(ThoughtRow.id))
                .join(UtteranceRow)
                .where(UtteranceRow.channel_id == channel_row.id)
            )
            doomed = session.scalar(
                select(func.count(UtteranceRow.id)).where(
                    UtteranceRow.channel_id == channel_row.id,
                    UtteranceRow.message_id.in_(_tombstone_ids(channel_row.id)),
                )
            )
            collection = channel_row.collection
        if (
            not thorough
            and not unsynced
            and not doomed
            and thought_count == self.vectors.count(collection)
        ):
            return ChannelAudit(channel=channel, thorough=False)
        return self._full_audit(channel, collection)

    def _full_audit(self, channel: str, collection: str) -> ChannelAudit:
        # Order matters with writers running: a synced row's vectors were written before it was
        # marked, so rows read *before* the ids are missing vectors only if they really are; a
        # vector's row was written before it, so ids read *before* the rows are orphans only if
        # no row accounts for them.
        synced_before = {
            row.message.message_id: row for row in self._row_states(channel) if row.synced
        }
        present = set(self.vectors.all_ids(collection))
        rows = self._row_states(channel)
        expected = {vector for row in rows for vector in row.vector_ids}
        unsynced, missing = [], []
        for row in rows:
            if not row.synced:
                unsynced.append(row.message)
            elif synced_before.get(row.message.message_id) == row and not present.issuperset(
                row.vector_ids
            ):
                missing.append(row.message)
        with self.db.read() as session:
            channel_id = self._channel_row(session, channel).id
            doomed = session.scalars(
                select(UtteranceRow.message_id).where(
                    UtteranceRow.channel_id == channel_id,
                    UtteranceRow.message_id.in_(_tombstone_ids(channel_id)),
                )
            ).all()
        return ChannelAudit(
            channel=channel,
            thorough=True,
            unsynced=tuple(unsynced),
            missing=tuple(missing),
            orphans=tuple(sorted(present - expected)),
            deleted_rows=tuple(doomed),
        )

    def _row_states(self, channel: str) -> list[_RowState]:
        """Every row's thoughts, vector ids and synced flag, from one snapshot."""
        with self.db.read() as session:
            channel_id = self._channel_row(session, channel).id
            rows = session.execute(
                select(
                    UtteranceRow.id,
                    UtteranceRow.message_id,
                    UtteranceRow.synced,
                    UtteranceRow.edited_at,
                ).where(UtteranceRow.channel_id == channel_id)
            ).all()
            thoughts: dict[int, list[tuple[int, str]]] = {}
            for utterance_id, idx, text in session.execute(
                select(ThoughtRow.utterance_id, ThoughtRow.idx, ThoughtRow.text)
                .join(UtteranceRow)
                .where(UtteranceRow.channel_id == channel_id)
                .order_by(ThoughtRow.utterance_id, ThoughtRow.idx)
            ):
                thoughts.setdefault(utterance_id, []).append((idx, text))
        states = []
        for row in rows:
            own = thoughts.get(row.id, [])
            states.append(
                _RowState(
                    message=PendingMessage(
                        row.message_id, tuple(text for _, text in own), row.edited_at is not None
                    ),
                    synced=bool(row.synced),
                    vector_ids=tuple(vector_id(row.message_id, idx) for idx, _ in own),
                )
            )
        return states

    def complete(self, channel: str, message: PendingMessage, vectors: np.ndarray) -> bool:
        """Write a message's vectors and mark it synced, if its thoughts are still ``message``'s.

        ``False`` (and nothing marked) when the row is gone or its thoughts changed meanwhile:
        the writer that changed it writes its vectors, or the next reconciliation does.
        """
        with self.lock(channel):
            with self.db.read() as session:
                channel_row = self._channel_row(session, channel)
                row = self._row(session, channel_row.id, message.message_id)
                if row is None or _thought_texts(row) != message.thoughts:
                    return False
                ids = [vector_id(message.message_id, t.idx) for t in row.thoughts]
                metadatas = [
                    _metadata(message.message_id, t.idx, row.speaker_id) for t in row.thoughts
                ]
                collection = channel_row.collection
                first_extra = max((t.idx for t in row.thoughts), default=-1) + 1
            self.vectors.upsert(collection, ids, vectors, metadatas)
            self.vectors.delete_thoughts_from(collection, message.message_id, first_extra)
            with self.db.session() as session:
                channel_id = self._channel_row(session, channel).id
                row = self._row(session, channel_id, message.message_id)
                if row is None or _thought_texts(row) != message.thoughts:
                    return False  # edited by another process between our two transactions
                row.synced = True
                _bump_revision(session, channel_id)
            self._timelines.pop(channel, None)
            return True

    def remove_vectors(self, channel: str, ids: Sequence[str]) -> int:
        """Remove the given vectors that no SQL thought accounts for (checked again, locked)."""
        with self.lock(channel):
            owners = sorted({_owner(i) for i in ids})
            with self.db.read() as session:
                channel_row = self._channel_row(session, channel)
                expected: set[str] = set()
                for start in range(0, len(owners), IN_BATCH):
                    expected.update(
                        vector_id(message_id, idx)
                        for message_id, idx in session.execute(
                            select(UtteranceRow.message_id, ThoughtRow.idx)
                            .join(ThoughtRow)
                            .where(
                                UtteranceRow.channel_id == channel_row.id,
                                UtteranceRow.message_id.in_(owners[start : start + IN_BATCH]),
                            )
                        )
                    )
                collection = channel_row.collection
            doomed = [i for i in ids if i not in expected]
            self.vectors.delete_ids(collection, doomed)
            return len(doomed)

    def finish_deletes(self, channel: str, message_ids: Sequence[str]) -> int:
        """Delete the rows (and vectors) of messages that have a tombstone."""
        with self.lock(channel):
            with self.db.session() as session:
                channel_row = self._channel_row(session, channel)
                doomed = list(_tombstoned(session, channel_row.id, list(message_ids)))
                session.execute(
                    delete(UtteranceRow).where(
                        UtteranceRow.channel_id == channel_row.id,
                        UtteranceRow.message_id.in_(doomed),
                    )
                )
                if doomed:
                    _bump_revision(session, channel_row.id)
                collection = channel_row.collection
            self.vectors.delete_messages(collection, doomed)
            self._timelines.pop(channel, None)
            return len(doomed)

    def _row(self, session: Session, channel_id: int, message_id: str) -> UtteranceRow | None:
        return session.scalars(
            select(UtteranceRow).where(
                UtteranceRow.channel_id == channel_id, UtteranceRow.message_id == message_id
            )
        ).one_or_none()

    # -- housekeeping --------------------------------------------------------------------------

    def message_count(self, channel: str) -> int:
        with self.db.read() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return 0
            return _count(session, channel_row.id)

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

        The old vectors stay in use until one SQL transaction records the new collection, model
        and dimension (and bumps the revision, so every cached read model rebuilds); a crash
        before it leaves the channel as it was plus an unused collection. Refused if the channel
        changed meanwhile (another process wrote to it). Returns the number of thoughts embedded;
        ``progress`` gets (thoughts done, thoughts in all) after each batch.
        """
        with self.lock(channel):
            with self.db.read() as session:
                channel_row = self._channel_row(session, channel)
                old, revision = channel_row.collection, channel_row.revision
                thoughts = session.execute(
                    select(
                        UtteranceRow.message_id,
                        UtteranceRow.speaker_id,
                        ThoughtRow.idx,
                        ThoughtRow.text,
                    )
                    .join(ThoughtRow)
                    .where(UtteranceRow.channel_id == channel_row.id)
                    .order_by(UtteranceRow.id, ThoughtRow.idx)
                ).all()
            new = f"{collection_name(channel)[:490]}-{time.time_ns():x}"
            self.vectors.create(new, channel)
            for start in range(0, len(thoughts), batch):
                part = thoughts[start : start + batch]
                self.vectors.upsert(
                    new,
                    [vector_id(t.message_id, t.idx) for t in part],
                    encode([t.text for t in part]),
                    [_metadata(t.message_id, t.idx, t.speaker_id) for t in part],
                )
                if progress:
                    progress(start + len(part), len(thoughts))
            with self.db.session() as session:
                channel_row = self._channel_row(session, channel)
                if channel_row.revision != revision:
                    self.vectors.drop(new)
                    raise StorageError(
                        f"Channel {channel!r} changed while it was re-embedded; run it again"
                        " with the bots stopped."
                    )
                channel_row.collection = new
                channel_row.embedding_model, channel_row.dimension = embedding_model, dimension
                _bump_revision(session, channel_row.id)
            self.vectors.drop(old)
            self._timelines.pop(channel, None)
            return len(thoughts)


def _owner(vector: str) -> str:
    """The message id inside a vector id (``<message id>#<thought index>``)."""
    return vector.rsplit("#", 1)[0]


def _metadata(message_id: str, index: int, speaker_id: str) -> dict[str, str | int | float]:
    return {"message_id": message_id, "thought": index, "speaker_id": speaker_id}


def _thought_texts(row: UtteranceRow) -> tuple[str, ...]:
    return tuple(thought.text for thought in row.thoughts)


def _bump_revision(session: Session, channel_id: int) -> int:
    """``revision = revision + 1`` in SQL (never a lost update between processes); the new value."""
    return session.execute(
        update(ChannelRow)
        .where(ChannelRow.id == channel_id)
        .values(revision=ChannelRow.revision + 1)
        .returning(ChannelRow.revision)
    ).scalar_one()


def _tombstone_ids(channel_id: int):  # type: ignore[no-untyped-def]
    return select(DeletedMessageRow.message_id).where(DeletedMessageRow.channel_id == channel_id)


def _tombstoned(session: Session, channel_id: int, message_ids: Sequence[str]) -> set[str]:
    return set(
        session.scalars(
            _tombstone_ids(channel_id).where(DeletedMessageRow.message_id.in_(message_ids))
        )
    )


def _count(session: Session, channel_id: int, *conditions) -> int:  # type: ignore[no-untyped-def]
    return (
        session.scalar(
            select(func.count(UtteranceRow.id)).where(
                UtteranceRow.channel_id == channel_id, *conditions
            )
        )
        or 0
    )


def _without_password(url: str) -> str:
    """A database URL fit for an error message."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "(the configured AWAI_DATABASE_URL)"


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
