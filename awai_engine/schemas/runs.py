"""The run a basis gets: the stored clustering in force at that point, else one clustered now.

This is where the no-future-leak guarantee for schemas is kept. Reading message ``i`` of speaker
``s`` uses ``s``'s thoughts before ``i`` (the basis). The clustering in force there is the stored
run of ``s`` with the largest basis that is a prefix of it: the latest re-clustering at or before
the message, so a reading looks a run up instead of clustering (and importing hdbscan). Only when
no stored run is a prefix (before the first re-clustering, or after an edit of an early thought)
is the basis clustered on demand, with the same function, taking ids from the same predecessor
(the stored run of ``s`` with the largest basis below it).

Why that is stable: runs are only stored on a speaker's whole history at the time, and every
message has at least one thought, so once ``i`` exists every later run of ``s`` holds ``i``'s
thoughts too: it is longer than the basis of ``i`` and no prefix of it. A run made before ``i``
and a prefix of its basis saw only thoughts before ``i``. So the run in force for ``i`` never
changes once ``i`` exists, and neither does the on-demand clustering (no run can appear below
it). Re-clustering, digests and new messages therefore never change an earlier reading; only
removing messages (privacy) or editing an earlier one does.
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
        """The stored run in force on this basis (made on its longest stored prefix), or the
        basis clustered now (not stored) when no stored run is a prefix of it."""
        in_force = self.store.run_on_prefix(basis.channel, basis.speaker_id, basis.prefix_digests)
        return in_force if in_force is not None else self.unstored(basis)[0]

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
