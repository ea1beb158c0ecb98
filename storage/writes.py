"""Writes and deletes, in the order that keeps SQL and Chroma agreeing through a crash.

A save is three steps under the channel's lock (see :mod:`storage.store` for why this order):
rows written unsynced in one transaction that also decides what to skip, then the vectors, then
the rows marked synced and the revision bumped. A delete writes its tombstone and removes the rows
in one transaction before the vectors go, so a crash in between leaves only orphan vectors.

The lock is one process's. Another process sharing the database may delete, forget or compact
between a save's steps 1 and 3, so step 3 looks at what is there: the vectors of a message
removed meanwhile are deleted again, and vectors written to a collection a compaction dropped are
written again to the new one before any row is marked synced.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
from sqlalchemy import delete, insert, select, update
from sqlalchemy.orm import Session

from awai_engine.ports import PreparedUtterance
from storage.batches import batches
from storage.parts import StorePart
from storage.queries import (
    bump_revision,
    channel_row,
    count_removal,
    rowcount,
    tombstoned,
    utterance_row,
)
from storage.sql import (
    DeletedMessageRow,
    ThoughtRow,
    UtteranceRow,
    UtteranceVersionRow,
)
from storage.vectors import vector_id, vector_metadata

log = logging.getLogger(__name__)


@dataclass
class _WritePlan:
    """What step 1 of a save wrote: the items that need vectors, and which replaced old ones."""

    collection: str
    written: list[PreparedUtterance] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    # Withdrawn messages whose words came back: their tombstones, restored if the save fails.
    revived: list[DeletedMessageRow] = field(default_factory=list)


@dataclass(frozen=True)
class _Synced:
    """What step 3 of a save found: the channel's collection now, and the messages of the save
    that another process removed meanwhile; the channel's revision once the rows were marked
    synced (``None``: they were not, the collection had changed)."""

    collection: str
    removed: list[str]
    revision: int | None = None


def _improves(row: UtteranceRow, item: PreparedUtterance) -> bool:
    """A model's extraction of a stored message whose thoughts were an offline fallback: a
    re-extraction, written as an edit at the same position (the text stays, no version)."""
    return row.extraction_fallback and not item.extraction.fallback


_Keyed = TypeVar("_Keyed", UtteranceRow, DeletedMessageRow)


def _by_message_id(
    session: Session, table: type[_Keyed], channel_id: int, message_ids: Sequence[str]
) -> dict[str, _Keyed]:
    """The channel's rows of ``table`` for ``message_ids`` (one batch), by message id."""
    query = select(table).where(table.channel_id == channel_id, table.message_id.in_(message_ids))
    return {row.message_id: row for row in session.scalars(query)}


def _outdated(row: UtteranceRow | None, withdrawn_ts: float | None) -> bool:
    """Whether a withdrawal is older than the stored version (edited after it): a redelivered
    withdrawing edit must not take back words that a later edit put in."""
    return (
        withdrawn_ts is not None
        and row is not None
        and row.edited_ts is not None
        and row.edited_ts > withdrawn_ts
    )


def _insert_new(session: Session, channel_id: int, items: Sequence[PreparedUtterance]) -> None:
    """Rows of messages not stored before, and their thoughts: two multi-row INSERTs per batch
    instead of an ORM object and a flush per row (the ORM cost a fifth of an ingest's time).
    Ids are given in the order of ``items``, which is the channel's arrival order."""
    for batch in batches(items):
        ids = session.scalars(
            insert(UtteranceRow).returning(UtteranceRow.id, sort_by_parameter_order=True),
            [
                {
                    "channel_id": channel_id,
                    "message_id": item.utterance.message_id,
                    "speaker_id": item.utterance.speaker_id,
                    "speaker_name": item.utterance.speaker_name,
                    "text": item.utterance.text,
                    "ts": item.utterance.ts,
                    "thread_root": item.utterance.thread_root,
                    "scope": item.utterance.scope,
                    "edited_ts": item.utterance.edited_ts,
                    "addressees": json.dumps(list(item.utterance.addressees), ensure_ascii=False),
                    "summary": item.extraction.summary,
                    "extraction_fallback": item.extraction.fallback,
                    "synced": False,
                }
                for item in batch
            ],
        ).all()
        thoughts = [
            {"utterance_id": row_id, "idx": thought.index, "text": thought.text}
            for row_id, item in zip(ids, batch, strict=True)
            for thought in item.extraction.thoughts
        ]
        if thoughts:
            session.execute(insert(ThoughtRow), thoughts)


