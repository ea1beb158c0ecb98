"""What a reading says about the limits that cut what was derived from a message.

The full text of a message is always stored; what is derived from it is bounded (thoughts per
message, characters embedded per thought; see :class:`~awai_engine.settings.LimitsSettings`). A
user reading the message must not mistake a cut for the whole, so each cut that applied becomes a
note, worked out from what is stored rather than remembered from ingest.
"""

from __future__ import annotations

from collections.abc import Sequence

from awai_engine.settings import Settings
from awai_engine.text import split_sentences
from awai_engine.values import ReadingNote, Thought


def cut_notes(thoughts: Sequence[Thought], settings: Settings) -> tuple[ReadingNote, ...]:
    """Notes for the thoughts only partly embedded, and for a message with more than it could hold."""
    notes = []
    width = settings.embedding.max_chars
    long = tuple(thought.index + 1 for thought in thoughts if len(thought.text) > width)
    if long:
        notes.append(ReadingNote(kind="embedding-cut", count=width, thoughts=long))
    limit = settings.limits.max_thoughts_per_message
    if len(thoughts) >= limit and len(split_sentences(thoughts[-1].text)) > 1:
        notes.append(ReadingNote(kind="thoughts-merged", count=limit, thoughts=(limit,)))
    return tuple(notes)
