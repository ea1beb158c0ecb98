"""Assembling the reading context of one message (spec §1–3 and §5).

Every function here takes the channel's :class:`Timeline` and a position ``p`` and looks only at
positions before ``p`` (plus the message itself): the context is a pure function of the prefix,
which is the product's invariant. Vector math runs on the prefix slice of one float32 matrix, so
the cost grows with how far back the message is, not with how long the channel has become.
"""

from __future__ import annotations

import math

import numpy as np

from awai_engine.settings import ActivationSettings, AssociationSettings, FlowSettings
from awai_engine.timeline import Timeline
from awai_engine.values import Association, Flow, FlowSummary, FlowUtterance

SIMILARITY_DECIMALS = 6


def threshold(distance: np.ndarray | float, settings: AssociationSettings) -> np.ndarray:
    """θ(d) = min(θ_max, θ_0 + λ·ln(1 + d/d_0)): the further back, the closer in meaning."""
    rise = settings.theta_0 + settings.slope * np.log1p(
        np.asarray(distance, dtype=np.float64) / settings.d_0
    )
    return np.minimum(settings.theta_max, rise)


def build_flow(timeline: Timeline, position: int, settings: FlowSettings) -> Flow:
    """The previous utterance of the line as thoughts, and up to C−1 summaries before it."""
    line, earlier = timeline.line_before(position)
    if not earlier:
        return Flow(line=line)
    previous = timeline.messages[earlier[-1]]
    summaries = [timeline.messages[p] for p in earlier[-settings.capacity : -1]]
    return Flow(
        line=line,
        previous=FlowUtterance(message=previous.ref, thoughts=previous.thoughts),
        earlier=tuple(FlowSummary(message=m.ref, summary=m.summary) for m in summaries),
    )


def recall(
    timeline: Timeline,
    position: int,
    flow: Flow,
    association: AssociationSettings,
    activation: ActivationSettings,
) -> tuple[Association, ...]:
    """Earlier thoughts close in meaning to the message's thoughts, outside the flow window.

    A thought is a candidate when its best similarity to a cue reaches θ(d); candidates are ranked
    by margin s − θ(d), at most one per source message, at most ``A`` in all.
    """
    message = timeline.messages[position]
    prefix_rows = message.first_row
    if association.max_items == 0 or prefix_rows == 0:
        return ()
    cues = timeline.vectors[timeline.rows_of(position)]
    rows, similarity = timeline.search(cues, prefix_rows)  # (candidates before, cues)
    row_positions = timeline.row_positions[rows]
    distance = position - row_positions - 1
    margins = similarity - threshold(distance, association)[:, None].astype(np.float32)
    best_cue = margins.argmax(axis=1)
    best_margin = margins[np.arange(len(rows)), best_cue]

    flow_positions = [timeline.position_of[message_id] for message_id in flow.message_ids()]
    in_flow = np.isin(row_positions, flow_positions)
    eligible = np.flatnonzero((best_margin >= 0) & ~in_flow)
    if eligible.size == 0:
        return ()
    # Highest margin first; ties go to the more recent row so the order is total and stable.
    order = eligible[np.lexsort((-eligible, -best_margin[eligible]))]
    chosen: list[int] = []  # indexes into ``rows``
    seen_positions: set[int] = set()
    for candidate in order:
        source = int(row_positions[candidate])
        if source in seen_positions:
            continue
        seen_positions.add(source)
        chosen.append(int(candidate))
        if len(chosen) == association.max_items:
            break

    chosen_rows = [int(rows[candidate]) for candidate in chosen]
    activations, occurrences = base_level_activation(timeline, position, chosen_rows, activation)
    recalled = []
    for candidate, row, b, count in zip(chosen, chosen_rows, activations, occurrences, strict=True):
        source = timeline.messages[int(row_positions[candidate])]
        cue = int(best_cue[candidate])
        thought = source.thoughts[int(timeline.row_thought[row])]
        recalled.append(
            Association(
                source=source.ref,
                thought=thought,
                cue_index=message.thoughts[cue].index,
                distance=int(distance[candidate]),
                similarity=round(float(similarity[candidate, cue]), SIMILARITY_DECIMALS),
                threshold=round(
                    float(similarity[candidate, cue] - margins[candidate, cue]),
                    SIMILARITY_DECIMALS,
                ),
                activation=round(b, SIMILARITY_DECIMALS),
                occurrences=count,
            )
        )
    return tuple(recalled)


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
    candidates, similarity = timeline.search(timeline.vectors[rows], prefix_rows)
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