class Writes(StorePart):
    def save(self, channel: str, items: Sequence[PreparedUtterance]) -> None:
        """Store new and edited messages.

        A message whose tombstone exists is not stored; one already stored with the same text is
        left alone, and so is a version older than the stored one (an earlier ``edited_ts``, or
        none against an edit). All are decided inside the write transaction, so two threads or
        processes saving the same message store it once, and the newest version wins.
        """
        latest = {item.utterance.message_id: item for item in items}  # a repeated id: last wins
        ordered = sorted(latest.values(), key=lambda item: item.utterance.ts)  # stable on ties
        with self.locks(channel):
            plan = self._write_rows(channel, ordered)
            if not plan.written:
                return
            collection, written = plan.collection, plan.written
            self._write_vectors(channel, plan, collection, written)
            while True:
                synced = self._mark_synced(channel, collection, written)
                # What another process removed since step 1 (its lock is not ours): its delete
                # found none of the vectors written since, so they go here, or they would
                # outlive the message (the delete's transaction and this one are ordered: one of
                # the two deletes comes after the vectors were written).
                self.vectors.delete_messages(collection, synced.removed)
                if synced.collection == collection:
                    break
                # Another process compacted the channel's vectors meanwhile (a forget): what was
                # written went to the collection it dropped (the write made it again), so it goes,
                # and the vectors are written to the new one before the rows are marked synced.
                self.vectors.drop(collection)
                self.vectors.scrub()
                removed = set(synced.removed)
                written = [i for i in written if i.utterance.message_id not in removed]
                collection = synced.collection
                self._write_vectors(channel, plan, collection, written)
            # Readers see the new rows from here on; read models append them at their next read.
            # Rows rewritten in place cannot be appended: the words they replaced leave the
            # read model's file at once, cut before the first of them (the next read appends
            # the rest).
            if plan.replaced:
                self.read_model.discard(channel)
            elif synced.revision is not None and not synced.removed:
                self.read_model.appended(
                    channel, collection, synced.revision, self._as_written(collection, written)
                )

    def _as_written(
        self, collection: str, written: Sequence[PreparedUtterance]
    ) -> dict[str, np.ndarray]:
        """The thoughts' vectors as written, by vector id, if the collection gives back exactly
        what was written (else none: they are read back from it)."""
        if not self.vectors.keeps_as_given(collection):
            return {}
        return {
            vector_id(item.utterance.message_id, thought.index): vector
            for item in written
            for thought, vector in zip(item.extraction.thoughts, item.vectors, strict=True)
        }

    def _write_vectors(
        self,
        channel: str,
        plan: _WritePlan,
        collection: str,
        written: Sequence[PreparedUtterance],
    ) -> None:
        """Step 2: the old vectors of edited messages go, the new ones are written. If Chroma
        fails, the new rows of step 1 go too (see :meth:`_drop_unfinished_new`)."""
        ids, vectors, metadatas = [], [], []
        for item in written:
            message_id = item.utterance.message_id
            for thought, vector in zip(item.extraction.thoughts, item.vectors, strict=True):
                ids.append(vector_id(message_id, thought.index))
                vectors.append(vector)
                metadatas.append(vector_metadata(message_id, thought.index))
        try:
            self.vectors.delete_messages(collection, plan.replaced)
            if ids:
                self.vectors.upsert(collection, ids, np.vstack(vectors), metadatas)
        except Exception:
            replaced = set(plan.replaced)
            self._drop_unfinished_new(
                channel,
                [i.utterance.message_id for i in written if i.utterance.message_id not in replaced],
                plan.revived,
            )
            raise

    def _drop_unfinished_new(
        self, channel: str, message_ids: Sequence[str], revived: Sequence[DeletedMessageRow]
    ) -> None:
        """After step 2 failed: the new rows of step 1 go, so a message Chroma refused is not
        half stored (the caller reports it as not stored), and a withdrawn message that was to
        come back is withdrawn again (else neither row nor tombstone would keep a late copy of
        its old words out). Edited rows stay for repair, as after a crash; vectors already
        written are orphans that repair removes."""
        if not message_ids:
            return
        withdrawn = {tombstone.message_id: tombstone for tombstone in revived}
        try:
            with self.db.session() as session:
                channel_id = channel_row(self.db, session, channel).id
                for batch in batches(message_ids):
                    for row in session.scalars(
                        select(UtteranceRow).where(
                            UtteranceRow.channel_id == channel_id,
                            UtteranceRow.message_id.in_(batch),
                            UtteranceRow.synced.is_(False),
                        )
                    ):
                        session.delete(row)
                        if (tombstone := withdrawn.get(row.message_id)) is not None:
                            session.add(
                                DeletedMessageRow(
                                    channel_id=channel_id,
                                    message_id=tombstone.message_id,
                                    deleted_at=tombstone.deleted_at,
                                    withdrawn_ts=tombstone.withdrawn_ts,
                                    speaker_id=tombstone.speaker_id,
                                )
                            )
        except Exception:
            log.warning("unfinished rows of %s stay for repair", channel, exc_info=False)

    def _write_rows(self, channel: str, items: Sequence[PreparedUtterance]) -> _WritePlan:
        """Step 1: rows written unsynced, in one transaction that also decides what to skip."""
        with self.db.session() as session:
            row_of_channel = channel_row(self.db, session, channel)
            channel_id = row_of_channel.id
            plan = _WritePlan(collection=row_of_channel.collection)
            tombstones: dict[str, DeletedMessageRow] = {}
            existing: dict[str, UtteranceRow] = {}
            for batch in batches([item.utterance.message_id for item in items]):
                tombstones.update(_by_message_id(session, DeletedMessageRow, channel_id, batch))
                existing.update(_by_message_id(session, UtteranceRow, channel_id, batch))
            now = time.time()
            new: list[PreparedUtterance] = []  # inserted together after the loop, in order
            for item in items:
                utterance = item.utterance
                tombstone = tombstones.get(utterance.message_id)
                if tombstone is not None:
                    if not utterance.brings_back(tombstone.withdrawn_ts):
                        continue
                    session.delete(tombstone)  # words edited back in: stored as a new message
                    plan.revived.append(tombstone)
                    count_removal(session, channel_id)  # others drop what the withdrawal left
                row = existing.get(utterance.message_id)
                if row is None:
                    new.append(item)
                    plan.written.append(item)
                    continue
                if utterance.is_older_than(row.edited_ts):
                    continue  # a late copy of an earlier version: a retry, an old history page
                elif row.text == utterance.text and row.synced and not _improves(row, item):
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
                row.scope = utterance.scope
                if utterance.edited_ts is not None:
                    row.edited_ts = utterance.edited_ts
                row.addressees = json.dumps(list(utterance.addressees), ensure_ascii=False)
                row.summary = item.extraction.summary
                row.extraction_fallback = item.extraction.fallback
                row.synced = False
                row.thoughts.extend(
                    ThoughtRow(idx=thought.index, text=thought.text)
                    for thought in item.extraction.thoughts
                )
                plan.written.append(item)
            _insert_new(session, channel_id, new)
            return plan

    def _mark_synced(
        self, channel: str, collection: str, written: Sequence[PreparedUtterance]
    ) -> _Synced:
        """Step 3: the rows become visible to readers, if their vectors went to the channel's
        collection (else nothing is marked); says which messages were removed since step 1."""
        message_ids = [item.utterance.message_id for item in written]
        with self.db.session() as session:
            row_of_channel = channel_row(self.db, session, channel)
            channel_id = row_of_channel.id
            stored: set[str] = set()
            for batch in batches(message_ids):
                stored.update(
                    session.scalars(
                        select(UtteranceRow.message_id).where(
                            UtteranceRow.channel_id == channel_id,
                            UtteranceRow.message_id.in_(batch),
                        )
                    )
                )
            synced = _Synced(row_of_channel.collection, [m for m in message_ids if m not in stored])
            if synced.collection != collection:
                return synced
            for batch in batches(sorted(stored)):
                session.execute(
                    update(UtteranceRow)
                    .where(
                        UtteranceRow.channel_id == channel_id,
                        UtteranceRow.message_id.in_(batch),
                    )
                    .values(synced=True)
                )
            return _Synced(synced.collection, synced.removed, bump_revision(session, channel_id))

    def delete(self, channel: str, message_id: str, withdrawn_ts: float | None = None) -> bool:
        """Remove a message from every store and keep it out; ``False`` if it was not there.

        With ``withdrawn_ts`` (the platform's time of an edit that took the words off it) a later
        edit may bring the message back; without, it is out for good, a withdrawn one included.
        """
        with self.locks(channel):
            with self.db.session() as session:
                row_of_channel = self.db.channel(session, channel)
                if row_of_channel is None:
                    return False
                channel_id = row_of_channel.id
                row = utterance_row(session, channel_id, message_id)
                if _outdated(row, withdrawn_ts):
                    return False  # a late copy of the withdrawing edit: the words came back since
                tombstone = session.get(DeletedMessageRow, (channel_id, message_id))
                if tombstone is None:
                    session.add(
                        DeletedMessageRow(
                            channel_id=channel_id,
                            message_id=message_id,
                            withdrawn_ts=withdrawn_ts,
                            # so the speaker's forget-me finds a withdrawal and makes it for good
                            speaker_id=None
                            if withdrawn_ts is None or row is None
                            else row.speaker_id,
                        )
                    )
                    count_removal(session, channel_id)
                elif tombstone.withdrawn_ts is not None:
                    # Deleted after a withdrawal: for good. Withdrawn again: from the later edit.
                    if withdrawn_ts is None:
                        tombstone.withdrawn_ts, tombstone.speaker_id = None, None
                    else:
                        tombstone.withdrawn_ts = max(withdrawn_ts, tombstone.withdrawn_ts)
                    count_removal(session, channel_id)
                if row is not None:
                    session.delete(row)
                    bump_revision(session, channel_id)
                collection = row_of_channel.collection
            # After the commit: a crash here leaves orphan vectors, which reconciliation removes.
            self.vectors.delete_messages(collection, [message_id])
            self.read_model.discard(channel)
        return row is not None

    def delete_speaker(self, channel: str, speaker_id: str) -> list[str]:
        """Remove every message of one speaker (rows, thoughts, edit history, vectors) for good.

        One transaction writes the tombstones and deletes the rows, unsynced ones included, and
        makes the speaker's withdrawals for good, so none of the speaker's messages can come back,
        not even by a later edit; their vectors go after it. Returns the ids of the rows deleted.
        """
        with self.locks(channel):
            with self.db.session() as session:
                row_of_channel = self.db.channel(session, channel)
                if row_of_channel is None:
                    return []
                channel_id = row_of_channel.id
                mine = (UtteranceRow.channel_id == channel_id) & (
                    UtteranceRow.speaker_id == speaker_id
                )
                ids = list(session.scalars(select(UtteranceRow.message_id).where(mine)))
                for batch in batches(ids):
                    known = tombstoned(session, channel_id, batch)
                    session.add_all(
                        DeletedMessageRow(channel_id=channel_id, message_id=message_id)
                        for message_id in batch
                        if message_id not in known
                    )
                session.execute(delete(UtteranceRow).where(mine))
                withdrawn = rowcount(
                    session.execute(
                        update(DeletedMessageRow)
                        .where(
                            DeletedMessageRow.channel_id == channel_id,
                            DeletedMessageRow.speaker_id == speaker_id,
                        )
                        .values(withdrawn_ts=None, speaker_id=None)
                    )
                )
                if ids:
                    bump_revision(session, channel_id)
                if ids or withdrawn:
                    count_removal(session, channel_id)
                collection = row_of_channel.collection
            self.vectors.delete_messages(collection, ids)
            self.read_model.discard(channel)
        return ids
