"""The run a basis gets: the stored one made on exactly those thoughts, else one clustered now.

This is where the no-future-leak guarantee for schemas is kept. Reading message ``i`` of speaker
``s`` uses the clustering of exactly ``s``'s thoughts before ``i`` (the basis): its versions all
have ``as_of`` < ``i``. If the scheduler stored a run on that very basis, it is used; otherwise
the basis is clustered on demand with the same function, taking ids from the same predecessor
(the stored run of ``s`` with the largest basis below it). So which clusters a reading sees is a
function of the thoughts before ``i`` alone, never of when the scheduler happened to run: a
channel imported afresh reads alike. (A stored run on a shorter prefix is not used in its place:
it would make the reading depend on the scheduler's timing, and a re-clustering cut before ``i``
but saved after ``i`` was read would change that reading.)

Why that is stable: runs are only stored on a speaker's history at the time (their whole
history, and the history before their newest message), so once ``i`` exists every later run of
``s`` has a basis of at least ``s``'s thoughts before ``i``; none can slip in below it. So a later
run is either on this exact basis, with the same predecessor, hence the same clusters, ids,
versions and (memoised) summaries, or it is above it and not used. Re-clustering, digests and new
messages therefore never change an earlier reading; only removing messages (privacy) does.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from awai_engine.schemas.basis import Basis
from awai_engine.schemas.build import cluster_run
from awai_engine.schemas.clustering import method_for
from awai_engine.schemas.model import SchemaRun
from awai_engine.schemas.ports import SchemaStore
from awai_engine.settings import SchemaSettings

CacheKey = tuple[str, str, str, str, int | None]


class Runs:
    """Finds or clusters runs; clusterings made for readings are kept in a bounded LRU cache."""

    def __init__(self, store: SchemaStore, settings: SchemaSettings) -> None:
        self.store = store
        self.settings = settings
        self._cache: OrderedDict[CacheKey, SchemaRun] = OrderedDict()
        self._lock = threading.Lock()

    def stored(self, basis: Basis) -> SchemaRun | None:
        method = method_for(basis.count, self.settings)
        return self.store.run_with_basis(basis.channel, basis.speaker_id, method, basis.digest)

    def for_basis(self, basis: Basis) -> SchemaRun:
        """The stored run on exactly this basis, or the same clustering made now (not stored)."""
        stored = self.stored(basis)
        return stored if stored is not None else self.unstored(basis)[0]

    def unstored(self, basis: Basis) -> tuple[SchemaRun, SchemaRun | None]:
        """The clustering of a basis no stored run covers, and the predecessor it took ids from."""
        predecessor = self.store.run_before(basis.channel, basis.speaker_id, basis.count)
        return self._clustered(basis, predecessor), predecessor

    def clustered(self, basis: Basis) -> SchemaRun:
        """The clustering of a basis on its own: no stored run, no predecessor's ids.

        For a view of the channel that leaves messages out: every stored run was made from the
        whole channel, so neither its states nor the ids it would hand down may be used, and the
        run is then a pure function of the visible thoughts.
        """
        return self._clustered(basis, None)

    def _clustered(self, basis: Basis, predecessor: SchemaRun | None) -> SchemaRun:
        key = (
            basis.channel,
            basis.speaker_id,
            method_for(basis.count, self.settings),
            basis.digest,
            predecessor.run_id if predecessor else None,
        )
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        run = cluster_run(basis, predecessor, self.settings)
        with self._lock:
            self._cache[key] = run
            while len(self._cache) > self.settings.on_demand_cache:
                self._cache.popitem(last=False)
        return run

    def forget(self, channel: str) -> None:
        """Drop the channel's cached clusterings (after removals: no removed text stays here)."""
        with self._lock:
            for key in [key for key in self._cache if key[0] == channel]:
                del self._cache[key]
