"""Where a sentence of a message ends, for the cues that read one sentence rather than the message.

All three rules below read question and exclamation marks the same way:

- A run of them, of any script, is one end: "can u help me??", "really?!", "what?!?", 「本当？？」.
  Read mark by mark, "??" ends with a sentence "?" that asks nothing, and the question before it
  is lost.
- An ASCII run goes on with the word or link it stands in when an ASCII letter, a digit or one
  of a link's ``/ = & % # _`` follows it right away: "raw.php?i=6VWb", "/etc/init.d/?dm",
  "!java" and "#!/" end nothing. A space, the end, another mark, a closing bracket, a face
  (":S" in "codecs ?:S") or Japanese text after it end the sentence, and so does a "?" after a
  space, as no word or link starts with one ("what is the problem ?http://…"). A full-width
  。！？ ends one wherever it stands (Japanese runs on without spaces). The cost: "install
  right?like the grub?" reads as one sentence, asking all the same.
- A line break ends one.

They differ only in where a full stop ends one:

- :func:`first_sentence` (what a stance says): a full stop ends nothing.
- :func:`stop_pieces` (does the opening ask; does what follows a short "ok" ask): every full
  stop ends one, even in "8.10" or "e.g.".
- :func:`sentences` (the last question asked; the condition of an agreement): a full stop ends
  one only before a space, and never after "e.g.", "i.e.", "vs." or "cf.".

Why three and not one: each cue was written and tested with the rule it reads with, and no one
rule keeps every cue's decision. On the 13,594 messages of both dev files and the two samples,
reading all three at :func:`sentences` changes 4 stances (and whether 27 messages of marks alone,
such as "?", hold a question). Each function says what its use would lose under another's rule.
"""

from __future__ import annotations

import re

_IN_A_WORD = r"[A-Za-z0-9/=&%#_]"
"""What, right after an ASCII ``?`` or ``!``, shows the mark stands inside a word or a link."""
_MARKS_END = (
    rf"(?<![!?])[!?]*[。！？][!?。！？]*|(?<!\S)\?[!?]*|(?<![!?])[!?]+(?![!?]|{_IN_A_WORD})"
)
"""A run of marks that ends a sentence: one with a full-width mark, anywhere; an ASCII one that
opens with a "?" after a space, or that no word or link goes on after. A run is matched from
its first mark only: tried again from each mark inside it, a long run ("?????…") cost the square
of its length (a second for 8,000 marks, minutes for a message of 100,000)."""
_MARKS_GO_ON = rf"(?:(?<!\S)!|(?<=\S)[!?])[!?]*+(?={_IN_A_WORD})"
"""A run of ASCII marks inside a word or link ("php?i=6", "!java"), which ends nothing: taken
whole, for the same reason."""

_FIRST_SENTENCE_END = re.compile(rf"{_MARKS_END}|\n")
_STOP_PIECE = re.compile(rf"(?:[^。！？!?.\n]|{_MARKS_GO_ON})+[。！？!?.]*")
# Abbreviations that lead on to what follows them ("a tool, e.g. gparted?"): their full stop ends
# no sentence. Opening a sentence ("…? I.e. will I get an error?"), they are a lead-in the
# question reads past (:data:`awai_engine.cues.words.LEAD_IN`).
_SENTENCE_END = re.compile(
    rf"{_MARKS_END}|(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bcf)\.(?=\s)", re.IGNORECASE
)


def first_sentence(text: str) -> str:
    """The message up to the first run of 。！？ or ASCII ``!`` or ``?`` that ends a sentence,
    or its first line break, that end left out; a full stop does not end it. Why: a stance is
    read from the words of the first sentence, and revision words may follow a full stop
    ("Sorry. I meant the staging box" revises), while Japanese says its verdict at the end,
    before 。 (「…なので賛成です。」 agrees). Ending it at a full stop as well changes 1 stance on
    dev ("no, there are two versions. … I meant the server one" would read as a plain no rather
    than a revision)."""
    return _FIRST_SENTENCE_END.split(text.strip(), maxsplit=1)[0]


def stop_pieces(text: str) -> list[str]:
    """The message cut after every run of 。！？!?. that ends a sentence and at line breaks,
    each piece with the marks that close it; a full stop cuts even inside "8.10", "e.g." or a
    link. Why: whether a message opens by asking must see "Sounds good.Who writes it?" open
    with a statement, space or not. Read at :func:`sentences` instead, 3 stances on dev change
    ("but it works with 2.6.7 for you?" would ask rather than disagree, and so would "actually
    where can i find … for ubuntu 8.10?", which is no disagreement)."""
    return _STOP_PIECE.findall(text)


def sentences(text: str) -> list[str]:
    """The message cut after each run of marks that ends a sentence, after a full stop followed
    by a space (not that of "e.g.", "i.e.", "vs." or "cf.") and at line breaks; pieces may be
    empty. Why: the last question asked is read from its opening words, so "Is it fixed in
    ubuntu 8.10?" and "Can I use a tool, e.g. gparted?" must stay one sentence that opens with
    "Is" or "Can" (a full stop inside a version, a file name or a link cuts nothing); the
    condition of an agreement ("works for me if QA signs off") is quoted up to the same end.
    Read at :func:`stop_pieces` instead, 51 yes/no questions on dev change."""
    pieces: list[str] = []
    for line in text.split("\n"):
        start = 0
        for end in _SENTENCE_END.finditer(line):
            pieces.append(line[start : end.end()])
            start = end.end()
        pieces.append(line[start:])
    return pieces
