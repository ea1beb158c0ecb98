"""Bounded inputs: limits refuse with a reason or cut what is derived, and a reading says so."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from awai_engine.values import ReadingNote
from awai_engine.visibility import EVERYTHING
from bots.labels import labels_for
from bots.note_words import note_text
from bots.runtime import Runtime
from tests.factories import utterance

CHANNEL = "terminal:local:test"


def test_a_thought_longer_than_what_is_embedded_is_kept_whole_and_the_reading_says_so(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(embedding={"max_chars": 40}, limits={"max_thought_chars": 200})
    long = "The migration plan needs a rollback step for every single table we touch."
    runtime.engine.ingest([utterance("m1", "Short one."), utterance("m2", f"Fine. {long}")])
    context = runtime.engine.context(CHANNEL, "m2", EVERYTHING)
    assert context.text == f"Fine. {long}" and context.thoughts[1].text == long
    assert context.notes == (ReadingNote(kind="embedding-cut", count=40, thoughts=(2,)),)
    (note,) = context.notes
    # Which part is quoted from its beginning: nobody saw the message numbered into thoughts.
    assert note_text(note, labels_for("en"), context.thoughts) == (
        "Only the first 40 characters of “The migration plan needs a rollback…” were used to"
        " find related thoughts; the whole text is kept and shown."
    )
    assert note_text(note, labels_for("ja"), context.thoughts).startswith(
        "「The migration plan needs a rollback…」は、"
    )
    assert "thought 2" not in note_text(note, labels_for("en"))
    assert runtime.engine.context(CHANNEL, "m1", EVERYTHING).notes == ()


def test_a_message_with_more_sentences_than_thoughts_says_its_last_thought_holds_the_rest(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(limits={"max_thoughts_per_message": 3})
    five = "One is here. Two is here. Three is here. Four is here. Five is here."
    runtime.engine.ingest([utterance("m1", five), utterance("m2", "A. B is two. C is three.")])
    context = runtime.engine.context(CHANNEL, "m1", EVERYTHING)
    assert context.text == five and len(context.thoughts) == 3
    assert context.thoughts[-1].text == "Three is here. Four is here. Five is here."
    assert context.notes == (ReadingNote(kind="thoughts-merged", count=3, thoughts=(3,)),)
    assert "its last thought holds the rest" in note_text(context.notes[0], labels_for("en"))
    assert (
        runtime.engine.context(CHANNEL, "m2", EVERYTHING).notes == ()
    )  # exactly three: nothing cut


def test_an_edit_over_the_length_limit_is_refused_and_the_stored_text_stays(
    make_runtime: Callable[..., Runtime], caplog: pytest.LogCaptureFixture
) -> None:
    runtime = make_runtime(limits={"max_message_chars": 30})
    runtime.engine.ingest([utterance("m1", "Ship it on Tuesday.")])
    with caplog.at_level(logging.WARNING):
        assert not runtime.engine.edit(utterance("m1", "Ship it " + "much " * 10 + "later."))
    assert "AWAI_LIMITS__MAX_MESSAGE_CHARS" in caplog.text
    assert runtime.engine.context(CHANNEL, "m1", EVERYTHING).text == "Ship it on Tuesday."
