"""How a cue word is found in a message, and the words more than one cue reads.

Why one place: every cue asks the same things of a message — does it open with one of these
words, as a whole word (Latin) or a prefix (Japanese), once the ``@name`` or ``Name:`` it is
addressed with and its opening punctuation are set aside — and a cue that matched words its own
way would disagree with the others about where a message begins.
"""

from __future__ import annotations

import functools
import re

_WORD_END = r"(?![a-z0-9'])"
"""After a Latin cue word: no letter, digit or apostrophe goes on with it ("no" is not "now")."""
NOT_AFTER_A_LETTER = r"(?<![a-z])"
"""Before a cue word found anywhere in a message: it starts a word ("if" is not in "gif")."""

OPENING = re.compile(r"^(?:(?!\+1|👍)[\s\W_])*", re.UNICODE)
"""Punctuation and spaces a message opens with; "+1" and 👍 are words here."""

_ADDRESS = re.compile(r"^\s*(?:@\S+|[\w.'-]{1,24}(?: [\w.'-]{1,24})?:)\s+")
"""``@name`` or ``Name:`` / ``First Last:`` opening a message (as the adapters mark addressing)."""

_LEAD_WORDS = (
    r"(?:so|and|but|ok|okay|also|then|hey|btw|oh|well|um|hm+|anyway|anyways|right|now)\b"
    r"|i\.e\.|e\.g\.|ところで|さて|それで|じゃあ|では|で(?=[、,])"
)
LEAD_IN = re.compile(rf"(?:(?:{_LEAD_WORDS})[\s,.!—–、-]*)*")
"""Words a message may open with before what it does ("so", "anyway", "ok", ところで, さて…), and
the "i.e." or "e.g." a sentence restating or illustrating the one before opens with ("…? I.e.
will I get an error?" asks "will I get an error?"); matches the empty string at least."""

YES_OR_NO = (
    "yes",
    "yeah",
    "yep",
    "yup",
    "yea",
    "no",
    "nope",
    "nah",
    "はい",
    "いいえ",
    "いや",
    "うん",
    "ううん",
    "ええ",
)
"""The words that answer a yes/no question by themselves."""


@functools.cache
def phrases(words: tuple[str, ...], before: str = "") -> re.Pattern[str]:
    """Any of ``words`` as a whole word (longest first), after ``before``: compiled once per
    list, as every reading asks these of several messages."""
    alternation = "|".join(re.escape(phrase) for phrase in sorted(words, key=len, reverse=True))
    return re.compile(rf"{before}(?:{alternation}){_WORD_END}")


def strip_address(text: str) -> str:
    """The message without a leading ``@name`` or ``Name:`` and its opening punctuation."""
    return OPENING.sub("", _ADDRESS.sub("", text, count=1))


def opens_with(text: str, words: tuple[str, ...]) -> re.Match[str] | None:
    """The phrase ``text`` opens with, as a whole word (Latin) or a prefix (Japanese), after any
    address; matched in the lowered message with its address stripped."""
    lowered = strip_address(text).lower()
    return phrases(words).match(lowered)
