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

from awai_engine.lexical import terms
from awai_engine.timeline import Timeline

QUESTION_MARKS = ("?", "？")  # the Japanese full-width one too
_LINK = re.compile(r"\b[a-z][a-z0-9+.-]*://\S*[^\s?？]", re.IGNORECASE)  # not its last "?"


def names_the_absent(timeline: Timeline, position: int) -> bool:
    """Does the message at ``position`` name someone who spoke before it without addressing
    them ("what did Caroline say"; ``@name`` and ``name:`` address)? People talk *about* a
    person's earlier words that way, rather than *to* them."""
    named = timeline.named_speakers(position)
    if not named:
        return False
    addressed = {name.casefold() for name in timeline.messages[position].addressees}
    return any(timeline.speaker_name(s).casefold() not in addressed for s in named)


def asks_the_room(timeline: Timeline, position: int) -> bool:
    """Is the message at ``position`` a question put to no one in particular? Anything said in
    the channel may answer it, the far past included; a question put to someone is theirs."""
    message = timeline.messages[position]
    said = _LINK.sub(" ", message.text)  # a link's query string ("?q=…") asks nothing
    return not message.addressees and any(mark in said for mark in QUESTION_MARKS)


def named_at_the_edge(timeline: Timeline, position: int) -> frozenset[str]:
    """Names of the earlier speakers the message at ``position`` names as its first or last
    words ("tim - you need a wired one", "!ask | jered", "bonhoffer netstat -ln"): the informal
    way to address someone where the platform's mention (``@name``) or ``name:`` is not used."""
    named = timeline.named_speakers(position)
    if not named:
        return frozenset()
    words = terms(timeline.messages[position].text)
    found = set()
    for speaker_id in named:
        name = frozenset(terms(timeline.speaker_name(speaker_id)))
        if name <= set(words[: len(name)]) or name <= set(words[-len(name) :]):
            found.add(timeline.speaker_name(speaker_id))
    return frozenset(found)
