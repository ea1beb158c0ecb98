"""The cached read model: one :class:`~awai_engine.timeline.Timeline` per channel, kept current.

The cache is tagged with the channel's revision, a counter in SQL bumped by every change readers
must see. A reader compares it (one cheap query); when it moved, the cache *catches up*: the rows
added since (ids above the last one it holds, synced) are read with their vectors and appended,
in the process that wrote them and in every other one, so a write never costs another process a
rebuild of the whole channel. Many rows at once (an ingest's batch, the rows after an edit far
back) are taken in as columns in one step (:meth:`~awai_engine.timeline.Timeline.extend`), as a
rebuild builds them, not as a value per message. A change other than an append is recognised by a fingerprint of
the rows the cache already holds (:mod:`storage.fingerprints`), read in the same snapshot as the
new rows: a delete, an edit, a row of an earlier id synced late (a slower writer, a repair) or a
new row earlier in channel order than the last cached one all change it.

Then only the rows from the first one that changed are read again (:mod:`storage.read_model_keys`):
SQL's rows are compared, position by position, with the row each cached message is; when every
one the cache holds is unchanged (a row came late, or earlier in channel order, after them) the
rest are appended in channel order. Otherwise the channel's file is cut before the first changed
row (:meth:`~storage.read_model_files.ReadModelFiles.cut`), loaded and caught up the same way, so
an edit of a recent message costs about what an append does, not a rebuild of the channel. With
no file to cut (none written yet, persistence off, a read-only folder), nothing kept (the first
message changed) or a re-embed (every vector changed), the channel is rebuilt whole.

Persisted (:mod:`storage.read_model_files`): a process that has no timeline of a channel loads
the one on disk and catches it up like a cached one, so a start reads only the rows added since
the file was written (validated by the same fingerprint: a stale file is cut, as above). The
messages the file lacks are appended to it once ``read_model.persist_every`` of them are not in
it, and when the process closes (:meth:`ReadModel.flush`, after catching the timeline up) if any
are not; every removal and edit cuts it at once (:meth:`ReadModel.discard`), so no removed or
replaced words stay on disk. A start whose file is current at SQL's revision takes it as it is
(no fingerprint, no row read) and never opens Chroma.

Memory is bounded by ``read_model.max_mb``: the channels read least recently are dropped first
(their next read rebuilds them), never the one being read.

Whatever the engine derives from a timeline (its views, the schema indexes and clusterings)
goes with it: every timeline the cache lets go of (evicted, replaced by a rebuild, forgotten,
discarded or dropped as outdated) is marked :attr:`~awai_engine.timeline.Timeline.retired`,
then the listeners registered with :meth:`ReadModel.on_release` hear of its channel. So no
words the read model dropped stay in memory elsewhere, and ``max_mb`` bounds those too.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from awai_engine import mapped_rows
from awai_engine.settings import ReadModelSettings, RecallIndexSettings
from awai_engine.timeline import MessageColumns, Timeline
from awai_engine.values import MessageRef, Thought
from storage import fingerprints
from storage.locks import ChannelLocks
from storage.read_model_files import ReadModelFiles, Snapshot, Written
from storage.read_model_keys import NO_KEYS, HeldRows, Kept, RowKeys, SyncedOrder
from storage.sql import ChannelRow, Database, ThoughtRow, UtteranceRow
from storage.vectors import ChromaVectors, vector_id

log = logging.getLogger(__name__)

# Per message, beyond its texts and the arrays: measured with tracemalloc on 10k real chat lines
# (bench.corpus). A message built as objects (TimelineMessage, MessageRef, Thoughts, their id
# strings, its entries in the timeline's lists and dicts) takes about 2.4 KB; one restored from a
# file and not read yet is only its column entries, about 0.8 KB (held on after it is built).
_BUILT_MESSAGE = 2400
_COLUMN_MESSAGE = 800
APPENDED_KEPT = 10_000
"""Vectors a process keeps of its own appends to a channel until its next catch-up (about
15 MB of MiniLM's): an ingest catches up before every batch of 1,000 messages."""
COMPACT_APPENDED = 5_000
"""Messages a cached timeline takes in (appended as objects, or extended by as columns) before
it is written out and loaded back from its file (its vectors mapped from the file, not held in
this process).

Why: an appended message costs about 5.5 KB (objects, texts, its vectors copied into memory);
restored, 0.8 KB of columns. ``awai ingest`` of 30,000 lines held the whole channel appended and
peaked at 718 MiB, growing 12 MiB every 1,000 messages. Loading back costs what opening the
channel's file costs (0.2 s at 100,000 messages), once every 5,000 appended."""
EXTENDED_FROM = 256
"""Rows from which a catch-up takes them in at once as columns (:meth:`Timeline.extend`)
rather than appending each; and at least one for every :data:`HELD_PER_EXTENDED` messages the
timeline holds.

Why: extending costs about 40 µs a row against about 100 µs appended, but also a pass over the
columns of every message held (about 10 ms at 100,000). Measured on the kept 100k channel
(``_fill`` of the channel's last messages again, best of 3 to 5): 1 row 0.5 ms appended vs
10 ms extended, 200 rows 25 vs 30 ms, 300 rows 35 vs 33 ms, 1,000 116 vs 68 ms, 5,000 480 vs
211 ms, 50,000 4.1 vs 2.2 s. Under it, a live message's catch-up costs what it did, and a
timeline kept up by small catch-ups does not gather a run of columns for each."""
HELD_PER_EXTENDED = 400


@dataclass
class _Cached:
    """A timeline and what catching it up needs: the last row id it holds and its fingerprint."""

    timeline: Timeline
    last_id: int
    fingerprint: str
    text_bytes: int = 0
    persisted: Written | None = None  # the channel's file this was read from or written to
    source: str = ""  # the channel row it was made from (ChannelRow.source)
    mapped: int = 0  # its first messages loaded from the channel's file (none if made here)
    keys: RowKeys = NO_KEYS  # which SQL row each message is (storage.read_model_keys)
    # Caught up by position past a row that came late: the pointer of its file (and of one cut
    # to its rows) does not say SQL's fingerprint, which the scheduler's check would take for a
    # change at every run; it is written at once.
    write_now: bool = False

    @property
    def in_memory(self) -> int:
        """How many of its messages this process holds itself rather than maps from a file:
        every one of a timeline built here, those taken in since of one loaded from a file
        (appended as objects, or extended by as columns: their vectors are in memory)."""
        return len(self.timeline.messages) - self.mapped

    @property
    def nbytes(self) -> int:
        """Estimated memory: every array as allocated (the cells, the word index and a mapped
        vectors file included: its pages are resident once read), texts, message objects."""
        messages = self.timeline.messages
        return (
            self.timeline.array_bytes()
            + self.text_bytes
            + _BUILT_MESSAGE * messages.built
            + _COLUMN_MESSAGE * messages.restored
        )


@dataclass
class _Appended:
    """What this process's own saves appended to a channel since its cached timeline was last
    caught up: the revision each such save left (by the one it found), and the vectors it wrote,
    by vector id (only for a collection that gives back exactly what was written,
    :meth:`ChromaVectors.keeps_as_given`).

    Why: catching up on rows this process just wrote read every one back from Chroma (its index
    loaded for it: +223 MiB at 100k messages) and checked the channel's fingerprint, a pass over
    every row of the channel, twice. When the revisions chain from the cached timeline's to
    SQL's, nothing but these appends happened since, so no row the timeline holds changed; and
    the vectors are the very bits Chroma holds."""

    collection: str
    after: dict[int, int]  # revision a save found → the revision it left
    vectors: dict[str, np.ndarray]

    def only_these_since(self, revision: int, now: int) -> bool:
        """Whether the revisions from ``revision`` to ``now`` are all this process's appends
        (at least one: an unchanged revision is no evidence of these)."""
        if revision == now:
            return False
        while revision != now and revision in self.after:
            revision = self.after[revision]
        return revision == now


@dataclass(frozen=True)
class _Row:
    id: int
    message_id: str
    speaker_id: str
    speaker_name: str
    ts: float
    thread_root: str | None
    scope: str
    text: str
    summary: str
    addressees: str | None
    edited_at: float | None


_ROW_COLUMNS: tuple[Any, ...] = (  # one per field of _Row, in order
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
    UtteranceRow.edited_at,
)


class ReadModel:
    def __init__(
        self,
        database: Database,
        vectors: ChromaVectors,
        locks: ChannelLocks,
        recall_index: RecallIndexSettings,
        settings: ReadModelSettings | None = None,
        folder: Path | None = None,
        writable: bool = True,
    ) -> None:
        """``folder``: where read models persist (none: only in memory)."""
        self.db = database
        self.files = ReadModelFiles(folder, writable) if folder is not None else None
        self.vectors = vectors
        self.locks = locks
        self.recall_index = recall_index
        self.settings = settings or ReadModelSettings()
        self._cache: OrderedDict[str, _Cached] = OrderedDict()  # least recently read first
        self._cache_guard = threading.Lock()
        self._listeners: list[Callable[[str], None]] = []
        self._appended: dict[str, _Appended] = {}  # by channel, under _cache_guard

    def on_release(self, listener: Callable[[str], None]) -> None:
        """Have ``listener(channel)`` called whenever a timeline of the channel leaves the cache,
        or the channel is forgotten (see the module): it drops what it derived from it."""
        self._listeners.append(listener)

    def appended(
        self,
        channel: str,
        collection: str,
        revision: int,
        vectors: dict[str, np.ndarray],
    ) -> None:
        """A save of this process appended rows (none replaced) to ``collection`` and left the
        channel at ``revision`` (one more than it found); ``vectors``: what it wrote, by vector
        id, if Chroma gives them back as written. Kept only while the channel is cached (its
        next catch-up uses and drops it), and dropped past :data:`APPENDED_KEPT` vectors (a bot
        that stores a channel's messages but reads none of them for a long time): that catch-up
        then checks and reads back as for any change."""
        with self._cache_guard:
            if channel not in self._cache:
                return
            known = self._appended.get(channel)
            if known is None or known.collection != collection:
                known = self._appended[channel] = _Appended(collection, {}, {})
            known.after[revision - 1] = revision
            known.vectors.update(vectors)
            if len(known.vectors) > APPENDED_KEPT:
                del self._appended[channel]

    def holds(self, channel: str) -> bool:
        """Whether a timeline of the channel is cached in memory (never builds one)."""
        with self._cache_guard:
            return channel in self._cache

    def timeline(self, channel: str) -> Timeline:
        """The channel's current timeline; readers take the lock only when it must change."""
        revision = self._revision(channel)
        cached = self._held(channel)
        if cached is not None and cached.timeline.revision == revision:
            return cached.timeline
        with self.locks(channel):
            cached = self._held(channel) or self._load(channel)
            if cached is None or not self._catch_up(channel, cached):
                cached = self._rebuilt(channel, cached)
            self._persist(channel, cached, every=1 if cached.write_now else None)
            cached = self._compacted(channel, cached)
            with self._cache_guard:
                # Retired meanwhile (a removal check dropped it while this caught it up): it is
                # returned for this one reading but not cached again; the next read rebuilds.
                replaced = None
                if not cached.timeline.retired:
                    replaced = self._cache.get(channel)
                    self._cache[channel] = cached
                    self._cache.move_to_end(channel)
                    if replaced is not None and replaced.timeline is not cached.timeline:
                        replaced.timeline.retired = True
                    else:
                        replaced = None
            if replaced is not None:
                self._released(channel)
            self._evict(keep=channel)
            return cached.timeline

    def _compacted(self, channel: str, cached: _Cached) -> _Cached:
        """``cached``, or once it holds :data:`COMPACT_APPENDED` messages in memory (appended
        as objects, or built here from SQL and Chroma), the same timeline written out and loaded
        back from its file (the one it replaces is then retired as any replaced timeline is).
        Kept as it is when its file cannot be written, or loads other than it was written."""
        timeline = cached.timeline
        if self.files is None or not self.files.writable or timeline.retired:
            return cached
        if cached.in_memory < COMPACT_APPENDED:
            return cached
        self._persist(channel, cached, every=1)
        if cached.persisted is None or cached.persisted.messages != len(timeline.messages):
            return cached
        loaded = self._load(channel)
        if loaded is None or (
            loaded.timeline.revision,
            len(loaded.timeline.messages),
            loaded.last_id,
            loaded.fingerprint,
            loaded.source,
        ) != (
            timeline.revision,
            len(timeline.messages),
            cached.last_id,
            cached.fingerprint,
            cached.source,
        ):
            return cached
        return loaded

    def forget(self, channel: str) -> None:
        """Drop the cached timeline; the next read rebuilds it from the stores. The listeners
        hear of it even if none was cached: what they derived may have outlived it."""
        with self._cache_guard:
            cached = self._cache.pop(channel, None)
            if cached is not None:
                cached.timeline.retired = True
        self._released(channel)

    def discard(self, channel: str) -> None:
        """After a removal (or an edit, which removes the words replaced): drop the cached
        timeline and cut the channel's file before the first row SQL no longer holds as it is,
        so no removed message stays on disk (:meth:`_cut`); the next read appends the rest."""
        self.forget(channel)
        self._cut(channel)

    def _cut(self, channel: str) -> bool:
        """Cut the channel's file before the first of its rows that SQL no longer holds as it
        is (shredded if that is the first, or the channel was dropped or re-embedded: every
        vector changed); whether a file holding any message is left.

        Decided under the file's lock, from one SQL snapshot: a removal committed after it cuts
        the file again once it is committed (it calls :meth:`discard`), so a cut only ever
        leaves rows that SQL held as they are at some point after the file was written."""
        if self.files is None:
            return False

        def kept(held: HeldRows, source: str) -> Kept | None:
            with self.db.read() as session:
                channel_row = self.db.channel(session, channel)
                if channel_row is None or channel_row.source != source:
                    return None
                messages = SyncedOrder.read(session, channel_row.id).first_change(held)
                revision = channel_row.revision
            if not messages:
                return None
            last_id, fingerprint = fingerprints.held_fingerprint(held, messages, source)
            return Kept(messages, revision, last_id, fingerprint)

        return self.files.cut(channel, self.recall_index, kept) is not None

    def _rebuilt(self, channel: str, stale: _Cached | None) -> _Cached:
        """The channel's timeline when ``stale`` (cached, or loaded from its file) holds a row
        that changed since: its file cut before the first changed row, loaded, and caught up
        with the rows from there on; built whole when nothing is kept (see :meth:`_cut`)."""
        if stale is not None and self._cut(channel):
            loaded = self._load(channel)
            if loaded is not None and self._catch_up(channel, loaded):
                return loaded
        if self.files is not None:
            self.files.shred(channel)  # it may hold what was removed since
        return self._build(channel)

    def drop_outdated(self) -> list[str]:
        """Drop every timeline held in memory, and cut every file (:meth:`discard`), that holds a
        row changed since other than by an append (a removal, an edit, a rescope, the channel
        dropped or its database replaced); returns the channels dropped.

        Why: a process drops its own at once when it removes a message, but another process of
        the same deployment learns of it only at its next reading of that channel. Until then
        the removed words would stay in its memory, and in its read-model files if it keeps its
        own data folder. This is the check the scheduler runs in every process. Rows appended
        are left for the next reading to catch up: dropping for them would only cost a rebuild.
        """
        with self._cache_guard:
            held = dict(self._cache)
        on_disk = self.files.channels() if self.files is not None else []
        dropped = []
        for channel in dict.fromkeys([*held, *on_disk]):
            states = []
            if channel in held:
                cached = held[channel]
                states.append((cached.timeline.revision, cached.last_id, cached.fingerprint))
            written = self.files.written_from(channel) if self.files is not None else None
            if written is not None:
                states.append((written.revision, written.last_id, written.fingerprint))
            if any(self._changed(channel, *state) for state in states):
                self.discard(channel)
                dropped.append(channel)
            elif channel in held and self._dropped_if_unlinked(channel, held[channel]):
                dropped.append(channel)  # its file shredded or replaced: let go of it
            elif channel in held:
                self._drop_appended_if_changed(channel, held[channel].timeline.revision)
        return dropped

    def _drop_appended_if_changed(self, channel: str, revision: int) -> None:
        """Drop the vectors this process kept of its own appends to a held channel unless they
        are all that happened since: a row it appended may have been removed elsewhere since,
        and the timeline's check cannot see it (the timeline holds none of those rows yet).
        Dropping costs only a read-back at the next catch-up."""
        with self._cache_guard:
            own = self._appended.get(channel)
        if own is None or own.only_these_since(revision, self._revision(channel)):
            return
        with self._cache_guard:
            if self._appended.get(channel) is own:
                del self._appended[channel]

    def _changed(self, channel: str, revision: int, last_id: int, fingerprint: str) -> bool:
        """Whether a row of what was built at ``revision`` (up to ``last_id``) changed since."""
        with self.db.read() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return True
            if channel_row.revision == revision:
                return False
            return fingerprints.fingerprint(session, channel_row, last_id) != fingerprint

    def _load(self, channel: str) -> _Cached | None:
        """The channel's persisted timeline, not yet checked against SQL (catching up does)."""
        if self.files is None:
            return None
        snapshot = self.files.load(channel, self.recall_index)
        if snapshot is None:
            return None
        return _Cached(
            snapshot.timeline,
            snapshot.last_id,
            snapshot.fingerprint,
            snapshot.text_bytes,
            snapshot.written,
            snapshot.source,
            mapped=len(snapshot.timeline.messages),
            keys=snapshot.keys or NO_KEYS,
        )

    def flush(self) -> None:
        """Bring every cached channel's file up to SQL (when the process closes): the rows
        appended since it was last read are caught up first (an ingest reads the timeline
        before each batch it stores, so the last batch is not in it yet), then what the file
        lacks is appended. The next start then finds each current, and neither opens Chroma
        nor reads a row of them. A channel changed otherwise is left for the next start to
        rebuild, and a cache that fails to write costs that start time only."""
        if self.files is None or not self.files.writable:
            return
        with self._cache_guard:
            cached = list(self._cache.items())
        for channel, entry in cached:
            try:
                with self.locks(channel):
                    if entry.timeline.revision != self._revision(channel) and not (
                        self._catch_up(channel, entry)
                    ):
                        continue
                    self._persist(channel, entry, every=1)
            except Exception as error:
                log.warning("could not write the read model of %s: %s", channel, error)

    def _persist(self, channel: str, cached: _Cached, every: int | None = None) -> None:
        """Append to the channel's file once ``every`` (by default ``persist_every``) of the
        timeline's messages are not there: the cost of a write is that of those messages."""
        count = len(cached.timeline.messages)
        done = cached.persisted.messages if cached.persisted is not None else 0
        if self.files is None or count - done < (every or self.settings.persist_every):
            return
        snapshot = Snapshot(
            cached.timeline,
            cached.last_id,
            cached.fingerprint,
            cached.text_bytes,
            cached.source,
            keys=cached.keys,
        )

        revision = cached.timeline.revision  # the fingerprint was taken at this revision

        def current_at(last_id: int, fingerprint: str) -> bool:
            with self.db.read() as session:
                row = self.db.channel(session, channel)
                if row is None:
                    return False
                if (row.revision, row.source, last_id, fingerprint) == (
                    revision,
                    cached.source,
                    cached.last_id,
                    cached.fingerprint,
                ):
                    return True  # nothing changed since: no pass over the channel's rows
                return fingerprints.fingerprint(session, row, last_id) == fingerprint

        written = self.files.save(channel, snapshot, current_at, cached.persisted)
        if written is not None:
            cached.persisted, cached.write_now = written, False

    def vouched_thoughts(self, channel: str, revision: int, source: str) -> int | None:
        """How many thoughts' vectors the channel's read model holds, if it is current at
        ``revision`` and was made from ``source`` (:attr:`ChannelRow.source`: this database's
        channel row and its collection; in memory, else its file); else ``None``.

        Its vectors were read from that collection for every synced thought it holds, and the
        revision moves with every change readers see, so a count equal to SQL's vouches that
        the stores agree without asking Chroma (the start-up check, :mod:`storage.repair`).
        """
        cached = self._touch(channel)
        if cached is not None and cached.timeline.revision == revision and cached.source == source:
            return len(cached.timeline.vectors)
        if self.files is None:
            return None
        return self.files.vouched_thoughts(channel, revision, source)

    def cached_bytes(self) -> int:
        """The estimated memory of every cached timeline (what ``max_mb`` bounds)."""
        with self._cache_guard:
            return sum(cached.nbytes for cached in self._cache.values())

    def cached_channels(self) -> list[str]:
        """Cached channels, least recently read first."""
        with self._cache_guard:
            return list(self._cache)

    def _held(self, channel: str) -> _Cached | None:
        """The cached timeline, unless the file its vectors are mapped from was unlinked since
        it was loaded (a removal shredded it, or another process replaced it): then it is
        dropped. It would still read right (a shred never zeros a file a process maps), but
        this process's mapping is what keeps a shredded file's bytes on disk, and they are
        zeroed only when the last mapping lets go (:func:`awai_engine.mapped_rows.shred`)."""
        cached = self._touch(channel)
        if cached is None or self._dropped_if_unlinked(channel, cached):
            return None
        return cached

    def _dropped_if_unlinked(self, channel: str, cached: _Cached) -> bool:
        """Drop ``cached`` if its vectors' file was unlinked (see :meth:`_held`); whether it
        is no longer cached (also when another thread replaced it meanwhile)."""
        if not mapped_rows.file_gone(cached.timeline.vectors):
            return False
        with self._cache_guard:
            if self._cache.get(channel) is not cached:
                return True  # replaced meanwhile: this one is dropped already
            del self._cache[channel]
            cached.timeline.retired = True
        self._released(channel)
        return True

    def _touch(self, channel: str) -> _Cached | None:
        with self._cache_guard:
            cached = self._cache.get(channel)
            if cached is not None:
                self._cache.move_to_end(channel)
            return cached

    def _evict(self, keep: str) -> None:
        limit = self.settings.max_mb * 1024 * 1024
        evicted = []
        with self._cache_guard:
            total = sum(cached.nbytes for cached in self._cache.values())
            for channel in list(self._cache):
                if total <= limit:
                    break
                if channel != keep:
                    cached = self._cache.pop(channel)
                    cached.timeline.retired = True
                    total -= cached.nbytes
                    evicted.append(channel)
        for channel in evicted:
            self._released(channel)

    def _released(self, channel: str) -> None:
        """Tell the listeners (outside the cache's guard: they take locks of their own)."""
        with self._cache_guard:
            self._appended.pop(channel, None)
        for listener in list(self._listeners):
            listener(channel)

    def _revision(self, channel: str) -> int:
        revision = self.db.scalar(_REVISION, key=channel)
        return -1 if revision is None else int(revision)

    def _catch_up(self, channel: str, cached: _Cached) -> bool:
        """Append the rows added since ``cached`` was current; ``False`` if a row it holds
        changed since (see :meth:`_rebuilt`).

        The rows after the last id it holds, when its fingerprint holds and they come after its
        messages in channel order; otherwise SQL's rows are compared with those it holds,
        position by position, and when every one is unchanged the rows after them in channel
        order are appended, whatever their ids (a row synced late, a file cut before a change)."""
        with self.db.read() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return False
            if (
                channel_row.revision == cached.timeline.revision
                and channel_row.source == cached.source
                and _synced_span(session, channel_row.id)
                == (len(cached.timeline.messages), cached.last_id)
            ):
                # Nothing readers see changed since it was current (a file written at this
                # revision): as for a timeline cached in memory, no fingerprint is needed. The
                # count and last id of the synced rows are a cheap guard against a database
                # put back from elsewhere whose counter happens to match.
                return True
            with self._cache_guard:
                own = self._appended.pop(channel, None)
            if own is not None and (
                own.collection != channel_row.collection
                or channel_row.source != cached.source
                or not own.only_these_since(cached.timeline.revision, channel_row.revision)
            ):
                own = None  # something else changed too: checked as any other change is
            unchanged = own is not None or (
                fingerprints.fingerprint(session, channel_row, cached.last_id) == cached.fingerprint
            )
            added = (
                _after_last_id(session, channel_row, cached, own is not None) if unchanged else None
            )
            if added is None:
                own = None
                added = _after_first_change(session, channel_row, cached)
                if added is None:
                    return False
                cached.write_now = True
            revision, collection = channel_row.revision, channel_row.collection
            source = channel_row.source
        rows, thoughts = added.rows, added.thoughts
        stored = _as_written(own, rows, thoughts) if own is not None else {}
        missing = [key for key in _vector_ids(rows, thoughts) if key not in stored]
        stored.update(self.vectors.vectors_of(collection, missing))
        text_bytes, keys = _fill(cached.timeline, rows, thoughts, stored)
        cached.text_bytes += text_bytes
        cached.keys += keys
        cached.timeline.revision = revision
        cached.last_id, cached.fingerprint = added.last_id, added.fingerprint
        cached.source = source
        return True

    def _build(self, channel: str) -> _Cached:
        """Read the synced rows and their revision from one snapshot, then their vectors."""
        with self.db.read() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return _Cached(Timeline(dimension=0, revision=-1), 0, "")
            revision = channel_row.revision
            rows, thoughts = _rows(session, channel_row.id, after=None)
            last_id = max((row.id for row in rows), default=0)
            fingerprint = fingerprints.fingerprint(session, channel_row, last_id)
            collection, dimension = channel_row.collection, channel_row.dimension or 0
            source = channel_row.source
        stored = self.vectors.vectors_of(collection, _vector_ids(rows, thoughts))
        kept = _with_vectors(rows, thoughts, stored)
        timeline = Timeline.built(revision, self.recall_index, *_columns(kept, stored, dimension))
        return _Cached(
            timeline, last_id, fingerprint, _text_bytes(kept), source=source, keys=_keys(kept)
        )


@dataclass(frozen=True)
class _Added:
    """Rows to append to a cached timeline (in channel order, with their thoughts), and the last
    id and fingerprint of SQL's rows it holds once they are."""

    rows: list[_Row]
    thoughts: dict[int, list[Thought]]
    last_id: int
    fingerprint: str


def _after_last_id(
    session: Session, channel_row: ChannelRow, cached: _Cached, own: bool
) -> _Added | None:
    """The synced rows after the last id ``cached`` holds, whose rows are unchanged (its
    fingerprint holds, or only this process appended since: ``own``); ``None`` if one comes
    before its last message in channel order (its positions would move)."""
    rows, thoughts = _rows(session, channel_row.id, after=cached.last_id)
    timeline = cached.timeline
    if rows and timeline.messages and rows[0].ts < timeline.timestamps[-1]:
        return None
    last_id = max((row.id for row in rows), default=cached.last_id)
    return _Added(
        rows,
        thoughts,
        last_id,
        fingerprints.fingerprint_extended(
            session, channel_row, cached.fingerprint, cached.last_id, last_id
        )
        if own
        else fingerprints.fingerprint(session, channel_row, last_id),
    )


def _after_first_change(
    session: Session, channel_row: ChannelRow, cached: _Cached
) -> _Added | None:
    """The synced rows after those ``cached`` holds in channel order, if SQL still holds every
    one of those as it is, at the same position (:mod:`storage.read_model_keys`); ``None`` if
    one changed, or the channel was re-embedded (every vector changed)."""
    if channel_row.source != cached.source:
        return None
    order = SyncedOrder.read(session, channel_row.id)
    timeline = cached.timeline
    held = HeldRows(cached.keys, list(timeline.position_of), timeline.scopes, timeline.timestamps)
    count = len(timeline.messages)
    if order.first_change(held) < count:
        return None
    rows, thoughts = (
        _rows(session, channel_row.id, since=order.at(count)) if count < len(order) else ([], {})
    )
    return _Added(
        rows, thoughts, order.last_id, fingerprints.fingerprint(session, channel_row, order.last_id)
    )


_REVISION = select(ChannelRow.revision).where(ChannelRow.key == bindparam("key"))


def _rows(
    session: Session,
    channel_id: int,
    after: int | None = None,
    since: tuple[float, int] | None = None,
) -> tuple[list[_Row], dict[int, list[Thought]]]:
    """Synced rows in channel order, and their thoughts: only ids above ``after`` if given, only
    the rows at and after the place ``since`` (timestamp, id) in channel order if given."""
    condition = (UtteranceRow.channel_id == channel_id) & UtteranceRow.synced.is_(True)
    if after is not None:
        condition = condition & (UtteranceRow.id > after)
    if since is not None:
        ts, row_id = since
        # The first term alone bounds the channel-order index's range.
        condition = (
            condition
            & (UtteranceRow.ts >= ts)
            & ((UtteranceRow.ts > ts) | (UtteranceRow.id >= row_id))
        )
    rows = [
        _Row(*row)
        for row in session.execute(
            select(*_ROW_COLUMNS).where(condition).order_by(UtteranceRow.ts, UtteranceRow.id)
        )
    ]
    thoughts: dict[int, list[Thought]] = {}
    query = (
        select(
            ThoughtRow.utterance_id,
            ThoughtRow.idx,
            ThoughtRow.text,
            UtteranceRow.extraction_fallback,
        )
        .join(UtteranceRow)
        .where(condition)
        .order_by(ThoughtRow.utterance_id, ThoughtRow.idx)
    )
    for utterance_id, idx, text, fallback in session.execute(query):
        thoughts.setdefault(utterance_id, []).append(
            Thought(index=idx, text=text, fallback=fallback)
        )
    return rows, thoughts


def _synced_span(session: Session, channel_id: int) -> tuple[int, int]:
    """How many rows of the channel are synced, and the last id among them."""
    count, last = session.execute(
        select(func.count(UtteranceRow.id), func.coalesce(func.max(UtteranceRow.id), 0)).where(
            UtteranceRow.channel_id == channel_id, UtteranceRow.synced.is_(True)
        )
    ).one()
    return int(count), int(last)


def _vector_ids(rows: Sequence[_Row], thoughts: dict[int, list[Thought]]) -> list[str]:
    """The vector ids of the rows' thoughts. A timeline reads its vectors by id, never the
    whole collection in pages: Chroma pages by offset, and a page far into a large collection
    costs several times the first (bench/vector_pages.py)."""
    return [vector_id(row.message_id, t.index) for row in rows for t in thoughts.get(row.id, ())]


def _as_written(
    own: _Appended, rows: Sequence[_Row], thoughts: dict[int, list[Thought]]
) -> dict[str, np.ndarray]:
    """The vectors this process wrote for ``rows``' thoughts (all of them when only its own
    appends happened since, which is when this is asked)."""
    keys = (vector_id(row.message_id, t.index) for row in rows for t in thoughts.get(row.id, ()))
    return {key: own.vectors[key] for key in keys if key in own.vectors}


def _columns(
    kept: Sequence[tuple[_Row, Sequence[Thought]]], stored: dict[str, np.ndarray], dimension: int
) -> tuple[MessageColumns, np.ndarray]:
    """The rows ``kept`` (:func:`_with_vectors`) as columns, and their thoughts' vectors in
    order (``dimension`` 0: that of the vectors). Each vector is taken out of ``stored`` as it
    is copied, so the pages Chroma gave them in go as they are used."""
    if dimension == 0 and stored:
        dimension = len(next(iter(stored.values())))
    vectors = np.empty((sum(len(own) for _, own in kept), dimension), dtype=np.float32)
    first_rows = np.empty(len(kept), dtype=np.int64)
    at = 0
    for number, (row, own) in enumerate(kept):
        first_rows[number] = at
        for thought in own:
            vectors[at] = stored.pop(vector_id(row.message_id, thought.index))
            at += 1
    columns = MessageColumns(
        message_ids=[row.message_id for row, _ in kept],
        speaker_ids=[row.speaker_id for row, _ in kept],
        speaker_names=[row.speaker_name for row, _ in kept],
        ts=np.array([row.ts for row, _ in kept], dtype=np.float64),
        thread_roots=[row.thread_root for row, _ in kept],
        scopes=[row.scope for row, _ in kept],
        texts=[row.text for row, _ in kept],
        summaries=[row.summary for row, _ in kept],
        addressees=[json.loads(row.addressees or "[]") for row, _ in kept],
        thought_texts=[[t.text for t in own] for _, own in kept],
        thought_indexes=[[t.index for t in own] for _, own in kept],
        fallbacks=[any(t.fallback for t in own) for _, own in kept],
        first_rows=first_rows,
    )
    return columns, vectors


def _fill(
    timeline: Timeline,
    rows: Sequence[_Row],
    thoughts: dict[int, list[Thought]],
    stored: dict[str, np.ndarray],
) -> tuple[int, RowKeys]:
    """Append ``rows`` in order, skipping those whose vectors are missing (invisible until
    reconciliation re-embeds them, as in a rebuild); returns the bytes of the texts appended,
    and the keys of the rows appended. Many rows (:data:`EXTENDED_FROM`) are taken in at once
    (:meth:`Timeline.extend`), and held as columns: about 0.8 KB a message, not 2.4 of objects."""
    kept = _with_vectors(rows, thoughts, stored)
    if len(kept) >= max(EXTENDED_FROM, len(timeline.messages) // HELD_PER_EXTENDED):
        timeline.extend(*_columns(kept, stored, timeline.dimension))
    else:
        for row, own in kept:
            _append(timeline, row, own, stored)
    return _text_bytes(kept), _keys(kept)


def _keys(kept: Sequence[tuple[_Row, Sequence[Thought]]]) -> RowKeys:
    """Which SQL row each of the messages ``kept`` is (:mod:`storage.read_model_keys`)."""
    return RowKeys.of([(row.id, row.edited_at, any(t.fallback for t in own)) for row, own in kept])


def _with_vectors(
    rows: Sequence[_Row], thoughts: dict[int, list[Thought]], stored: dict[str, np.ndarray]
) -> list[tuple[_Row, list[Thought]]]:
    """The rows whose every thought has its vector in ``stored``, with their thoughts: a row
    missing one stays invisible until reconciliation re-embeds it."""
    return [
        (row, own)
        for row in rows
        if (own := thoughts.get(row.id, []))
        and all(vector_id(row.message_id, t.index) in stored for t in own)
    ]


def _text_bytes(kept: Sequence[tuple[_Row, Sequence[Thought]]]) -> int:
    """What the messages' texts take in a cached timeline (the memory estimate's share)."""
    return sum(
        len(row.text) + len(row.summary) + sum(len(t.text) + 80 for t in own) for row, own in kept
    )


def _append(
    timeline: Timeline, row: _Row, thoughts: Sequence[Thought], stored: dict[str, np.ndarray]
) -> None:
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
        tuple(thoughts),
        np.vstack([stored[vector_id(row.message_id, thought.index)] for thought in thoughts]),
        tuple(json.loads(row.addressees or "[]")),
    )
