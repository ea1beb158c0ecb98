"""Stage 5: the reply-target scorer's best candidates, added after recall.

Why: the message a reading names must be one the reader and the language model are shown, with
its reference; recall's items are there for what they say, these for whom the message answers
(often two to four lines back, in the flow's summaries or not at all). So they come outside the
budget A.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from awai_engine.association.picks import as_associations, best_thought
from awai_engine.association.settings import ActivationSettings, AssociationSettings
from awai_engine.timeline import Timeline
from awai_engine.values import Association, Flow, ReplyScore

REPLY_ITEMS = 3
"""The reply-target scorer's best candidates in the context (those clearing :data:`REPLY_FLOOR`)."""
REPLY_FLOOR = 0.05
"""The least reply probability of a candidate added to the context: a 2% candidate is not what
the message responds to, and showing it to the model only costs its attention. Chosen on the dev
logs by ``bench.reply_target_floor``: parent-in-context 96.85% → 96.80% (#ubuntu) and 97.11% →
96.95% (channel two), with 0.22 candidates added per message instead of 0.28–0.29."""


def with_reply_targets(
    timeline: Timeline,
    position: int,
    flow: Flow,
    associations: tuple[Association, ...],
    replies: Sequence[ReplyScore],
    association: AssociationSettings,
    activation: ActivationSettings,
) -> tuple[Association, ...]:
    """The recalled items, then the scorer's ``REPLY_ITEMS`` best candidates for what the message
    responds to that neither the flow nor recall holds and that clear :data:`REPLY_FLOOR`
    (reason ``reply``). The confident first always comes, whatever its own probability: it is
    what the headline names (a line the scorer put first by a return cue or as the question
    asked since, see :mod:`awai_engine.reply_target.scorer`), and a headline names only what the
    reader is shown."""
    held = {*flow.message_ids(), *(item.source.message_id for item in associations)}
    missing = [
        score
        for score in replies[:REPLY_ITEMS]
        if score.message.message_id not in held
        and (score.probability >= REPLY_FLOOR or score.confident)
    ]
    if not missing:
        return associations
    cues = timeline.vectors[np.asarray(timeline.rows_of(position))]
    picks = [best_thought(timeline, score.message.position, cues, "reply") for score in missing]
    return (*associations, *as_associations(timeline, position, picks, association, activation))
