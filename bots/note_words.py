"""A reading's notes in the reader's language.

Why here and not in the engine: the engine and the language-model backend know what happened
(what was cut, why the model gave no answer) but not who reads it; every surface words the same
:class:`~awai_engine.values.ReadingNote` through :mod:`bots.labels`, so a Japanese reader gets
Japanese notes next to Japanese labels, and no note carries a setting name or an HTTP code.
"""

from __future__ import annotations

from collections.abc import Sequence

from awai_engine.text import shorten
from awai_engine.values import ReadingNote, Thought
from bots.labels import counted

QUOTED_THOUGHT_CHARS = 40
"""How much of a thought a note quotes to say which part of the message it means."""


def note_text(note: ReadingNote, words: dict[str, str], thoughts: Sequence[Thought] = ()) -> str:
    """One note as a sentence in the language of ``words``; a note about some of the message's
    ``thoughts`` quotes their beginnings, since a person never saw the message numbered into
    thoughts (without ``thoughts`` to quote, it says "a long part of the message")."""
    count = note.count or 0
    if note.kind == "embedding-cut":
        named = _quoted(note.thoughts, thoughts, words) or words["a_long_part"]
        return words["note:embedding-cut"].format(count=f"{count:,}", thoughts=named)
    if note.kind == "context-trimmed":
        return _trimmed(note, words)
    if note.kind == "model-failed":
        failure = words[f"failure:{note.failure or 'unreachable'}"]
        return words["note:model-failed"].format(failure=failure)
    return counted(words, f"note:{note.kind}", count).format(count=count)


def _trimmed(note: ReadingNote, words: dict[str, str]) -> str:
    """What the model was not shown, as one sentence, and whether the text was shortened."""
    parts = [
        counted(words, f"part:{item.part}", item.count).format(n=item.count)
        for item in note.trimmed
        if item.part != "text"
    ]
    sentences = []
    if parts:
        sentences.append(words["note:context-trimmed"].format(parts=_listed(parts, words)))
    if any(item.part == "text" for item in note.trimmed):
        sentences.append(words["note:text-shortened"])
    return words["sentence_gap"].join(sentences)


def _listed(parts: list[str], words: dict[str, str]) -> str:
    """``a``, ``a and b``, ``a, b and c`` (English); ``a、b、c`` (Japanese)."""
    if len(parts) == 1:
        return parts[0]
    return words["list_comma"].join(parts[:-1]) + words["list_and"] + parts[-1]


def _quoted(numbers: Sequence[int], thoughts: Sequence[Thought], words: dict[str, str]) -> str:
    """The beginnings of those of ``thoughts`` numbered ``numbers`` (from 1), quoted and listed;
    empty when none of them is among ``thoughts``."""
    by_number = {thought.index + 1: thought.text for thought in thoughts}
    quoted = [
        words["quoted"].format(what=shorten(by_number[number], QUOTED_THOUGHT_CHARS))
        for number in numbers
        if number in by_number
    ]
    return _listed(quoted, words) if quoted else ""
