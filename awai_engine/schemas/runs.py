"""Which run serves a reading, a digest or the re-clustering job: runs at fixed points.

This is where the no-future-leak guarantee for schemas is kept. Reading message ``i`` of speaker
``s`` uses the run *in force* after ``n`` thoughts of ``s`` (those before ``i``): the clustering
of ``s``'s first ``F(n)`` thoughts, ``F`` the fixed point below ``n``
(:mod:`awai_engine.schemas.fixed_points`). The runs at ``s``'s fixed points form a chain: the run
at a point takes its ids from the run at the point below it, and from nothing else. So every run
of the chain, its ids, versions and (memoised) summaries, is a function of ``s``'s first ``F(n)``
thoughts alone, whenever and wherever it is made: by the re-clustering job, which stores the run
at every point it reaches, or on demand for a reading the job has not caught up with, by the same
function from the highest run of the chain known below it. Re-clustering, digests and new
messages never change an earlier reading; only removing messages (privacy) does, as it changes
the fingerprint of every prefix holding them.

*As of now* (``awai schemas`` without ``--as-of``, the digest) is the clustering of the speaker's
whole history, with its ids from the run in force for their next message. It is no link of the
chain, so no reading ever depends on it; the job stores the latest one of each speaker so those
views look it up.

A speaker with at most ``min_cluster_size`` thoughts at a point has no schemas there (a cluster
needs more, :func:`awai_engine.schemas.clustering.cluster_labels`), so the chain starts above.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from awai_engine import heap_trim
from awai_engine.schemas.basis import Basis, SpeakerRows
from awai_engine.schemas.build import cluster_run
from awai_engine.schemas.clustering import ChainMemo, method_for
from awai_engine.schemas.fixed_points import fixed_point, is_fixed_point, points_up_to
from awai_engine.schemas.model import SchemaRun
from awai_engine.schemas.ports import SchemaStore
from awai_engine.settings import SchemaSettings

# channel, speaker, method, basis digest, and where ids came from: "chain" (the store's chain),
# "view" (a restricted view's own walk up its points) or "alone" (no predecessor)
CacheKey = tuple[str, str, str, str, str]

UNSTORED_KEPT = 1024
"""Points a process remembers the store held no run at (:meth:`Runs.unmade`): a few hundred
bytes each, and a reading of a speaker needs those of their chain, a handful."""


class Runs:
    """Finds or clusters runs; the runs readings used (made for them, or loaded from the store)
    are kept in a bounded LRU cache."""

    def __init__(self, store: SchemaStore, settings: SchemaSettings) -> None:
        self.store = store
        self.settings = settings
        self._cache: OrderedDict[CacheKey, SchemaRun] = OrderedDict()
        # Points the store was found to hold no run at, and the revision then (see unmade).
        self._unstored: OrderedDict[CacheKey, int] = OrderedDict()
        self._lock = threading.Lock()
        self._made = 0  # clusterings made so far (see _giving_back)

    @property
    def first_point(self) -> int:
        """The smallest count of thoughts a clustering can find a schema in."""
        return self.settings.rules.min_cluster_size + 1

    def in_force(
        self,
        index: SpeakerRows,
        channel: str,
        speaker_id: str,
        count: int,
        reading: bool = False,
    ) -> tuple[Basis, SchemaRun] | None:
        """The basis and run a reading after ``count`` of the speaker's thoughts uses, or
        ``None`` while the fixed point below ``count`` is too small to hold a schema.
        ``reading``: for a reading, which needs the run and not whether it is stored (see
        :meth:`chained`)."""
        point = fixed_point(count, self.settings.rules.fixed_point_bits)
        basis = index.head(channel, speaker_id, point) if point >= self.first_point else None
        return None if basis is None else (basis, self.chained(index, basis, reading))

    def latest(
        self, index: SpeakerRows, channel: str, speaker_id: str
    ) -> tuple[Basis, SchemaRun] | None:
        """The speaker's schemas as of now: their whole history clustered (stored, else now),
        with ids from the run in force for their next message."""
        count = index.count(speaker_id)
        if is_fixed_point(count, self.settings.rules.fixed_point_bits):
            return self.in_force(index, channel, speaker_id, count)
        basis = index.head(channel, speaker_id, count)
        if basis is None or count < self.first_point:
            return None
        stored = self.stored(basis)
        if stored is not None:
            return basis, stored
        below = self.in_force(index, channel, speaker_id, count)
        with self._giving_back():
            return basis, self.made(basis, below[1] if below else None)

    def chained(self, index: SpeakerRows, basis: Basis, reading: bool = False) -> SchemaRun:
        """The chain's run on a basis at a fixed point: stored on exactly this basis, else
        clustered now along the chain from the highest run of it known below. ``reading``:
        for a reading, which needs the run and not whether it is stored (see :meth:`unmade`):
        the run a reading found, stored or made, is kept in memory, and the next reading at this
        point takes it from there without asking the store. Why: loading a stored run with its
        schemas from SQL was a fifth of a reading at 100,000 messages (8 of 46 ms), paid again
        by every reading of the speaker until their next fixed point; and a run on this basis is
        the same whether stored or made (the module's guarantee)."""
        key = self._key(basis.channel, basis.speaker_id, basis.count, basis.digest, "chain")
        if reading:
            with self._lock:
                kept = self._cache.get(key)
                if kept is not None:
                    self._cache.move_to_end(key)
                    return kept
        revision = index.timeline.revision if reading else None
        known, todo = self.unmade(
            index, basis.channel, basis.speaker_id, basis.count, this_point=True, revision=revision
        )
        run = known
        memo = ChainMemo()
        with self._giving_back():
            for count in todo:
                each = (
                    basis
                    if count == basis.count
                    else index.head(basis.channel, basis.speaker_id, count)
                )
                assert each is not None
                run = self.made(each, run, memo)
        assert run is not None  # todo ends with the basis itself
        if reading and not todo:  # stored on this basis (one made is kept by ``made``)
            self._keep(key, run)
        return run

    def unmade(
        self,
        index: SpeakerRows,
        channel: str,
        speaker_id: str,
        point: int,
        in_memory: bool = True,
        this_point: bool = False,
        revision: int | None = None,
        stored_any: bool = True,
    ) -> tuple[SchemaRun | None, list[int]]:
        """The highest run of the chain known at a point below or at ``point`` (stored, or also
        in memory), and the points above it up to ``point``, in order. ``this_point``: a run
        stored at ``point`` itself goes before one in memory there (the store is asked in the
        same query as for the points below: one look at the store, not two).

        ``revision`` (a reading's: the timeline's): the points the store was found to hold no
        run at, at this revision of the channel, are not asked about again at it. Why: the
        store's answer cost a reading 0.3–0.4 ms, asked anew for every message of a speaker;
        and a run the job stores meanwhile is the very run a reading clusters (the module's
        guarantee), so only ``awai schemas``, which says which runs are stored, must ask.

        ``stored_any`` ``False``: the caller knows the store holds no run of the speaker (a
        re-clustering asks once for the whole channel), so it is not asked.

        Points, not their bases: the caller cuts each basis (``index.head``) when its turn comes.
        Every basis holds a copy of its thoughts' vectors, and the bases of all the points of a
        long speaker's chain together are many times the speaker's history (a channel of
        100,000 long messages ran out of 24 GiB holding them for every speaker at once)."""
        points = points_up_to(point, self.settings.rules.fixed_point_bits, start=self.first_point)
        keys = {
            count: self._key(channel, speaker_id, count, index.digest(speaker_id, count), "chain")
            for count in points
        }
        cached_at, known = 0, None
        with self._lock:
            for count in reversed(points) if in_memory else ():
                if keys[count] in self._cache:
                    cached_at, known = count, self._cache[keys[count]]
                    break
            asked = [
                count
                for count in points
                if (count > cached_at or (this_point and count == point))
                and (revision is None or self._unstored.get(keys[count]) != revision)
            ]
        if asked and stored_any:
            stored = self.store.highest_run(
                channel, speaker_id, [(keys[count][2], keys[count][3]) for count in asked]
            )
            if stored is not None:
                cached_at, known = stored.basis_count, stored
            if revision is not None:
                self._remember_unstored(
                    [keys[count] for count in asked if count > cached_at or stored is None],
                    revision,
                )
        return known, [count for count in points if count > cached_at]

    def _remember_unstored(self, keys: list[CacheKey], revision: int) -> None:
        """Points the store holds no run at, at ``revision`` (see :meth:`unmade`)."""
        with self._lock:
            for key in keys:
                self._unstored[key] = revision
                self._unstored.move_to_end(key)
            while len(self._unstored) > UNSTORED_KEPT:
                self._unstored.popitem(last=False)

    def stored(self, basis: Basis) -> SchemaRun | None:
        """The stored run on exactly this basis, if any."""
        return self.store.run_with_basis(
            basis.channel, basis.speaker_id, self._method(basis.count), basis.digest
        )

    def stored_at(
        self, index: SpeakerRows, channel: str, speaker_id: str, count: int
    ) -> SchemaRun | None:
        """The stored run on the speaker's first ``count`` thoughts, if any, asked by their
        fingerprint alone: no basis (a copy of their vectors) is cut to ask."""
        return self.store.run_with_basis(
            channel, speaker_id, self._method(count), index.digest(speaker_id, count)
        )

    def made(
        self, basis: Basis, predecessor: SchemaRun | None, memo: ChainMemo | None = None
    ) -> SchemaRun:
        """The clustering of ``basis`` with ids from ``predecessor``, the run of the chain at
        the fixed point below it (kept in memory: made once for the readings that need it).
        ``memo``: one per walk up a speaker's points, so each extends what the last found."""
        key = self._key(basis.channel, basis.speaker_id, basis.count, basis.digest, "chain")
        return self._cached(key, lambda: cluster_run(basis, predecessor, self.settings, memo))

    def clustered(self, basis: Basis) -> SchemaRun:
        """The clustering of a basis on its own: no stored run, no predecessor's ids.

        For a view of the channel that leaves messages out: every stored run was made from the
        whole channel, so neither its states nor the ids it would hand down may be used, and the
        run is then a pure function of the visible thoughts.
        """
        key = self._key(basis.channel, basis.speaker_id, basis.count, basis.digest, "alone")
        with self._giving_back():
            return self._cached(key, lambda: cluster_run(basis, None, self.settings))

    def walked(self, index: SpeakerRows, basis: Basis) -> SchemaRun:
        """The run a store that only ever held the thoughts of ``index`` would use for ``basis``,
        for a view of the channel that leaves messages out.

        Every stored run was made from the whole channel, so neither it nor the ids it hands
        down may be used; but clustering the basis alone (no predecessor) names its schemas
        otherwise than that store's chain would. So the chain is walked again on the view's own
        thoughts, each fixed point taking its ids from the one below, and a basis off the fixed
        points (the view's history as of now) from the last of them, as :meth:`latest` does;
        kept in memory like any on-demand run.
        """
        bits = self.settings.rules.fixed_point_bits
        run: SchemaRun | None = None
        memo = ChainMemo()
        with self._giving_back():
            for count in points_up_to(basis.count, bits, start=self.first_point):
                point = index.head(basis.channel, basis.speaker_id, count)
                assert point is not None
                run = self._viewed(point, run, memo)
            if run is None or not is_fixed_point(basis.count, bits):
                run = self._viewed(basis, run, memo)
        return run

    def _viewed(self, basis: Basis, predecessor: SchemaRun | None, memo: ChainMemo) -> SchemaRun:
        key = self._key(basis.channel, basis.speaker_id, basis.count, basis.digest, "view")
        return self._cached(key, lambda: cluster_run(basis, predecessor, self.settings, memo))

    def forget(self, channel: str) -> None:
        """Drop the channel's cached clusterings (after removals: no removed text stays here)."""
        with self._lock:
            for key in [key for key in self._cache if key[0] == channel]:
                del self._cache[key]
            for key in [key for key in self._unstored if key[0] == channel]:
                del self._unstored[key]

    def channels(self) -> list[str]:
        """The channels a clustering is cached for."""
        with self._lock:
            return list(dict.fromkeys(key[0] for key in self._cache))

    @contextmanager
    def _giving_back(self) -> Iterator[None]:
        """Return the C heap's free pages once the work inside made a clustering: it freed
        tens of megabytes that glibc would keep (:mod:`awai_engine.heap_trim`). Once per walk up a
        chain, not per run: each trim's pages are faulted in again by the next clustering."""
        made = self._made
        try:
            yield
        finally:
            if self._made != made:
                heap_trim.give_back()

    def _cached(self, key: CacheKey, make: Callable[[], SchemaRun]) -> SchemaRun:
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        run = make()
        with self._lock:
            self._made += 1
        self._keep(key, run)
        return run

    def _keep(self, key: CacheKey, run: SchemaRun) -> None:
        with self._lock:
            self._cache[key] = run
            self._cache.move_to_end(key)
            while len(self._cache) > self.settings.on_demand_cache:
                self._cache.popitem(last=False)

    def _method(self, count: int) -> str:
        return method_for(count, self.settings)

    def _key(self, channel: str, speaker_id: str, count: int, digest: str, kind: str) -> CacheKey:
        return (channel, speaker_id, self._method(count), digest, kind)
