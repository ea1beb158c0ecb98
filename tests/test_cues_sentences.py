"""Where a sentence ends for each cue (:mod:`awai_engine.cues.sentences`): version numbers, links,
"e.g.", ellipses, Japanese 。！？ and line breaks, and what each rule decides for the cue that
reads with it.
"""

from __future__ import annotations

import pytest

from awai_engine.cues.questions import asks_yes_or_no, has_question, is_question
from awai_engine.cues.sentences import first_sentence, sentences, stop_pieces
from awai_engine.cues.stance import opening_stance


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("Sorry. I meant the staging box", "Sorry. I meant the staging box"),
        ("e.g. this one. ok", "e.g. this one. ok"),
        ("ubuntu 8.10 works? yes", "ubuntu 8.10 works"),
        ("see https://example.com/a.php?id=3 now", "see https://example.com/a.php?id=3 now"),
        ("!java is the factoid? yes", "!java is the factoid"),
        ("can u help me?? yes", "can u help me"),
        ("wait... really? yes", "wait... really"),
        ("テストが不安定なので賛成です。来週にしましょう。", "テストが不安定なので賛成です"),
        ("本当！はい", "本当"),
        ("first line\nsecond", "first line"),
    ],
)
def test_a_stances_first_sentence_ends_at_a_question_or_exclamation_mark_or_a_line_break(
    text: str, first: str
) -> None:
    assert first_sentence(text) == first


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("ubuntu 8.10?", ["ubuntu 8.", "10?"]),
        ("see http://example.com/x", ["see http://example.", "com/x"]),
        ("e.g. this", ["e.", "g.", " this"]),
        ("Sounds good.Who writes it?", ["Sounds good.", "Who writes it?"]),
        ("really?!", ["really?!"]),
        ("see http://x.org/raw.php?i=6VWb ok?", ["see http://x.", "org/raw.", "php?i=6VWb ok?"]),
        ("wait... ok?", ["wait...", " ok?"]),
        ("本当？はい。そう！", ["本当？", "はい。", "そう！"]),
        ("first line\nsecond?", ["first line", "second?"]),
    ],
)
def test_stop_pieces_end_after_every_run_of_stops_full_stops_included(
    text: str, pieces: list[str]
) -> None:
    assert stop_pieces(text) == pieces


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Is it fixed in ubuntu 8.10? I use it.", ["Is it fixed in ubuntu 8.10?", " I use it."]),
        ("Read https://example.com/fix.html first?", ["Read https://example.com/fix.html first?"]),
        ("wait... is it up?", ["wait...", " is it up?"]),
        ("Use a tool, e.g. gparted.", ["Use a tool, e.g. gparted."]),
        ("Does it fail? I.e. is it down?", ["Does it fail?", " I.e. is it down?"]),
        ("本当？はい。そう！", ["本当？", "はい。", "そう！"]),
        ("first line\nsecond?", ["first line", "second?"]),
    ],
)
def test_sentences_end_at_a_mark_or_a_line_break_and_at_a_full_stop_only_before_a_space(
    text: str, said: list[str]
) -> None:
    assert [sentence for sentence in sentences(text) if sentence] == said


@pytest.mark.parametrize(
    "text",
    [
        "Is it fixed in ubuntu 8.10?",
        "Did you try https://example.com/fix.html first?",
        "wait... is it up?",
        "了解です。デプロイは終わりましたか？",
    ],
)
def test_a_yes_no_question_is_read_whole_across_versions_links_and_ellipses(text: str) -> None:
    assert asks_yes_or_no(text)


def test_a_short_word_set_off_by_a_full_stop_without_a_space_still_agrees() -> None:
    stance = opening_stance("Sounds good.Who writes it?")
    assert stance is not None and stance.relation == "agrees"


def test_revision_words_after_a_full_stop_still_revise() -> None:
    stance = opening_stance("Sorry. I meant the staging box")
    assert stance is not None and stance.relation == "revises"


def test_a_note_taken_before_a_question_after_an_ellipsis_takes_no_stance() -> None:
    assert has_question("... is it up?")
    assert opening_stance("ok... is it up?") is None


def test_a_condition_ends_at_its_sentence_or_line() -> None:
    for text in (
        "Works for me if QA signs off\nthen we ship it",
        "Works for me if QA signs off. Ship it!",
    ):
        stance = opening_stance(text)
        assert stance is not None and stance.condition == "if QA signs off"
    stance = opening_stance("賛成です、テストが通るなら。来週リリースしましょう。")
    assert stance is not None and stance.condition is not None
    assert "来週" not in stance.condition  # 。 ends a sentence with no space after it


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("can u help me?? thanks", ["can u help me??", " thanks"]),
        ("what?!? no way", ["what?!?", " no way"]),
        ("本当？？はい", ["本当？？", "はい"]),
        ("本当?!はい", ["本当?!", "はい"]),
        ("that link is no use ?:S", ["that link is no use ?", ":S"]),
        (
            "what is the problem ?http://paste.example.org/1/",
            ["what is the problem ?", "http://paste.example.org/1/"],
        ),
    ],
)
def test_a_run_of_marks_is_one_end_before_a_space_a_face_or_japanese_or_a_link_after_a_space(
    text: str, said: list[str]
) -> None:
    assert [sentence for sentence in sentences(text) if sentence] == said


@pytest.mark.parametrize(
    "text",
    [
        "output: http://pastebin.example.com/raw.php?i=6VWbnFYQ here",
        "restart it with sudo /etc/init.d/?dm restart now",
        "see https://example.com/#!/page/2 for it",
        "try !java or !paste first",
        "http://lmgtfy.com/?q=ubuntu+%2B+ssh also",
    ],
)
def test_a_mark_inside_a_word_or_link_ends_no_sentence(text: str) -> None:
    assert [sentence for sentence in sentences(text) if sentence] == [text]
    assert first_sentence(text) == text
    assert not has_question(text)


@pytest.mark.parametrize(
    ("text", "condition"),
    [
        (
            "Works for me if we pick a tool, e.g. gparted. Ship it",
            "if we pick a tool, e.g. gparted",
        ),
        (
            "Works for me if http://ci.example.com/job?id=4 is green. Ship it",
            "if http://ci.example.com/job?id=4 is green",
        ),
    ],
)
def test_a_condition_runs_on_past_an_abbreviation_and_a_link(text: str, condition: str) -> None:
    stance = opening_stance(text)
    assert stance is not None and stance.condition == condition


def test_a_message_of_a_long_run_of_marks_is_read_like_a_short_one() -> None:
    """A run of marks is read from its first mark: read again from each mark inside it, a run
    of 16,000 took 3.5 s a call (the square of its length; minutes at the 100,000 characters a
    message may have), paid again by every reading that scores the message."""
    run = "?" * 20_000
    assert not is_question(run + "a")  # a word goes on after the run: no question ends there
    assert is_question("is it done " + run)
    short = sentences("is it done??? yes")  # the same split as a run of three
    assert sentences("is it done" + run + " yes") == [short[0].replace("???", run), short[1]]
    assert first_sentence("a" + "!" * 20_000 + "x") == "a" + "!" * 20_000 + "x"
    assert opening_stance("no" + "!" * 20_000) is not None
