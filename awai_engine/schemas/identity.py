"""Stable schema ids across re-clusterings: a cluster inherits the id of the one it continues.

Spec §4: a new cluster inherits the id of the old cluster it overlaps most, if their member
Jaccard index is at least 0.5; otherwise it gets a new id. Pairs are taken greedily from the
highest overlap down, so each old id passes to at most one new cluster and the outcome does not
depend on the order clusters are listed in. A new id is a hash of the channel, the speaker and
the members, so the same clustering made twice (stored by the scheduler, or on demand for a
reading) names its schemas the same way.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

from awai_engine.schemas.model import SchemaState

INHERIT_JACCARD = 0.5


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def inherited(
    clusters: Sequence[frozenset[str]], previous: Sequence[SchemaState]
) -> list[SchemaState | None]:
    """For each cluster, the previous state whose id it takes over, or ``None`` for a new one.

    Only states sharing a member with a cluster can reach the threshold, so the pairs are found
    through which state holds each member, not by comparing every cluster with every state: a
    long speaker has a thousand of each, and the all-pairs loop was a sixth of a catch-up.
    """
    sets = [frozenset(state.members) for state in previous]
    holders: dict[str, list[int]] = {}
    for number, members in enumerate(sets):
        for key in members:
            holders.setdefault(key, []).append(number)
    candidates = []
    for index, cluster in enumerate(clusters):
        shared = Counter(number for key in cluster for number in holders.get(key, ()))
        for number, common in shared.items():
            overlap = common / (len(cluster) + len(sets[number]) - common)
            if overlap >= INHERIT_JACCARD:
                state = previous[number]
                candidates.append((-overlap, index, state.schema_id, state))
    candidates.sort(key=lambda item: item[:3])
    chosen: list[SchemaState | None] = [None] * len(clusters)
    taken: set[str] = set()
    for _, index, schema_id, state in candidates:
        if chosen[index] is None and schema_id not in taken:
            chosen[index] = state
            taken.add(schema_id)
    return chosen


def new_schema_id(
    channel: str, speaker_id: str, members: Sequence[str], taken: set[str], salt: int
) -> str:
    """A short id derived from the cluster itself; ``salt`` separates a rare clash in one run."""
    seed = "\x1f".join((channel, speaker_id, *sorted(members)))
    attempt = 0
    while True:
        salted = f"{seed}\x1e{salt}\x1e{attempt}" if attempt else seed
        schema_id = "s" + hashlib.sha256(salted.encode()).hexdigest()[:11]
        if schema_id not in taken:
            return schema_id
        attempt += 1
