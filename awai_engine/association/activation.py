"""Stage 4: how active each recalled thought is, by ACT-R's base-level learning equation.

Why: a thought said again and again, recently, is more available than one said once long ago
(Anderson & Schooler 1991); the reading shows it, and schemas mark their important members by it.
"""

from __future__ import annotations

import math

import numpy as np

from awai_engine.association.settings import ActivationSettings
from awai_engine.timeline import Timeline


def base_level_activation(
    timeline: Timeline, position: int, rows: list[int], settings: ActivationSettings
) -> tuple[list[float], list[int]]:
    """ACT-R B(t) = ln Σ_o Δ_o^(−d) over the earlier thoughts that say the same as each row.

    Occurrences are the thoughts before the message with similarity ≥ τ_rep to the recalled one
    (itself included); Δ is their age at the message, in utterances or seconds, at least 1.
    """
    if not rows:
        return [], []
    prefix_rows = timeline.messages[position].first_row
    candidates, similarity = timeline.search(
        np.asarray(rows), prefix_rows, probes=timeline.index.rules.occurrence_probes
    )
    same = similarity >= settings.repeat_similarity
    same[np.searchsorted(candidates, rows), np.arange(len(rows))] = True
    source_positions = timeline.row_positions[candidates]
    if settings.age_unit == "seconds":
        ages = timeline.timestamps[position] - timeline.timestamps[source_positions]
    else:
        ages = (position - source_positions).astype(np.float64)
    decayed = np.maximum(ages, 1.0) ** (-settings.decay)
    activations = [math.log(float(decayed[same[:, k]].sum())) for k in range(len(rows))]
    counts = [int(same[:, k].sum()) for k in range(len(rows))]
    return activations, counts
