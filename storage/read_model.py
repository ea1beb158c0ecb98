"""The cached read model: one :class:`~awai_engine.timeline.Timeline` per channel.

The cache is tagged with the channel's revision, a counter in SQL bumped by every change readers
must see. A reader compares it (one cheap query) and rebuilds only when it moved; rebuilding reads
the synced rows and the revision from one snapshot, then the vectors. A writer appends its new
messages to the cached timeline in place only if the revision it bumped from is the one the cache
holds (nothing else, not even another process, changed the channel in between); otherwise the
cache is dropped and rebuilt on the next read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
from sqlalchemy import select

from awai_engine.ports import PreparedUtterance
from awai_engine.settings import RecallIndexSettings
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef, Thought
from storage.locks import ChannelLocks
from storage.sql import ChannelRow, Database, ThoughtRow, UtteranceRow
from storage.vectors import ChromaVectors, vector_id


class ReadModel:
    def __init__(
        self,
        database: Database,
        vectors: ChromaVectors,
        locks: ChannelLocks,
        recall_index: RecallIndexSettings,
    ) -> None:
        self.db = database
        self.vectors = vectors
        self.locks = locks
        self.recall_index = recall_index
        self._timelines: dict[str, Timeline] = {}

    def timeline(self, channel: str) -> Timeline:
        """The channel's current timeline; readers take the lock only when it must be rebuilt."""
        cached = self._timelines.get(channel)
        if cached is not None and cached.revision == self._revision(channel):
            return cached
        with self.locks(channel):
            cached = self._timelines.get(channel)
            if cached is None or cached.revision != self._revision(channel):
                cached = self._build(channel)
                self._timelines[channel] = cached
            return cached

    def forget(self, channel: str) -> None:
        """Drop the cached timeline; the next read rebuilds it from the stores."""
        self._timelines.pop(channel, None)

    def append_written(
        self, channel: str, written: Sequence[PreparedUtterance], replaced: bool, prior: int
    ) -> None:
        """Append newest messages to the cached timeline in place; otherwise let it rebuild.

        ``prior`` is the revision the writer bumped from, ``replaced`` whether the write changed
        messages already stored (an edit cannot be appended).
        """
        cached = self._timelines.get(channel)
        appendable = (
            cached is not None
            and cached.revision == prior
            and not replaced
            and (not cached.messages or written[0].utterance.ts >= cached.messages[-1].ref.ts)
        )
        if not appendable or cached is None:
            self.forget(channel)
            return
        try:
            for item in written:
                utterance = item.utterance
                ref = MessageRef(
                    message_id=utterance.message_id,
                    speaker_id=utterance.speaker_id,
                    speaker_name=utterance.speaker_name,
                    ts=utterance.ts,
                    position=len(cached.messages),
                    thread_root=utterance.thread_root,
                    scope=utterance.scope,
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
            self.forget(channel)
            raise
        cached.revision = prior + 1

    def _revision(self, channel: str) -> int:
        with self.db.read() as session:
            revision = session.scalar(select(ChannelRow.revision).where(ChannelRow.key == channel))
        return -1 if revision is None else revision

    def _build(self, channel: str) -> Timeline:
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
                    UtteranceRow.scope,
                    UtteranceRow.text,
                    UtteranceRow.summary,
                    UtteranceRow.addressees,
                    UtteranceRow.extraction_fallback,
                )
                .where(UtteranceRow.channel_id == channel_row.id, UtteranceRow.synced.is_(True))
                .order_by(UtteranceRow.ts, UtteranceRow.id)
            ).all()
            thoughts: dict[int, list[Thought]] = {}
            query = (
                select(
                    ThoughtRow.utterance_id,
                    ThoughtRow.idx,
                    ThoughtRow.text,
                    UtteranceRow.extraction_fallback,
                )
                .join(UtteranceRow)
                .where(UtteranceRow.channel_id == channel_row.id, UtteranceRow.synced.is_(True))
                .order_by(ThoughtRow.utterance_id, ThoughtRow.idx)
            )
            for utterance_id, idx, text, fallback in session.execute(query):
                thoughts.setdefault(utterance_id, []).append(
                    Thought(index=idx, text=text, fallback=fallback)
                )
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
                scope=row.scope,
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
