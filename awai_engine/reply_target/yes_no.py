"""A yes or a no answers the latest yes/no question still open to its speaker.

Why: 「はい、金曜日にリリースできます。」 two lines after 「金曜日にリリースできますか？」, with Bob's
「ログは私が見ておきます。」 between, answers the question; so does "No, it stopped an hour ago."
after "Is the replica disk still filling up?". The model, fitted on #ubuntu's terse lines, reads
an answer that repeats the question's words (as Japanese answers do, character bigram for
bigram) like a line said again, and its order and confidence follow the line just before: the
headline read "agrees with" Bob's note, or named nothing. The words settle it: a message that
opens with a yes or a no and goes on with a statement (:func:`awai_engine.cues.answers.opens_with_yes_or_no`)
answers a question one answers with a yes or a no (:func:`awai_engine.cues.questions.asks_yes_or_no`),
and the one it answers is the latest such question of another speaker that is still open: said
after the speaker's own latest line, put to nobody else, by the person the message addresses if
it addresses someone, and no more than :data:`NEAR` lines back — one put to the speaker by name
before one put to the room. Reads the message, the
candidates and the candidates' features only, so it is as causal as they are.
"""

from __future__ import annotations

import numpy as np

from awai_engine.cues.answers import opens_with_yes_or_no
from awai_engine.cues.questions import asks_yes_or_no
from awai_engine.reply_target.features import FEATURE_NAMES
from awai_engine.text_caches import text_cache
from awai_engine.timeline import Timeline

NEAR = 5
"""Lines back a yes or a no looks for the question it answers: the farthest that costs neither
dev log accuracy (``bench.yes_no_answers``, one run: 1 to 5 lines keep channel two's 0.716 and
take #ubuntu's 0.702 to 0.703 from 3 on; 8 and more cost channel two 0.002). The rule changes
few headlines on IRC, where a yes is mostly addressed by name; it is for team chats, where it is
not."""

_ADDRESSES_ANOTHER = FEATURE_NAMES.index("candidate_addresses_another")
_MESSAGE_ADDRESSES_ANOTHER = FEATURE_NAMES.index("addresses_another")
_ADDRESSES_SPEAKER = FEATURE_NAMES.index("candidate_addresses_speaker")


def answered_question(
    timeline: Timeline,
    position: int,
    positions: np.ndarray,
    features: np.ndarray,
    near: int = NEAR,
) -> int | None:
    """The index into ``positions`` (the candidates, ``features`` their table in the same
    order) of the yes/no question the message at ``position`` answers with its opening yes or
    no, or None: it does not open so, or no such question is open to its speaker."""
    if near <= 0 or not opens_with_yes_or_no(timeline.messages[position].text):
        return None
    codes = timeline.speaker_codes
    speaker = codes[position]
    open_questions = []
    for index in np.argsort(-positions, kind="stable").tolist():
        candidate = int(positions[index])
        if position - candidate > near or codes[candidate] == speaker:
            break  # too far, or the speaker has spoken since: nothing older is open to them
        if (
            features[index, _ADDRESSES_ANOTHER] == 0
            and features[index, _MESSAGE_ADDRESSES_ANOTHER] == 0
            and _asks_yes_or_no(timeline.messages[candidate].text)
        ):
            open_questions.append(index)
    put_to_speaker = [k for k in open_questions if features[k, _ADDRESSES_SPEAKER] > 0]
    return (put_to_speaker or open_questions or [None])[0]


@text_cache(maxsize=4_096)
def _asks_yes_or_no(text: str) -> bool:
    return asks_yes_or_no(text)
