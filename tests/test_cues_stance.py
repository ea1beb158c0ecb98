"""What the opening of a message does to the one it responds to (:mod:`awai_engine.cues.stance`).

Word by word, in English and Japanese: agreement with its condition, concession, disagreement and
revision, and the ordinary chat that only opens like a cue.
"""

from __future__ import annotations

import pytest

from awai_engine.cues.stance import opening_stance


@pytest.mark.parametrize(
    ("text", "relation", "condition"),
    [
        (
            "Fine by me, as long as the refresh button gets a label.",
            "agrees",
            "as long as the refresh button gets a label",
        ),
        ("Works for me if we ship Friday.", "agrees", "if we ship Friday"),
        (  # the condition, not the reason given for it: a headline quotes it beside the message
            "Fine by me, as long as the refresh button gets a label, since people rely on it.",
            "agrees",
            "as long as the refresh button gets a label",
        ),
        ("Agreed 👍", "agrees", None),
        ("Fair, but the retries still double-charge people.", "concedes", None),
        ("I was wrong about the 500 threshold: it is 420 requests per second.", "revises", None),
        ("Actually, scratch that — the cache is fine.", "revises", None),
        ("No, that breaks the Android build.", "disagrees", None),
        ("@ben I don't think so, the numbers say otherwise.", "disagrees", None),
        ("テストが不安定なので賛成です。", "agrees", None),
        ("賛成です。来週にしましょう。", "agrees", None),
        ("その案には反対です。", "disagrees", None),
    ],
)
def test_opening_words_say_agreement_concession_revision_or_disagreement(
    text: str, relation: str, condition: str | None
) -> None:
    stance = opening_stance(text)
    assert stance is not None and stance.relation == relation
    assert stance.condition == condition


@pytest.mark.parametrize(
    "text",
    [
        "Nothing to add from my side.",
        "Okapis are related to giraffes.",
        "The release notes are in the doc.",
        "Notably, the crash only happens on Samsung.",
    ],
)
def test_words_that_merely_start_like_a_cue_are_not_one(text: str) -> None:
    assert opening_stance(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "No sound, cannot find card!",
        "ok, so where are we with the release?",
        "okay so what do I type next",
        "right?",
        "Fine-tuning the model takes a day.",
    ],
)
def test_ordinary_chat_that_opens_like_a_cue_takes_no_stance(text: str) -> None:
    assert opening_stance(text) is None


@pytest.mark.parametrize(
    ("text", "condition"),
    [
        ("Fine, date and time only", None),
        ("sgtm", None),
        ("+1", None),
        ("sounds good, as long as we keep the flag", "as long as we keep the flag"),
        ("I think that works, as long as Tuesday's test covers refunds too", "as long as"),
        ("それでいいと思います", None),
        ("問題ないです、テストが通るなら", None),
    ],
)
def test_common_forms_of_agreement_agree_and_keep_their_condition(
    text: str, condition: str | None
) -> None:
    stance = opening_stance(text)
    assert stance is not None and stance.relation == "agrees"
    assert (stance.condition or "").startswith(condition or "")


@pytest.mark.parametrize(
    "text",
    [
        "Ok. Rollback or hotfix?",
        "Yes. Which build are they on?",
        "No. Did you restart it after the update?",
        "了解です。最初に確認させてください。復元テストは最後にいつやりましたか？",
        "ok?! is it merged already",
        "but WHAT games can i play?!",
    ],
)
def test_a_short_word_that_opens_a_question_takes_no_stance(text: str) -> None:
    assert opening_stance(text) is None


@pytest.mark.parametrize(
    ("text", "relation"),
    [
        ("ok, numbers by tomorrow morning.", "agrees"),
        ("No, that breaks the Android build.", "disagrees"),
        ("了解です。手順書を直します。", "agrees"),
        ("Sounds good. Who writes the announcement?", "agrees"),
        ("no, the log is at http://pastebin.example.com/raw.php?i=6VWb", "disagrees"),
        ("ok!! shipping it", "agrees"),
    ],
)
def test_a_short_word_before_a_statement_or_a_real_agreement_keeps_its_stance(
    text: str, relation: str
) -> None:
    stance = opening_stance(text)
    assert stance is not None and stance.relation == relation


def test_an_opening_no_in_japanese_is_a_plain_answer_to_a_question_like_english_no() -> None:
    for text in ("いいえ、まだ途中です。", "No, it is still running."):
        stance = opening_stance(text)
        assert stance is not None and stance.relation == "disagrees" and stance.plain
