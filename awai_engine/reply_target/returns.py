"""A message that opens by going back to a topic names the line its words go back to.

Why: "Back to the replica disk — is it still filling up?" follows the speaker's own last line or
someone else's, yet what it responds to is the earlier line about the replica disk. The model,
fitted on #ubuntu where such openings are rare, ranks by turn-taking and names the line just
before or the speaker's own latest, and the headline reads "Continues what <speaker> said": a
person sees at once that it is wrong. When the message opens with a return cue
(:func:`awai_engine.cues.returns.opens_returning`), the line just before is what it leaves, not what it
goes back to: the candidate closest to it in meaning and words among the others (the speaker's
own earlier lines included: one goes back to one's own topic too) goes first, if it is closer
than the line just before (else the words point at what the message follows, and the model's
order stands). Reads the candidates' features only, so
it is as causal as they are.
"""

from __future__ import annotations

import numpy as np

from awai_engine.cues.returns import opens_returning
from awai_engine.reply_target.features import FEATURE_NAMES
from awai_engine.timeline import Timeline

_COSINE = FEATURE_NAMES.index("cosine")
_OVERLAP = FEATURE_NAMES.index("word_overlap")


def returned_first(
    timeline: Timeline,
    position: int,
    positions: np.ndarray,
    features: np.ndarray,
    order: np.ndarray,
) -> np.ndarray:
    """``order`` (indices into ``positions``, best first) with the line the message goes back to
    first, when it opens with a return cue; ``features``: the candidates' table in
    ``positions``' order. The confidence stays the model's best's: the message responds to
    something, and the line it names replaces it."""
    if len(positions) < 2 or not opens_returning(timeline.messages[position].text):
        return order
    closeness = features[:, _COSINE] + features[:, _OVERLAP]
    left = positions == positions.max()
    candidates = np.flatnonzero(~left)
    best = candidates[np.argmax(closeness[candidates])]
    if closeness[best] <= closeness[left].max():
        return order
    return np.concatenate(([best], order[order != best]))
