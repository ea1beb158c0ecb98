"""A recalled thought as the stages pick it, and as the reading shows it.

Every stage returns :class:`Pick` values (which row, of which message, for which cue thought,
why, and the bar it cleared); :func:`as_associations` turns them into the reading's
:class:`~awai_engine.values.Association` items, with the activation of each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from awai_engine.association.activation import base_level_activation
from awai_engine.association.bars import threshold
from awai_engine.association.settings import ActivationSettings, AssociationSettings
from awai_engine.lexical import WordMatch
from awai_engine.timeline import Timeline
from awai_engine.values import Association, RecallReason

SIMILARITY_DECIMALS = 6


@dataclass(frozen=True)
class Pick:
    """One recalled thought before it becomes an :class:`Association`."""

    row: int
    source: int  # position of the thought's message
    cue: int  # which thought of the message, as an index into its rows
    similarity: float
    reason: RecallReason
    reach: Literal["near", "far"] = "near"
    bar: float | None = None  # the similarity bar it cleared, when not θ(d)
    words: WordMatch | None = None


def best_thought(
    timeline: Timeline,
    source: int,
    cues: np.ndarray,
    reason: RecallReason,
    reach: Literal["near", "far"] = "near",
    bars: np.ndarray | None = None,
    words: WordMatch | None = None,
) -> Pick:
    """The thought of message ``source`` closest to one of the cue thoughts, exactly (by margin
    over each cue's bar when ``bars`` are given, and that bar is then the pick's)."""
    rows = np.asarray(timeline.rows_of(source))
    similarity = timeline.vectors[rows] @ cues.T  # (source thoughts, cues)
    margin = similarity if bars is None else similarity - bars[None, :]
    thought, cue = np.unravel_index(int(margin.argmax()), margin.shape)
    return Pick(
        row=int(rows[thought]),
        source=source,
        cue=int(cue),
        similarity=float(similarity[thought, cue]),
        reason=reason,
        reach=reach,
        bar=None if bars is None else float(bars[cue]),
        words=words,
    )


def as_associations(
    timeline: Timeline,
    position: int,
    picks: list[Pick],
    association: AssociationSettings,
    activation: ActivationSettings,
) -> tuple[Association, ...]:
    """The picks as recalled items, with their bars and activations."""
    if not picks:
        return ()
    message = timeline.messages[position]
    rows_picked = [pick.row for pick in picks]
    activations, occurrences = base_level_activation(timeline, position, rows_picked, activation)
    recalled = []
    for pick, b, count in zip(picks, activations, occurrences, strict=True):
        source = timeline.messages[pick.source]
        distance = position - source.ref.position - 1
        bar = pick.bar if pick.bar is not None else float(threshold(distance, association))
        recalled.append(
            Association(
                source=source.ref,
                thought=source.thoughts[int(timeline.row_thought[pick.row])],
                cue_index=message.thoughts[pick.cue].index,
                distance=distance,
                similarity=round(pick.similarity, SIMILARITY_DECIMALS),
                threshold=round(bar, SIMILARITY_DECIMALS),
                activation=round(b, SIMILARITY_DECIMALS),
                occurrences=count,
                reason=pick.reason,
                reach=pick.reach,
                words_score=None if pick.words is None else round(pick.words.score, 4),
                words_share=None if pick.words is None else round(pick.words.share, 4),
                shared_words=() if pick.words is None else pick.words.terms,
            )
        )
    return tuple(recalled)
