"""One clustering of one speaker's basis into a run: clusters, ids, versions, centres.

The same function makes the runs the scheduler stores and the runs clustered on demand for a
reading, so both agree whenever they start from the same thoughts and the same predecessor run.
"""

from __future__ import annotations

import numpy as np

from awai_engine.schemas.basis import Basis
from awai_engine.schemas.clustering import ChainMemo, cluster_labels, method_for
from awai_engine.schemas.identity import inherited, new_schema_id
from awai_engine.schemas.model import SchemaRun, SchemaState
from awai_engine.settings import SchemaSettings


def cluster_run(
    basis: Basis,
    predecessor: SchemaRun | None,
    settings: SchemaSettings,
    memo: ChainMemo | None = None,
) -> SchemaRun:
    """Cluster the basis; ids come from ``predecessor`` (Jaccard ≥ 0.5), else new ones.

    A cluster with exactly the members of the state it inherits *is* that state (same version,
    same summary); any other cluster is a new version numbered by the basis size. ``memo``
    carries nearest neighbours up a speaker's fixed points (it changes the speed, not the run).
    """
    labels = cluster_labels(basis.vectors, settings, basis.texts, memo)
    groups = [
        np.flatnonzero(labels == cluster) for cluster in range(int(labels.max(initial=-1)) + 1)
    ]
    members = [tuple(basis.keys[row] for row in group) for group in groups]
    heirs = inherited(
        [frozenset(keys) for keys in members], predecessor.states if predecessor else ()
    )
    taken = {heir.schema_id for heir in heirs if heir is not None}
    states = []
    for group, keys, heir in zip(groups, members, heirs, strict=True):
        if heir is not None and heir.members == keys:
            states.append(heir)
            continue
        if heir is not None:
            schema_id = heir.schema_id
        else:
            schema_id = new_schema_id(
                basis.channel, basis.speaker_id, keys, taken, salt=basis.count
            )
            taken.add(schema_id)
        last = int(group[-1])
        states.append(
            SchemaState(
                schema_id=schema_id,
                version=basis.count,
                speaker_id=basis.speaker_id,
                speaker_name=basis.speaker_name,
                members=keys,
                member_positions=tuple(int(p) for p in basis.positions[group]),
                centroid=centroid(basis.vectors[group]),
                summary=None,
                as_of_message_id=basis.message_ids[last],
                as_of=int(basis.positions[last]),
            )
        )
    return SchemaRun(
        channel=basis.channel,
        speaker_id=basis.speaker_id,
        speaker_name=basis.speaker_name,
        method=method_for(basis.count, settings),
        basis_count=basis.count,
        basis_digest=basis.digest,
        basis_message_id=basis.last_message_id,
        states=tuple(states),
    )


def centroid(vectors: np.ndarray) -> np.ndarray:
    """The unit-length mean direction of the members (float32)."""
    mean = vectors.astype(np.float64).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm if norm > 0 else mean).astype(np.float32)


def central_rows(basis: Basis, state: SchemaState, rows_of: dict[str, int]) -> list[int]:
    """Basis rows of the state's members, most central (closest to the centre) first."""
    rows = np.array([rows_of[key] for key in state.members], dtype=np.int64)
    similarity = basis.vectors_at(rows) @ state.centroid
    order = np.lexsort((rows, -similarity))
    return [int(rows[i]) for i in order]
