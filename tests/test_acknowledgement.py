"""Which lines are wholly an acknowledgement, thanks, greeting or bare assent, and which say
something: a request, a question, an answer, a claim or any word beyond the talk itself."""

from __future__ import annotations

import pytest

from awai_engine.acknowledgement import is_acknowledgement, says_something


@pytest.mark.parametrize(
    "line",
    [
        "ok",
        "OK!",
        "Got it, thanks.",
        "Thank you so much, everyone 🙏",
        "thx @jordan",
        "Cheers Ana Lima.",
        "Great job team!",
        "Will do 👍",
        "Sounds good to me.",
        "lgtm",
        "+1",
        ":tada: :tada:",
        "🎉🎉",
        "Morning all!",
        "Hi there <@U024BE7LH>",
        "Sam, thanks!",
        "Fair.",
        "no worries",
        "haha nice one",
        "ありがとうございます！",
        "お疲れ様です〜",
        "佐藤さん、よろしくお願いします",
        "了解しました",
        "なるほどね",
        "はい、承知しました。",
        "お願いします。",
    ],
)
def test_a_line_wholly_of_thanks_greeting_or_assent_is_an_acknowledgement(line: str) -> None:
    assert is_acknowledgement(line)
    assert not says_something(line)


@pytest.mark.parametrize(
    "line",
    [
        "Thanks, can you send me the logs?",  # a request
        "Could you take a look",  # a request without a question mark
        "ok?",  # a question
        "Sure, after lunch.",  # an answer with a time
        "No.",  # an answer
        "Nope, still failing.",
        "Not sure that's it.",
        "Thanks for fixing the importer",  # thanks with what for
        "Great, the nightly build is green again.",  # a claim after the praise
        "ok 3",  # a number
        "thanks https://example.com/runbook",  # a link
        "ok `make clean`",  # code
        "Thanks. Rolling back now.",  # a capitalised word starting a sentence is no name
        "Done.",
        "Me too, my disk is full",
        "了解です。明日までに直します",
        "いいえ、まだです",
        "ありがとう、でも再起動が必要です",
        "確認してもらえますか",
    ],
)
def test_a_line_with_a_request_question_claim_or_content_word_says_something(
    line: str,
) -> None:
    assert says_something(line)
    assert not is_acknowledgement(line)


def test_a_known_name_the_line_thanks_is_no_content_word() -> None:
    assert says_something("well done priya and tomas")
    assert is_acknowledgement("well done priya and tomas", frozenset({"priya", "tomas"}))
    assert is_acknowledgement("Agree with Tomas.", frozenset({"tomas"}))
    assert says_something("Agree with Tomas on the retry limit.", frozenset({"tomas"}))
