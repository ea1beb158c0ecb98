"""Which of the speaker's schemas a message recalls, and which recalled thoughts they make important.

Spec §4–5: a schema is related to message ``i`` when its centre is close to one of ``i``'s
thoughts (similarity ≥ the recall threshold) or it contains a thought association recalled; at
most ``R`` are kept, closest first. A recalled thought inside a recalled schema whose activation
reaches β is marked especially important.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from awai_engine.schemas.basis import Basis
from awai_engine.schemas.clustering import eligible
from awai_engine.schemas.model import SchemaState, thought_key
from awai_engine.settings import SchemaSettings
from awai_engine.values import Association, Thought

SIMILARITY_DECIMALS = 6


def related(
    states: Sequence[SchemaState],
    cues: np.ndarray,
    associations: Sequence[Association],
    settings: SchemaSettings,
) -> list[tuple[SchemaState, float]]:
    """The states recalled by the cues (one vector per thought), with their best similarity."""
    if not states or settings.max_recalled == 0 or len(cues) == 0:
        return []
    centres = np.vstack([state.centroid for state in states]).astype(np.float32)
    best = (centres @ np.asarray(cues, dtype=np.float32).T).max(axis=1)
    recalled_keys = {
        thought_key(item.source.message_id, item.thought.index) for item in associations
    }
    chosen = [
        (state, round(float(similarity), SIMILARITY_DECIMALS))
        for state, similarity in zip(states, best, strict=True)
        if similarity >= settings.recall_threshold or recalled_keys.intersection(state.members)
    ]
    chosen.sort(key=lambda pair: (-pair[1], pair[0].schema_id))
    return chosen[: settings.max_recalled]


def mark_important(
    associations: tuple[Association, ...], recalled: Sequence[SchemaState], beta: float
) -> tuple[Association, ...]:
    """Associations in a recalled schema with activation ≥ β, marked ``important``."""
    members = {key for state in recalled for key in state.members}
    return tuple(
        item.model_copy(update={"important": True})
        if thought_key(item.source.message_id, item.thought.index) in members
        and item.activation >= beta
        else item
        for item in associations
    )


def returning(
    basis: Basis,
    state: SchemaState,
    cues: np.ndarray,
    thoughts: Sequence[Thought],
    settings: SchemaSettings,
) -> tuple[int, ...]:
    """The message's thoughts (by index) that belong to the schema: the speaker comes back to it.

    A thought belongs when its mean similarity to the members reaches ``join_similarity``, the
    test a thought HDBSCAN left aside must pass to join a schema (``clustering._joined``), so
    "returns to it" means what membership means. Only the members (all before the message) and
    the message's own thoughts are used; a thought too slight to join a schema returns to none.
    """
    rows_of = {key: row for row, key in enumerate(basis.keys)}
    members = basis.vectors_at([rows_of[key] for key in state.members]).astype(np.float64)
    closeness = np.asarray(cues, dtype=np.float64) @ members.sum(axis=0) / len(members)
    allowed = eligible([thought.text for thought in thoughts], settings)
    return tuple(
        thought.index
        for thought, near, ok in zip(thoughts, closeness, allowed, strict=True)
        if ok and near >= settings.rules.join_similarity
    )
