"""Rank the earlier messages one message may respond to, by the fitted model.

Why it exists: the headline of a reading names one earlier message, and the person reading it
checks that first. The candidates are the last lines of the message's line and whatever
association recalled from further back; each gets the model's probability of being what the
message responds to, and the best one is *confident* when it clears the bar fitted on the dev
logs (a higher bar far back, where a wrong name misleads most). Causal like its features.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from awai_engine.reply_target.agreement import through_agreements
from awai_engine.reply_target.features import FEATURE_NAMES, candidate_features
from awai_engine.reply_target.model import ReplyModel
from awai_engine.timeline import Timeline
from awai_engine.values import Association, Flow, ReplyScore

_COSINE = FEATURE_NAMES.index("cosine")
_ASKS = FEATURE_NAMES.index("candidate_asks")


def reply_scores(
    timeline: Timeline, position: int, model: ReplyModel, recalled: Sequence[int] = ()
) -> tuple[ReplyScore, ...]:
    """Every candidate of the message at ``position`` with its probability, best first (ties:
    the nearer first). Only the best may be ``confident``. Recalled lines of another line of the
    channel (a thread's reply, the top level) are not candidates: the features count lines and
    turns as one line holds them, the model was fitted on lines alone, and a reply in a thread
    named as answering a top-level aside misleads (a review found exactly that)."""
    recalled = [q for q in recalled if _same_line(timeline, position, q)]
    candidates = candidate_features(timeline, position, recalled)
    if not candidates.positions:
        return ()
    probabilities = through_agreements(
        timeline, position, model, candidates.positions, model.probabilities(candidates.features)
    )
    positions = np.asarray(candidates.positions)
    order = np.lexsort((-positions, -probabilities))
    scores = []
    for rank, i in enumerate(order):
        source = int(positions[i])
        back = position - source
        bar = model.far_confident if back > model.far_back else model.confident
        probability = float(probabilities[i])
        # Built unvalidated: every field is computed here (a probability is a logistic output),
        # and a reading builds some hundred of them, validation being most of their cost.
        scores.append(
            ReplyScore.model_construct(
                message=timeline.messages[source].ref,
                probability=round(probability, 6),
                confident=rank == 0 and probability >= bar,
                asks=bool(candidates.features[i, _ASKS]),
                similarity=round(float(candidates.features[i, _COSINE]), 6),
            )
        )
    return tuple(scores)


def _same_line(timeline: Timeline, position: int, earlier: int) -> bool:
    """Whether ``earlier`` is in the line of the message at ``position``: its thread (the root
    included) for a thread reply, else the top level."""
    message, other = timeline.messages[position].ref, timeline.messages[earlier]
    if timeline.messages[position].is_reply:
        root = message.thread_root
        return other.ref.message_id == root or other.ref.thread_root == root
    return not other.is_reply


SHOWN = 5
"""Candidates a reading keeps besides those of its context: enough to see what else was close."""


def shown_replies(
    scores: Sequence[ReplyScore], flow: Flow, associations: Sequence[Association]
) -> tuple[ReplyScore, ...]:
    """The ``SHOWN`` best scores and those of every message of the context, best first."""
    held = {*flow.message_ids(), *(item.source.message_id for item in associations)}
    return tuple(
        score
        for rank, score in enumerate(scores)
        if rank < SHOWN or score.message.message_id in held
    )
