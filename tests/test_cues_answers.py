"""Whether a message opens the way an answer does (:mod:`awai_engine.cues.answers`): a yes or a
no set off before a statement, one of the options asked about, or not knowing.
"""

from __future__ import annotations

import pytest

from awai_engine.cues.answers import opens_as_answer, opens_with_yes_or_no


@pytest.mark.parametrize(
    ("text", "opens"),
    [
        ("Yes, it ended at 3am.", True),
        ("yes it works on the laptop", True),
        ("Omar: no. The template is broken.", True),
        ("はい、終わりました。", True),
        ("いや、まだです。", True),
        ("No sound, cannot find card!", False),
        ("no one knows yet", False),
        ("はいります。", False),
        ("yeah", False),
        ("Yes? What happened?", False),
        ("Yes, the log is at http://pastebin.example.com/raw.php?i=6VWb", True),
        ("No, is it?? I thought so", False),
    ],
)
def test_an_opening_yes_or_no_is_a_word_set_off_before_a_statement(text: str, opens: bool) -> None:
    assert opens_with_yes_or_no(text) is opens


@pytest.mark.parametrize(
    ("text", "answers"),
    [
        ("yea, it works now", True),
        ("ううん、まだです。", True),
        ("Both, honestly.", True),
        ("Not that I know of.", True),
        ("Omar: no. The template is broken.", True),
        ("Nobody has tried it.", False),
        ("The build is green.", False),
        ("Bother, it failed again.", False),
    ],
)
def test_an_answer_opens_with_a_yes_or_a_no_one_of_the_options_or_not_knowing(
    text: str, answers: bool
) -> None:
    assert opens_as_answer(text) is answers
