"""An agreement with an agreement agrees with what that one agreed with.

Why: after Maya's plan and two "works for me"s, Priya's "I think that works, as long as…" agrees
with the plan. The model, fitted on lines one by one, gives each "works for me" some of the
probability and the plan the rest, so the plan alone may stay under the bar though everything
points at it. When a message opens with an agreement, the probability of each candidate that is
itself an agreement is handed on to what *that* message agrees with — by the same model, read
for it in its own place (so only earlier lines count: causal like the features) — and added to
those candidates. Nothing changes for a message that does not open with an agreement, or when no
candidate agrees.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from awai_engine.cues.stance import opening_stance
from awai_engine.reply_target.model import ReplyModel
from awai_engine.reply_target.regime import model_features
from awai_engine.text_caches import text_cache
from awai_engine.timeline import Timeline

DEPTH = 3
"""Agreements followed back through agreements: "works for me" after "+1" after the plan."""
FOLLOWED = 3
"""Agreeing candidates followed per message, the likeliest first: the rest carry little."""
FLOOR = 0.05
"""The least probability of an agreeing candidate worth following."""


def through_agreements(
    timeline: Timeline,
    position: int,
    model: ReplyModel,
    positions: Sequence[int],
    probabilities: np.ndarray,
) -> np.ndarray:
    """``probabilities`` of the candidates at ``positions`` of the message at ``position``, each
    raised by what its agreeing candidates hand on to it (at most 1)."""
    if not agrees(timeline.messages[position].text):
        return probabilities
    handed, _ = _handed_on(timeline, positions, probabilities, model, DEPTH)
    if not handed:
        return probabilities
    raised = probabilities.copy()
    for i, candidate in enumerate(positions):
        raised[i] = min(1.0, raised[i] + handed.get(candidate, 0.0))
    return raised


def _handed_on(
    timeline: Timeline,
    positions: Sequence[int],
    probabilities: np.ndarray,
    model: ReplyModel,
    depth: int,
) -> tuple[dict[int, float], frozenset[int]]:
    """What the agreeing candidates among ``positions`` pass on, by position — each one's
    probability, split as its own reading splits it over what it agrees with — and which
    candidates passed theirs on."""
    agreeing = [
        (float(p), q)
        for q, p in zip(positions, probabilities, strict=True)
        if p >= FLOOR and agrees(timeline.messages[q].text)
    ]
    followed = sorted(agreeing, reverse=True)[:FOLLOWED]
    handed: dict[int, float] = {}
    for p, q in followed:
        for target, share in _agreed_with(timeline, q, model, depth - 1).items():
            handed[target] = handed.get(target, 0.0) + p * share
    return handed, frozenset(q for _, q in followed)


def _agreed_with(
    timeline: Timeline, position: int, model: ReplyModel, depth: int
) -> dict[int, float]:
    """What the agreement at ``position`` responds to, as shares summing to 1 by position, the
    shares of its own agreeing candidates handed on (while ``depth`` lasts)."""
    found = model_features(timeline, position)
    probabilities = model.probabilities(found.features)
    handed, passed = (
        _handed_on(timeline, found.positions, probabilities, model, depth) if depth else ({}, ())
    )
    weights = {
        q: float(p) for q, p in zip(found.positions, probabilities, strict=True) if q not in passed
    }
    for target, weight in handed.items():
        weights[target] = weights.get(target, 0.0) + weight
    total = sum(weights.values())
    return {q: w / total for q, w in weights.items()} if total > 0 else {}


@text_cache(maxsize=4096)
def agrees(text: str) -> bool:
    """Whether the text opens with an agreement that takes a side ("works for me", "sgtm",
    "いいと思います"), not a short word that may only answer a question ("ok", "yes")."""
    stance = opening_stance(text)
    return stance is not None and stance.relation == "agrees" and not stance.plain
