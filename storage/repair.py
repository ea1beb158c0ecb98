"""The store's side of reconciliation (:mod:`awai_engine.reconcile` decides what to do).

An audit says what disagrees between SQL and Chroma; the repairs finish an interrupted write,
remove vectors no thought accounts for, and finish deletes a redelivery raced. Each repair checks
again under the channel's lock that its reason still holds, since writers keep running meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from sqlalchemy import delete, func, select, update

from awai_engine.reconcile import ChannelAudit, DamagedVectorsError, PendingMessage
from awai_engine.values import Utterance
from storage.batches import batches
from storage.erasures import PendingErasureRow
from storage.parts import StorePart
from storage.queries import (
    bump_revision,
    channel_row,
    count_utterances,
    rowcount,
    thought_texts,
    tombstone_ids,
    tombstoned,
    utterance_row,
)
from storage.reads import stored_utterance
from storage.sql import ThoughtRow, UtteranceRow
from storage.vectors import vector_id, vector_metadata, vector_owner


@dataclass(frozen=True)
class _RowState:
    message: PendingMessage
    synced: bool
    vector_ids: tuple[str, ...]


class Repair(StorePart):
    def audit(self, channel: str, thorough: bool) -> ChannelAudit:
        """What disagrees between SQL and Chroma; only counts unless ``thorough`` or they differ.

        A thorough audit reads every vector, so an index that cannot give them back is found
        (``damaged``); counting finds an index Chroma cannot open at all. The count is not asked
        of Chroma when the channel's read model, current at SQL's revision, vouches for it
        (:meth:`~storage.read_model.ReadModel.vouched_thoughts`): a start that only reads then
        never opens Chroma. A removal begun and not finished is counted too.
        """
        with self.db.read() as session:
            pending = session.scalar(
                select(func.count(PendingErasureRow.id)).where(
                    PendingErasureRow.channel_key == channel
                )
            )
            stored = self.db.channel(session, channel) is not None
        if not stored:  # dropped, its removal unfinished: nothing of it left to compare
            return ChannelAudit(channel=channel, thorough=thorough, erasures_pending=pending or 0)
        try:
            found = self._audit(channel, thorough)
        except DamagedVectorsError:
            found = ChannelAudit(channel=channel, thorough=thorough, damaged=True)
        return replace(found, erasures_pending=pending or 0)

    def _audit(self, channel: str, thorough: bool) -> ChannelAudit:
        with self.db.read() as session:
            row = channel_row(self.db, session, channel)
            unsynced = count_utterances(session, row.id, UtteranceRow.synced.is_(False))
            thought_count = session.scalar(
                select(func.count(ThoughtRow.id))
                .join(UtteranceRow)
                .where(UtteranceRow.channel_id == row.id)
            )
            doomed = session.scalar(
                select(func.count(UtteranceRow.id)).where(
                    UtteranceRow.channel_id == row.id,
                    UtteranceRow.message_id.in_(tombstone_ids(row.id)),
                )
            )
            collection, revision, source = row.collection, row.revision, row.source
        if (
            not thorough
            and not unsynced
            and not doomed
            and (
                # The read model current at this revision holds a vector read from Chroma for
                # each of these thoughts: it vouches for the count without opening Chroma.
                # (An index damaged since is found by what next reads or writes its vectors,
                # and by ``awai doctor``, which always compares every id.)
                thought_count == self.read_model.vouched_thoughts(channel, revision, source)
                or thought_count == self.vectors.count(collection)
            )
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
        present = set(self.vectors.all_ids(collection, read_vectors=True))
        rows = self._row_states(channel)
        expected = {vector for row in rows for vector in row.vector_ids}
        unsynced, missing = [], []
        for row in rows:
            if not row.message.thoughts:
                continue  # lost its thoughts: nothing to embed (``thoughtless`` below)
            if not row.synced:
                unsynced.append(row.message)
            elif synced_before.get(row.message.message_id) == row and not present.issuperset(
                row.vector_ids
            ):
                missing.append(row.message)
        with self.db.read() as session:
            channel_id = channel_row(self.db, session, channel).id
            doomed = session.scalars(
                select(UtteranceRow.message_id).where(
                    UtteranceRow.channel_id == channel_id,
                    UtteranceRow.message_id.in_(tombstone_ids(channel_id)),
                )
            ).all()
        return ChannelAudit(
            channel=channel,
            thorough=True,
            unsynced=tuple(unsynced),
            missing=tuple(missing),
            orphans=tuple(sorted(present - expected)),
            deleted_rows=tuple(doomed),
            thoughtless=tuple(
                row.message.message_id
                for row in rows
                if not row.message.thoughts and row.message.message_id not in doomed
            ),
        )

    def _row_states(self, channel: str) -> list[_RowState]:
        """Every row's thoughts, vector ids and synced flag, from one snapshot."""
        with self.db.read() as session:
            channel_id = channel_row(self.db, session, channel).id
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

    def reopen_thoughtless(self, channel: str, message_ids: Sequence[str]) -> list[Utterance]:
        """The messages of ``message_ids`` that still have no thought, marked unsynced so that
        saving them again writes their thoughts (as an interrupted write is redone); in channel
        order, as stored. One that got thoughts meanwhile is left alone."""
        with self.db.session() as session:
            channel_id = channel_row(self.db, session, channel).id
            reopened: list[UtteranceRow] = []
            for batch in batches(list(message_ids)):
                reopened.extend(
                    session.scalars(
                        select(UtteranceRow).where(
                            UtteranceRow.channel_id == channel_id,
                            UtteranceRow.message_id.in_(batch),
                            ~UtteranceRow.thoughts.any(),
                        )
                    )
                )
            for row in reopened:
                row.synced = False
            return [
                stored_utterance(channel, row)
                for row in sorted(reopened, key=lambda row: (row.ts, row.id))
            ]

    def set_aside(self, channel: str, message_ids: Sequence[str]) -> None:
        """Mark messages that lost their thoughts unsynced (readers skip them; they could not be
        read anyway), so that every start finds them again until they are restored; one that
        got thoughts meanwhile is left alone. The channel's revision moves when any was: a
        timeline cached at the old one, in any process, would go on holding them."""
        with self.db.session() as session:
            channel_id = channel_row(self.db, session, channel).id
            marked = 0
            for batch in batches(list(message_ids)):
                marked += rowcount(
                    session.execute(
                        update(UtteranceRow)
                        .where(
                            UtteranceRow.channel_id == channel_id,
                            UtteranceRow.message_id.in_(batch),
                            UtteranceRow.synced.is_(True),
                            ~UtteranceRow.thoughts.any(),
                        )
                        .values(synced=False)
                    )
                )
            if marked:
                bump_revision(session, channel_id)

    def complete(self, channel: str, message: PendingMessage, vectors: np.ndarray) -> bool:
        """Write a message's vectors and mark it synced, if its thoughts are still ``message``'s.

        ``False`` (and nothing marked) when the row is gone or its thoughts changed meanwhile:
        the writer that changed it writes its vectors, or the next reconciliation does.
        """
        with self.locks(channel):
            with self.db.read() as session:
                row_of_channel = channel_row(self.db, session, channel)
                row = utterance_row(session, row_of_channel.id, message.message_id)
                if row is None or thought_texts(row) != message.thoughts:
                    return False
                ids = [vector_id(message.message_id, t.idx) for t in row.thoughts]
                metadatas = [vector_metadata(message.message_id, t.idx) for t in row.thoughts]
                collection = row_of_channel.collection
                first_extra = max((t.idx for t in row.thoughts), default=-1) + 1
            self.vectors.upsert(collection, ids, vectors, metadatas)
            self.vectors.delete_thoughts_from(collection, message.message_id, first_extra)
            with self.db.session() as session:
                channel_id = channel_row(self.db, session, channel).id
                row = utterance_row(session, channel_id, message.message_id)
                if row is None or thought_texts(row) != message.thoughts:
                    return False  # edited by another process between our two transactions
                row.synced = True
                bump_revision(session, channel_id)
            self.read_model.forget(channel)
            return True

    def remove_vectors(self, channel: str, ids: Sequence[str]) -> int:
        """Remove the given vectors that no SQL thought accounts for (checked again, locked)."""
        with self.locks(channel):
            owners = sorted({vector_owner(i) for i in ids})
            with self.db.read() as session:
                row_of_channel = channel_row(self.db, session, channel)
                expected: set[str] = set()
                for batch in batches(owners):
                    expected.update(
                        vector_id(message_id, idx)
                        for message_id, idx in session.execute(
                            select(UtteranceRow.message_id, ThoughtRow.idx)
                            .join(ThoughtRow)
                            .where(
                                UtteranceRow.channel_id == row_of_channel.id,
                                UtteranceRow.message_id.in_(batch),
                            )
                        )
                    )
                collection = row_of_channel.collection
            doomed = [i for i in ids if i not in expected]
            self.vectors.delete_ids(collection, doomed)
            return len(doomed)

    def finish_deletes(self, channel: str, message_ids: Sequence[str]) -> int:
        """Delete the rows (and vectors) of messages that have a tombstone."""
        with self.locks(channel):
            with self.db.session() as session:
                row_of_channel = channel_row(self.db, session, channel)
                channel_id = row_of_channel.id
                doomed: list[str] = []
                for batch in batches(list(message_ids)):
                    found = sorted(tombstoned(session, channel_id, batch))
                    session.execute(
                        delete(UtteranceRow).where(
                            UtteranceRow.channel_id == channel_id,
                            UtteranceRow.message_id.in_(found),
                        )
                    )
                    doomed.extend(found)
                if doomed:
                    bump_revision(session, channel_id)
                collection = row_of_channel.collection
            self.vectors.delete_messages(collection, doomed)
            self.read_model.discard(channel)
            return len(doomed)
