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
