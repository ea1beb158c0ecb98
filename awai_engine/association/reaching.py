"""Does a message reach for the channel's past, or continue the talk in the room?

Why it exists: the far past is worth a slot in two situations that look alike to similarity and
word search. Someone who asks about what a person said ("what did Caroline research?") or puts
a question to the room ("is the 420 limit still there?") is reaching back, and a loose match in
the archive is often the answer. Someone who continues the talk ("lol", "my fx5200 works fine")
is not, and the far lines that happen to share a word or a nick with it are rarely on topic
(docs/evaluation.md, "Precision: who reaches for the past"). Both signs are read from the
message and the speakers who spoke before it only, so they are functions of the prefix.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from awai_engine.lexical import terms
from awai_engine.timeline import Timeline

QUESTION_MARKS = ("?", "？")  # the Japanese full-width one too
_LINK = re.compile(r"\b[a-z][a-z0-9+.-]*://\S*[^\s?？]", re.IGNORECASE)  # not its last "?"


# What sets a name off from the sentence it opens or closes ("will: …", "May, …", "thanks | will").
_SET_OFF = frozenset(":,;|-–—>.!?")
# Given names that are also English words a sentence often opens or closes with ("Will do",
# "May I…", "Hope this helps", "…a work of art"). A list of its own: a stop-word list misses
# most of them, and importing one (scikit-learn's) would cost every fresh reading its import.
ORDINARY_WORD_NAMES = frozenset(
    [
        "april",
        "art",
        "august",
        "bill",
        "can",
        "chase",
        "dawn",
        "don",
        "drew",
        "faith",
        "frank",
        "grace",
        "guy",
        "hope",
        "jack",
        "joy",
        "june",
        "mark",
        "max",
        "may",
        "miles",
        "page",
        "pat",
        "penny",
        "ray",
        "rich",
        "rose",
        "sky",
        "summer",
        "sunny",
        "sue",
        "will",
    ]
)
EdgeSetOff = Literal["ordinary-words", "always"]


def names_the_absent(
    timeline: Timeline, position: int, addressed_at_edge: frozenset[str] = frozenset()
) -> bool:
    """Does the message at ``position`` name someone who spoke before it without addressing
    them ("what did Caroline say"; ``@name``, ``name:`` and a name as the first or last words,
    ``addressed_at_edge``, address)? People talk *about* a person's earlier words that way,
    rather than *to* them."""
    named = timeline.named_speakers(position)
    if not named:
        return False
    addressed = {
        name.casefold() for name in (*timeline.messages[position].addressees, *addressed_at_edge)
    }
    return any(timeline.speaker_name(s).casefold() not in addressed for s in named)


def asks_the_room(timeline: Timeline, position: int) -> bool:
    """Is the message at ``position`` a question put to no one in particular? Anything said in
    the channel may answer it, the far past included; a question put to someone is theirs."""
    message = timeline.messages[position]
    said = _LINK.sub(" ", message.text)  # a link's query string ("?q=…") asks nothing
    return not message.addressees and any(mark in said for mark in QUESTION_MARKS)


def named_at_the_edge(
    timeline: Timeline, position: int, set_off: EdgeSetOff = "ordinary-words"
) -> frozenset[str]:
    """Names of the earlier speakers the message at ``position`` names as its first or last
    words ("tim - you need a wired one", "!ask | jered", "bonhoffer netstat -ln"): the informal
    way to address someone where the platform's mention (``@name``) or ``name:`` is not used.

    A name that is also an ordinary word (:data:`ORDINARY_WORD_NAMES`: "Will", "May", "Hope")
    opens and closes sentences by itself ("Will do, thanks", "May I ask…", "…I doubt it will"),
    so it addresses only when punctuation sets it off ("will: try this", "thanks, will"); with
    ``set_off="always"`` every name must be set off."""
    named = timeline.named_speakers(position)
    if not named:
        return frozenset()
    text = timeline.messages[position].text
    words = terms(text)
    found = set()
    for speaker_id in named:
        speaker = timeline.speaker_name(speaker_id)
        name = frozenset(terms(speaker))
        first = name <= set(words[: len(name)])
        last = name <= set(words[-len(name) :])
        if not (first or last):
            continue
        if set_off == "always" or _ordinary_words(speaker):
            first = first and _set_off_after(text, speaker)
            last = last and _set_off_before(text, speaker)
        if first or last:
            found.add(speaker)
    return frozenset(found)


def _folded(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _ordinary_words(name: str) -> bool:
    """Whether every word of a speaker's name is also an ordinary English word ("Will", "Hope")."""
    words = re.findall(r"\w+", _folded(name))
    return bool(words) and all(word in ORDINARY_WORD_NAMES for word in words)


def _set_off_after(text: str, name: str) -> bool:
    """Does ``text`` open with ``name`` set off from what follows ("will: …", "May, …", or the
    name alone)?"""
    opening = re.match(rf"[\W_]*{re.escape(_folded(name))}(?!\w)(.*)", _folded(text), re.DOTALL)
    if opening is None:
        return False
    rest = opening.group(1).lstrip()
    return not rest or rest[0] in _SET_OFF


def _set_off_before(text: str, name: str) -> bool:
    """Does ``text`` close with ``name`` set off from what precedes it ("thanks, will", "!ask |
    will", "@will", or the name alone)?"""
    closing = re.search(rf"(?<!\w){re.escape(_folded(name))}[\W_]*$", _folded(text))
    if closing is None:
        return False
    before = _folded(text)[: closing.start()].rstrip()
    return not before or before[-1] in _SET_OFF | {"@", "("}
