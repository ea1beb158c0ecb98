"""Whether a message opens the way an answer to a question does.

Why apart from the stances: "No, not yet." after "Did the deploy finish?" answers the question
whoever spoke in between, while "No" after a plan disagrees with it; the reply-target scorer
asks this of a message to find the question it answers, before any stance is read.
"""

from __future__ import annotations

import re

from awai_engine.cues.questions import has_question
from awai_engine.cues.words import YES_OR_NO, opens_with, phrases, strip_address

# What sets a yes or a no off from the statement after it (besides the message's end): a mark,
# or a space after a word that begins nothing else ("yes it does", but "no one knows").
_YES_OR_NO_SET_OFF = re.compile(r"[\s]*(?:[,.!;:…—–、。，！]|$)")
_SPACE_SETS_OFF = frozenset(("yes", "yeah", "yep", "yup", "nope", "nah"))


def opens_with_yes_or_no(text: str) -> bool:
    """Whether the message opens with a yes or a no set off by itself and goes on with a
    statement: "Yes, twice. It still fails.", 「いいえ、まだ途中です。」, after any address. Why:
    said after a yes/no question, such a message answers it, whoever spoke in between; "No
    sound, cannot find card!" and 「はいります」 open with no such word, "Yes, but which branch?"
    asks back, and a bare "yeah" may as well agree with the line just before."""
    body = strip_address(text)
    lowered = body.lower()
    word = phrases(YES_OR_NO).match(lowered)
    if word is None:
        return False
    end = word.end()
    set_off = _YES_OR_NO_SET_OFF.match(lowered, end)
    if set_off is None and not (
        word.group(0) in _SPACE_SETS_OFF and lowered[end : end + 1].isspace()
    ):
        return False
    rest = body[end:]
    return any(c.isalnum() for c in rest) and not has_question(rest)


# Openings that answer a question rather than go on with one's own line: a yes or no, one of
# the options asked about ("Both", "Neither"), or not knowing ("Not that I know of").
_ANSWER_OPENINGS = (
    *YES_OR_NO,
    "both",
    "neither",
    "either",
    "not that i know",
    "not that i'm aware",
    "not yet",
    "not really",
    "not sure",
    "not exactly",
    "i think so",
    "i guess so",
    "i believe so",
    "i don't think so",
    "i dont think so",
    "no idea",
    "probably",
    "maybe",
    "sure",
    "of course",
    "correct",
    "exactly",
    "両方",
    "まだ",
    "たぶん",
    "多分",
    "そうです",
    "違います",
    "ちがいます",
)


def opens_as_answer(text: str) -> bool:
    """Whether ``text`` opens the way an answer to a question does ("Both, honestly.", "Not
    that I know of.", 「はい、…」), after any ``@name`` or ``Name:`` it is addressed with."""
    return opens_with(text, _ANSWER_OPENINGS) is not None
