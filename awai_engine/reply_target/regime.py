"""How the channel is talking right now, and the speaker's own line against it, as features.

Why: the base features (:mod:`awai_engine.reply_target.features`) were fitted on #ubuntu, where
many conversations interleave and a speaker's next line mostly goes on with their own. In a small
team channel one conversation runs at a time, and the line just before, by another person, is
mostly what a message responds to: "How many users?" right after Dev's "login is broken" answers
Dev, not the asker's own line three back. What tells the two apart carries across channels: how
many people spoke in the last lines, whether the message reads as a new complete turn or as a
fragment going on ("and also …"), whether the other person's line between was put to nobody
else, and how long ago the own line was *relative* to the line just before and to the channel's
pace (IRC and Slack paces differ a hundredfold, so seconds alone do not carry), and whether
others said something since the speaker's own line that nobody has taken up yet (an open line:
a report, a question put to the room), and whether the message asks (a question right after an
open line asks about it; after the speaker's own, it may go on with it). A network fitted
on rows can learn such interactions only from the few own-line rows of quiet stretches, so the
interactions with the candidate being the speaker's own line are given as columns.

These columns are appended after the base ones (:data:`MODEL_FEATURES` is what the fitted model
reads) and, like them, read only the message and the lines before it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from awai_engine.reply_target.features import (
    FEATURE_NAMES,
    Candidates,
    asks,
    candidate_features,
    window,
)
from awai_engine.text_caches import text_cache
from awai_engine.timeline import Timeline

RECENT = 10
"""Lines of the message's line that make "right now": who spoke in them and at what pace."""

REGIME_NAMES: tuple[str, ...] = (
    "recent_speakers",
    "own_x_recent_speakers",
    "previous_x_recent_speakers",
    "opens_complete",
    "own_x_opens_complete",
    "own_x_opens_continuation",
    "own_x_previous_other_open",
    "own_x_previous_other_asks",
    "log_gap_over_pace",
    "own_x_gap_over_previous",
    "own_x_message_asks",
    "open_since_own",
    "open_x_message_asks",
    "own_x_open_since",
)
MODEL_FEATURES: tuple[str, ...] = (*FEATURE_NAMES, *REGIME_NAMES)
"""The columns the fitted model reads: the base features, then these."""

_SAME = FEATURE_NAMES.index("same_speaker")
_ADDRESSES_ANOTHER = FEATURE_NAMES.index("candidate_addresses_another")
_REPLIES_SINCE = FEATURE_NAMES.index("log_replies_to_candidate_since")
_SPEAKER_SINCE = FEATURE_NAMES.index("speaker_spoke_since")
_MESSAGE_ASKS = FEATURE_NAMES.index("message_asks")

_ADDRESS = re.compile(r"^\s*(?:<@[^>]+>|@\S+|[\w.'-]{1,24}:)\s*")
_OPENING_MARKS = re.compile(r"^[\s\"'“‘(\[*_~>-]+")
_CONTINUATIONS = ("and", "but", "also", "or", "plus", "then")
_CONTINUATIONS_UNSPACED = ("あと", "それと", "それから", "ちなみに", "でも", "ただ")
_QUESTION_WORDS = frozenset(
    [
        "what",
        "how",
        "why",
        "when",
        "where",
        "who",
        "which",
        "whose",
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "has",
        "have",
        "any",
        "anyone",
    ]
)


def model_features(
    timeline: Timeline, position: int, extra: Sequence[int] = (), size: int = 50
) -> Candidates:
    """The candidates of :func:`candidate_features` with the columns of :data:`REGIME_NAMES`
    appended: the rows the fitted model scores."""
    base = candidate_features(timeline, position, extra, size)
    return Candidates(base.positions, with_regime(timeline, position, base))


def with_regime(timeline: Timeline, position: int, base: Candidates) -> np.ndarray:
    """``base``'s feature table with the regime columns appended (float32, one row each)."""
    return np.hstack([base.features, regime_columns(timeline, position, base)])


