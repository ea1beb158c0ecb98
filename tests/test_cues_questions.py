"""Whether a message asks, and whether one answers it with a yes or a no
(:mod:`awai_engine.cues.questions`).
"""

from __future__ import annotations

import pytest

from awai_engine.cues.questions import asks_yes_or_no, is_question


def test_questions_are_recognised_in_english_japanese_and_spanish() -> None:
    assert is_question("How many users?")
    assert is_question("バックアップの復元テストは最後にいつやりましたか")
    assert is_question("¿Cuántos usuarios")
    assert not is_question("Filed as MOB-412.")
    assert not is_question("確か。")


@pytest.mark.parametrize(
    ("text", "yes_or_no"),
    [
        ("Can we ship on Friday?", True),
        ("Kai, you need a custom kernel for that?", True),
        ("Anyone tried the 8.10 kernel?", True),
        ("That fixed it, right?", True),
        ("Works now. Did you change the config?", True),
        ("リリースできますか？", True),
        ("Which branch should I use?", False),
        ("Why does it fail on ubuntu 8.10?", False),
        ("Rollback or hotfix?", False),
        ("hosting?", False),
        ("どこで失敗しましたか？", False),
        ("誰か知っていますか？", True),
        ("何か問題ありますか？", True),
        ("いつもこうなりますか？", True),
        ("どれか動きますか？", True),
        ("何もしていないですか？", True),
        ("誰が直しましたか？", False),
        ("何を入れましたか？", False),
        ("いつ終わりますか？", False),
        ("誰かな？", False),
        ("Right, can we ship on Friday?", True),
        ("Anyway, did the backup finish?", True),
        ("The build is green.", False),
    ],
)
def test_a_yes_no_question_asks_no_which_when_or_how_and_offers_no_choice(
    text: str, yes_or_no: bool
) -> None:
    assert asks_yes_or_no(text) is yes_or_no


@pytest.mark.parametrize(
    "text",
    [
        "can u help me??",
        "really?!",
        "what?!?",
        "本当？？",
        "can someone help me?:)",
        "it doesnt play the codecs ?:S",
        "did it work? :-)",
        "now what ?.",
        "why does ssh not work?...",
        "(did you reboot?)",
    ],
)
def test_a_question_mark_asks_before_more_marks_a_face_or_a_bracket(text: str) -> None:
    assert is_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "my wireless network is not displayed :?",
        "it fails again :-?",
        "the log: http://pastebin.example.com/raw.php?i=6VWbnFYQ",
        "wow!!",
    ],
)
def test_a_puzzled_face_a_link_or_exclamations_ask_nothing(text: str) -> None:
    assert not is_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "can u help me??",
        "Is there a command to list all chain names??????",
        "does xfce have an equivalent to that app ???",
        "can someone help me? http://forums.example.org/showpost.php?p=220353&postcount=112",
        "that link is no use... does it install the codecs ?:S",
        "Will anything break if I launch 1000 tar processes? I.e. will I get an error?",
        "Can I resize it with a partition tool, e.g. gparted?",
        "can u help me ? ?",
        "デプロイは終わりましたか？？",
    ],
)
def test_a_yes_no_question_is_seen_past_repeated_marks_faces_links_and_abbreviations(
    text: str,
) -> None:
    assert asks_yes_or_no(text)


@pytest.mark.parametrize(
    "text",
    [
        "This is the complete output, very strange: http://pastebin.example.com/raw.php?i=6VWb",
        "louq: this may interest you: http://forums.example.org/showthread.php?t=89491",
        "it works now :?",
        "which one should I use, e.g. gparted??",
        "??",
    ],
)
def test_a_link_a_puzzled_face_or_bare_marks_ask_no_yes_or_no(text: str) -> None:
    assert not asks_yes_or_no(text)
