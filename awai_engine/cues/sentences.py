"""Where a sentence of a message ends, for the cues that read one sentence rather than the message.

All three rules below end a sentence at 。！？, at an ASCII ``!`` or ``?`` and at a line break;
they differ in where a full stop ends one and in whether a run of marks is one end or several:

- :func:`first_sentence` (what a stance says): a full stop ends nothing.
- :func:`stop_pieces` (does the opening ask; does what follows a short "ok" ask): every full
  stop ends one, even in "8.10" or "e.g."; a run of marks such as "?!" stays with its piece.
- :func:`sentences` (the last question asked; the condition of an agreement): a full stop ends
  one only before a space; each ``?`` or ``!`` ends one.

Why three and not one: each cue was written and tested with the rule it reads with, and no one
rule keeps every cue's decision. On the 13,594 messages of both dev files and the two samples,
one rule for all three (a full-width mark ends a sentence anywhere, an ASCII one only before a
space or the end) changes 29 decisions: 25 yes/no questions and 4 stances. Each function says
what its use would lose under another's rule.
"""

from __future__ import annotations

import re

_FIRST_SENTENCE_END = re.compile(r"[。！？!?\n]")
_STOP_PIECE = re.compile(r"[^。！？!?.\n]+[。！？!?.]*")
_SENTENCE_BREAK = re.compile(r"(?<=[。！？!?])|(?<=\.)(?=\s)|\n")


def first_sentence(text: str) -> str:
    """The message up to its first 。！？, ``!``, ``?`` or line break, that mark left out; a full
    stop does not end it. Why: a stance is read from the words of the first sentence, and
    revision words may follow a full stop ("Sorry. I meant the staging box" revises), while
    Japanese says its verdict at the end, before 。 (「…なので賛成です。」 agrees). Ending it at a
    full stop as well changes 1 stance on dev ("no, there are two versions. … I meant the server
    one" would read as a plain no rather than a revision)."""
    return _FIRST_SENTENCE_END.split(text.strip(), maxsplit=1)[0]


def stop_pieces(text: str) -> list[str]:
    """The message cut after every run of 。！？!?. and at line breaks, each piece with the marks
    that close it; a full stop cuts even inside "8.10", "e.g." or a link. Why: whether a message
    opens by asking must see "Sounds good.Who writes it?" open with a statement, space or not.
    Read at :func:`sentences` instead, 4 stances on dev change ("but it works with 2.6.7 for
    you?" and "but WHAT Games can i play?!" would ask rather than disagree)."""
    return _STOP_PIECE.findall(text)


def sentences(text: str) -> list[str]:
    """The message cut after each 。！？, ``!`` or ``?``, after a full stop followed by a space,
    and at line breaks; pieces may be empty. Why: the last question asked is read from its
    opening words, so "Is it fixed in ubuntu 8.10?" must stay one sentence that opens with "Is"
    (a full stop inside a version, a file name or a link cuts nothing); the condition of an
    agreement ("works for me if QA signs off") is quoted up to the same end. Read at
    :func:`stop_pieces` instead, 71 yes/no questions on dev change."""
    return _SENTENCE_BREAK.split(text)
