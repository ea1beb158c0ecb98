"""Which language a reading is shown in: the reader's, never one message's.

A reading's words (its title, section names, footers) follow the person who reads it. Where the
platform says which language the asker uses (Discord's interaction ``locale``, Slack's user
locale) and AWAI has words for it, that one; else the language the channel is talking in, most
of the messages just before it in its line, so one English message in a Japanese team's channel
(or one 「行きます！」 in an English one) does not switch the whole reading. Everything counted
is in the reading's context, which is what the asker may see of messages up to this one: the
choice keeps the invariant.
"""

from __future__ import annotations

from collections import Counter

from awai_engine.text import as_said, detect_language
from awai_engine.values import Reading
from bots.labels import LABELS


def supported(locale: str | None) -> str | None:
    """The language of a platform locale (``ja``, ``en-US``, ``ja_JP``) when AWAI has words for
    it; None otherwise (no locale, or a language AWAI does not speak)."""
    if not locale:
        return None
    language = locale.replace("_", "-").split("-")[0].lower()
    return language if language in LABELS else None


def prevailing_language(reading: Reading) -> str:
    """The language most of the messages just before it in its line are in (the reading's flow),
    each counted once; the message's own only when they are evenly split or there are none (one
    message never outvotes the channel). Messages recalled by meaning are not counted: a
    message recalls thoughts in its own language first, so they would side with it."""
    flow = reading.context.flow
    said = [item.summary for item in flow.earlier]
    if flow.previous is not None:
        said.append(as_said([thought.text for thought in flow.previous.thoughts]))
    own = detect_language(reading.context.text)
    counts = Counter(detect_language(text) for text in said)
    if not counts or counts[own] == max(counts.values()):
        return own
    return counts.most_common(1)[0][0]


def reader_language(reading: Reading, locale: str | None = None) -> str:
    """The language to show ``reading`` in to a reader whose platform locale is ``locale``."""
    return supported(locale) or prevailing_language(reading)
