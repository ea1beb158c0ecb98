"""A yes or a no followed by a statement answers the latest yes/no question still open to its
speaker, in English and Japanese, with or without a line between.

Why these tests: 「はい、…」 two lines after a question, with someone's note between, lost its
headline when the model was refitted (it reads an answer that repeats the question's words like
a line said again). The words settle what it answers; these check the rule on small channels
of their own, through the fitted scorer, and what it must leave alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from awai_engine.reply_target.model import reply_model
from awai_engine.reply_target.regime import model_features
from awai_engine.reply_target.scorer import reply_scores
from awai_engine.reply_target.yes_no import answered_question
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef, Thought

Line = tuple[str, str] | tuple[str, str, tuple[str, ...]]
"""A line of a small channel: its speaker, its text and whom it addresses, if anyone."""


def _timeline(lines: Sequence[Line]) -> Timeline:
    """One message per (speaker, text[, addressees]) line, half a minute apart; every vector
    alike, so meaning tells no line from another."""
    timeline = Timeline(dimension=2)
    for position, (speaker, text, *addressed) in enumerate(lines):
        ref = MessageRef(
            message_id=f"m{position}",
            speaker_id=speaker.casefold(),
            speaker_name=speaker,
            ts=30.0 * position,
            position=position,
        )
        vector = np.array([[1.0, 0.0]], dtype=np.float32)
        addressees = addressed[0] if addressed else ()
        timeline.append(ref, text, text, (Thought(index=0, text=text),), vector, addressees)
    return timeline


def _answered(lines: Sequence[Line]) -> int | None:
    """The position of the question the last line answers by its yes or no, if any."""
    timeline = _timeline(lines)
    position = len(lines) - 1
    found = model_features(timeline, position)
    positions = np.asarray(found.positions)
    index = answered_question(timeline, position, positions, found.features)
    return None if index is None else int(positions[index])


ANSWERS = [
    # (the question, a line between or None, the answer)
    ("Did the nightly backup finish?", "I'll update the runbook later.", "Yes, it ended at 3am."),
    ("Is the staging database still read-only?", None, "No, Mei switched it back an hour ago."),
    ("Are the invoices for March sent out?", "Lunch is here.", "nope, the template is broken"),
    ("バックアップは終わりましたか？", "手順書は後で直します。", "はい、3時に終わりました。"),
    ("ステージングのDBはまだ読み取り専用ですか？", None, "いいえ、1時間前に戻しました。"),
    ("請求書はもう送りましたか？", "お昼が届きました。", "うん、昨日まとめて送ったよ。"),
]


@pytest.mark.parametrize(("question", "between", "answer"), ANSWERS)
def test_a_yes_or_no_then_a_statement_answers_the_latest_open_yes_no_question(
    question: str, between: str | None, answer: str
) -> None:
    lines: list[Line] = [("Lena", "Morning all."), ("Omar", question)]
    if between is not None:
        lines.append(("Kai", between))
    lines.append(("Rin", answer))
    timeline = _timeline(lines)
    scores = reply_scores(timeline, len(lines) - 1, reply_model())
    assert scores[0].message.position == 1
    assert scores[0].confident


def test_a_question_put_to_the_speaker_by_name_goes_before_one_put_to_the_room() -> None:
    lines: list[Line] = [
        ("Omar", "Did anyone restart the cache?"),
        ("Lena", "Rin: did you rotate the keys?", ("Rin",)),
        ("Kai", "Is the VPN down again?"),
        ("Rin", "Yes, this morning."),
    ]
    assert _answered(lines) == 1


@pytest.mark.parametrize(
    "lines",
    [
        # a question not answered by a yes or a no
        [("Omar", "How many users are affected?"), ("Rin", "Yes, I checked the logs.")],
        [("Omar", "Rollback or hotfix?"), ("Rin", "No, not yet.")],
        [("Omar", "障害はいつ始まりましたか？"), ("Rin", "はい、確認しました。")],
        # the speaker has spoken since: the question is no longer open to them
        [
            ("Omar", "Did the deploy pass?"),
            ("Rin", "Looking now."),
            ("Kai", "The office wifi is flaky."),
            ("Rin", "Yes, it did."),
        ],
        # put to someone else
        [("Omar", "Kai: did you rotate the keys?", ("Kai",)), ("Rin", "Yes, I think so.")],
        # the answer addresses someone other than the asker
        [("Omar", "Did the deploy pass?"), ("Rin", "Kai: yes, it passed.", ("Kai",))],
        # too far back
        [
            ("Omar", "Did the deploy pass?"),
            *[("Kai", f"note {k} on the wifi.") for k in range(6)],
            ("Rin", "Yes, it passed."),
        ],
        # no statement after the yes, or it asks back
        [("Omar", "Did the deploy pass?"), ("Kai", "The wifi is flaky."), ("Rin", "yeah")],
        [("Omar", "Did the deploy pass?"), ("Rin", "Yes, but which build?")],
    ],
)
def test_a_yes_or_no_names_no_question_that_is_not_open_or_not_yes_or_no(
    lines: list[Line],
) -> None:
    assert _answered(lines) is None
