"""The store the engine talks to: SQL as the record, Chroma for vectors, a cached read model.

:class:`AwaiStore` is a facade over parts with one job each: :mod:`storage.channels`,
:mod:`storage.reads` (what ingest and export read), :mod:`storage.writes` (saves and deletes),
:mod:`storage.read_model` (the cached timelines, persisted by :mod:`storage.read_model_files`), :mod:`storage.repair` (the store's side of
reconciliation) and :mod:`storage.reembed`. They share one database, one Chroma, one set of
per-channel locks (:mod:`storage.locks`) and one read model; this module says how they fit.

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
Readers take no lock unless the cached read model must change. The cache is a
:class:`~awai_engine.timeline.Timeline` tagged with the channel's revision, a counter in SQL bumped
with ``revision = revision + 1`` by every change readers must see; an edit does not bump it until
its vectors are written, so a message being edited stays readable (as it was) meanwhile. When the
revision moved, the next read appends the rows added since, whichever process wrote them, and
rebuilds only after a change other than an append (see :mod:`storage.read_model`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from awai_engine.ports import ChannelInfo, PreparedUtterance
from awai_engine.reconcile import ChannelAudit, PendingMessage
from awai_engine.settings import ReadModelSettings, RecallIndexSettings, Settings
from awai_engine.text_caches import forget_cached_texts
from awai_engine.timeline import Timeline
from awai_engine.values import Utterance
from storage.channels import Channels
from storage.erasures import Erasures, PendingErasure
from storage.errors import EmbeddingMismatchError, StorageError
from storage.locks import ChannelLocks
from storage.opening import open_backends
from storage.posts import SqlPostStore
from storage.read_model import ReadModel
from storage.reads import Reads
from storage.reembed import Reembedder
from storage.repair import Repair
from storage.schemas import SqlSchemaStore
from storage.scopes import ThreadScopes
from storage.sql import Database
from storage.state import BackfillCursors, Claims
from storage.transcript_files import TranscriptFiles
from storage.vectors import ChromaVectors
from storage.writes import Writes

__all__ = ["AwaiStore", "EmbeddingMismatchError", "StorageError"]


class AwaiStore:
    """Everything kept for the engine and the adapters, behind the engine's ``Store`` port."""

    def __init__(
        self,
        database: Database,
        vectors: ChromaVectors,
        recall_index: RecallIndexSettings | None = None,
        read_model: ReadModelSettings | None = None,
        read_model_dir: Path | None = None,
        writable: bool = True,
    ) -> None:
        """``read_model_dir``: where channels' read models persist (none: memory only)."""
        self.db = database
        self.vectors = vectors
        self.cursors = BackfillCursors(database)
        self.claims = Claims(database)
        self.schemas = SqlSchemaStore(database)
        self.lock = ChannelLocks()
        self.read_model = ReadModel(
            database,
            vectors,
            self.lock,
            recall_index or RecallIndexSettings(),
            read_model,
            read_model_dir,
            writable,
        )
        self._channels = Channels(database, vectors, self.lock, self.read_model)
        self._reads = Reads(database)
        self._writes = Writes(database, vectors, self.lock, self.read_model)
        self._repair = Repair(database, vectors, self.lock, self.read_model)
        self._reembedder = Reembedder(database, vectors, self.lock, self.read_model)
        self.posts = SqlPostStore(database)
        self.transcript_files = TranscriptFiles(database)
        self._scopes = ThreadScopes(database, self.lock, self.read_model)
        self.erasures = Erasures(
            database, self._reembedder.compact, vectors.scrub, self.read_model.discard
        )

    @classmethod
    def open(cls, settings: Settings, read_only: bool = False) -> AwaiStore:
        """Open (creating if needed) the configured SQL database and Chroma: the embedded folder,
        or the Chroma server of ``settings.chroma_url``. ``read_only``: for looking only, and then
        a data folder that cannot be written opens too (see :func:`storage.opening.open_backends`)."""
        database, vectors = open_backends(settings, read_only)
        folder = settings.data_dir / "read-models" if settings.read_model.persist else None
        return cls(
            database,
            vectors,
            settings.recall_index,
            settings.read_model,
            folder,
            writable=not read_only,  # a command that only looks writes no file
        )

    def close(self) -> None:
        """Leave the read models current on disk (:meth:`ReadModel.flush`), then release SQL."""
        self.read_model.flush()
        self.db.dispose()

    # -- channels (storage.channels) -----------------------------------------------------------

    def ensure_channel(self, channel: str, embedding_model: str, dimension: int) -> ChannelInfo:
        return self._channels.ensure(channel, embedding_model, dimension)

    def channels(self) -> list[str]:
        return self._channels.keys()

    def channel_info(self, channel: str) -> ChannelInfo | None:
        return self._channels.info(channel)

    def message_count(self, channel: str) -> int:
        return self._channels.message_count(channel)

    def drop_channel(self, channel: str) -> None:
        """Remove a whole channel from both stores (uninstall, leaving a guild); the bytes Chroma
        and SQLite keep of it go at :meth:`finish_erasures`."""
        if self.channel_info(channel) is not None:
            self.erasures.begin(channel)
        self._channels.drop(channel)
        forget_cached_texts()

    # -- reads for ingest and export (storage.reads) -------------------------------------------

    def stored_texts(self, channel: str, message_ids: Sequence[str]) -> dict[str, str]:
        return self._reads.stored_texts(channel, message_ids)

    def write_under_way(self, channel: str, message_id: str) -> str | None:
        return self._reads.write_under_way(channel, message_id)

    def stored_edit_times(
        self, channel: str, message_ids: Sequence[str]
    ) -> dict[str, float | None]:
        return self._reads.stored_edit_times(channel, message_ids)

    def tombstones(self, channel: str, message_ids: Sequence[str]) -> dict[str, float | None]:
        return self._reads.tombstones(channel, message_ids)

    def fallback_utterances(self, channel: str) -> list[Utterance]:
        """Stored messages whose thoughts were made offline as a fallback, in channel order."""
        return self._reads.fallback_utterances(channel)

    def utterances(self, channel: str) -> Iterator[Utterance]:
        """Every stored message of the channel in channel order, current text (for export)."""
        return self._reads.utterances(channel)

    # -- writes and deletes (storage.writes) ---------------------------------------------------

    def save(self, channel: str, items: Sequence[PreparedUtterance]) -> None:
        """Store new and edited messages (see the module docstring for the write order)."""
        self._writes.save(channel, items)

    def delete(self, channel: str, message_id: str, withdrawn_ts: float | None = None) -> bool:
        if self.channel_info(channel) is not None:
            self.erasures.begin(channel)  # the bytes of its vectors go when it is finished
        deleted = self._writes.delete(channel, message_id, withdrawn_ts)
        forget_cached_texts()  # and its words in memory go now
        return deleted

    def delete_speaker(self, channel: str, speaker_id: str) -> list[str]:
        """Remove every message of one speaker for good; returns the ids."""
        removed = self._writes.delete_speaker(channel, speaker_id)
        forget_cached_texts()
        return removed

    # -- visibility scopes of threads (storage.scopes) ------------------------------------------

    def thread_scopes(self, channel: str) -> dict[str, frozenset[str]]:
        return self._scopes.of_threads(channel)

    def rescope_thread(self, channel: str, thread_root: str, scope: str) -> int:
        return self._scopes.set_thread(channel, thread_root, scope)

    # -- the read model (storage.read_model) ---------------------------------------------------

    def timeline(self, channel: str) -> Timeline:
        return self.read_model.timeline(channel)

    def removal_mark(self) -> str:
        return self._reads.removal_mark()

    def drop_outdated_timelines(self) -> list[str]:
        return self.read_model.drop_outdated()

    def holds_timeline(self, channel: str) -> bool:
        return self.read_model.holds(channel)

    def on_timeline_released(self, listener: Callable[[str], None]) -> None:
        self.read_model.on_release(listener)

    # -- reconciliation (storage.repair, driven by awai_engine.reconcile) ----------------------

    def audit(self, channel: str, thorough: bool) -> ChannelAudit:
        return self._repair.audit(channel, thorough)

    def complete(self, channel: str, message: PendingMessage, vectors: np.ndarray) -> bool:
        return self._repair.complete(channel, message, vectors)

    def remove_vectors(self, channel: str, ids: Sequence[str]) -> int:
        return self._repair.remove_vectors(channel, ids)

    def finish_deletes(self, channel: str, message_ids: Sequence[str]) -> int:
        return self._repair.finish_deletes(channel, message_ids)

    def set_aside(self, channel: str, message_ids: Sequence[str]) -> None:
        self._repair.set_aside(channel, message_ids)

    def restore_thoughts(
        self,
        channel: str,
        message_ids: Sequence[str],
        prepare: Callable[[list[Utterance]], list[PreparedUtterance]],
        batch: int = 200,
    ) -> int:
        """Extract again (``prepare``: the engine's extraction) the thoughts of stored messages
        that have none, and save them at the same position, ``batch`` at a time (what is done
        stays done if a later batch fails); returns how many were restored."""
        restored = 0
        for start in range(0, len(message_ids), batch):
            reopened = self._repair.reopen_thoughtless(channel, message_ids[start : start + batch])
            if reopened:
                self._writes.save(channel, prepare(reopened))
                restored += len(reopened)
        return restored

    # -- erasure: no bytes left of what was removed (storage.erasures) -------------------------

    def begin_erasure(self, channel: str, speaker_id: str | None = None) -> None:
        self.erasures.begin(channel, speaker_id)

    def pending_erasures(self) -> list[PendingErasure]:
        return self.erasures.pending()

    def erasing(self) -> list[str]:
        return sorted({item.channel for item in self.erasures.pending()})

    def finish_erasures(self, channels: Sequence[str] | None = None) -> int:
        return self.erasures.finish(channels)

    def compact_vectors(self, channel: str) -> int:
        """Rewrite the channel's vectors into a new collection (see :mod:`storage.erasures`)."""
        return self._reembedder.compact(channel)

    def rebuild_vectors(self, channel: str, encode: Callable[[list[str]], np.ndarray]) -> int:
        """Build a damaged vector index again from the thoughts in SQL (storage.reembed)."""
        return self._reembedder.rebuild(channel, encode)

    # -- re-embedding (storage.reembed) --------------------------------------------------------

    def reembed(
        self,
        channel: str,
        embedding_model: str,
        dimension: int,
        encode: Callable[[list[str]], np.ndarray],
        progress: Callable[[int, int], None] | None = None,
        batch: int = 256,
    ) -> int:
        """Re-embed every thought of the channel into a new collection, then switch to it."""
        return self._reembedder.reembed(
            channel, embedding_model, dimension, encode, progress, batch
        )