def regime_columns(timeline: Timeline, position: int, base: Candidates) -> np.ndarray:
    """The :data:`REGIME_NAMES` columns of the candidates of ``base`` (in its order), read from
    the message, the last :data:`RECENT` lines of its line and the base features."""
    count = len(base.positions)
    if not count:
        return np.empty((0, len(REGIME_NAMES)), dtype=np.float32)
    at = np.asarray(base.positions)
    recent = window(timeline, position, RECENT)  # newest first
    codes = timeline.speaker_codes
    ts = timeline.timestamps
    speakers = len({int(codes[q]) for q in recent} | {int(codes[position])})
    recent_speakers = math.log(speakers) / math.log(RECENT + 1)
    own = base.features[:, _SAME] > 0
    previous = recent[0] if recent else -1
    is_previous = at == previous
    opening = _opening(timeline.messages[position].text)
    # The line just before, by another person, put to nobody else (the speaker or no one).
    other_open = other_asks = False
    if previous >= 0 and codes[previous] != codes[position]:
        row = np.flatnonzero(is_previous)
        other_open = bool(row.size) and base.features[row[0], _ADDRESSES_ANOTHER] == 0
        other_asks = other_open and asks(timeline.messages[previous])
    # Time: relative to the channel's pace over the recent lines, and the own line's gap
    # relative to the line just before's (both smoothed by the pace, so minute stamps of 0 s
    # and Slack's second stamps read alike).
    stamps = ts[[position, *recent]] if recent else ts[[position]]
    pace = float(max(1.0, (stamps[0] - stamps[-1]) / max(1, len(stamps) - 1)))
    gaps = np.maximum(0.0, ts[position] - ts[at])
    previous_gap = max(0.0, float(ts[position] - ts[previous])) if previous >= 0 else 0.0
    over_previous = np.log((gaps + pace) / (previous_gap + pace))
    # Another person's line said since the speaker last spoke, put to nobody else, whose
    # speaker nobody has answered by name since: what is open for the speaker to take up.
    # "How many users?" after Dev's report asks about the report, not the asker's own line.
    features = base.features
    open_since = (
        ~own
        & (features[:, _ADDRESSES_ANOTHER] == 0)
        & (features[:, _REPLIES_SINCE] == 0)
        & (features[:, _SPEAKER_SINCE] == 0)
    )
    message_asks = float(features[0, _MESSAGE_ASKS] > 0)
    opened = math.log1p(int(open_since.sum())) / math.log(RECENT + 1)
    columns = (
        np.full(count, recent_speakers),
        own * recent_speakers,
        is_previous * recent_speakers,
        np.full(count, float(opening == "complete")),
        own * (opening == "complete"),
        own * (opening == "continuation"),
        own * other_open,
        own * other_asks,
        np.log1p(gaps / pace) / 3.0,
        own * over_previous / 3.0,
        own * message_asks,
        open_since,
        open_since * message_asks,
        own * opened,
    )
    return np.stack(columns, axis=1).astype(np.float32)


@text_cache(maxsize=4096)
def _opening(text: str) -> str:
    """How a message opens, after any address: "continuation" (a word that goes on with what
    was said: "and", "but", "also", 「あと」), "complete" (a capital, a question word, or a
    script without letter case: a new turn), else "fragment" (a lowercase word)."""
    body = _OPENING_MARKS.sub("", _ADDRESS.sub("", text, count=1))
    if not body:
        return "fragment"
    lowered = body.casefold()
    first = re.split(r"[\s,.!?;:、。！？]", lowered, maxsplit=1)[0]
    if first in _CONTINUATIONS or lowered.startswith(_CONTINUATIONS_UNSPACED):
        return "continuation"
    if first in _QUESTION_WORDS or not body[0].islower():
        return "complete"
    return "fragment"
