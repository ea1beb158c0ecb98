"""Ingest is idempotent; edits replace thoughts and vectors; deletes remove text everywhere."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from sqlalchemy import MetaData

from awai_engine import engine as engine_module
from awai_engine.engine import UnknownMessageError
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from storage.vectors import collection_name, vector_id
from tests.factories import utterance
from tests.test_embedding_ahead import Counting

CHANNEL = "terminal:local:test"


def chroma_ids(runtime: Runtime) -> list[str]:
    return sorted(runtime.store.vectors.all_ids(collection_name(CHANNEL)))


def sql_dump(runtime: Runtime) -> str:
    """Every row of every table in the database (SQLite or PostgreSQL), to prove a text is gone."""
    engine = runtime.store.db.engine
    tables = MetaData()
    tables.reflect(engine)
    with engine.connect() as connection:
        return "\n".join(
            repr(tuple(row))
            for table in tables.sorted_tables
            for row in connection.execute(table.select())
        )


def test_reingesting_the_same_messages_stores_them_once(runtime: Runtime) -> None:
    messages = [utterance("m1", "First. Second."), utterance("m2", "Third.")]
    first = runtime.engine.ingest(messages)
    again = runtime.engine.ingest(messages)
    assert (first.added, again.added, again.unchanged) == (2, 0, 2)
    assert runtime.store.message_count(CHANNEL) == 2
    assert chroma_ids(runtime) == sorted(
        [vector_id("m1", 0), vector_id("m1", 1), vector_id("m2", 0)]
    )


def test_an_edit_replaces_thoughts_and_vectors_and_keeps_the_old_text_as_history(
    runtime: Runtime,
) -> None:
    runtime.engine.ingest([utterance("m1", "Ship on Monday. Tests are green. Docs are done.")])
    assert runtime.engine.edit(utterance("m1", "Ship on Tuesday instead."))
    context = runtime.engine.context(CHANNEL, "m1", EVERYTHING)
    assert [t.text for t in context.thoughts] == ["Ship on Tuesday instead."]
    assert chroma_ids(runtime) == [vector_id("m1", 0)]
    assert "Ship on Monday. Tests are green. Docs are done." in sql_dump(runtime)  # edit history
    assert not runtime.engine.edit(utterance("m9", "never stored"))


def test_an_edit_through_ingest_counts_as_an_edit(runtime: Runtime) -> None:
    runtime.engine.ingest([utterance("m1", "Original text.")])
    report = runtime.engine.ingest([utterance("m1", "Changed text.")])
    assert (report.added, report.edited) == (0, 1)


def test_a_delete_removes_the_text_from_sql_and_chroma_and_it_never_comes_back(
    runtime: Runtime,
) -> None:
    secret = "My home address is 12 Privet Drive."
    runtime.engine.ingest(
        [utterance("m1", "Hello."), utterance("m2", secret), utterance("m3", "Bye.")]
    )
    assert runtime.engine.delete(CHANNEL, "m2")
    assert "Privet" not in sql_dump(runtime)
    assert vector_id("m2", 0) not in chroma_ids(runtime)
    with pytest.raises(UnknownMessageError):
        runtime.engine.context(CHANNEL, "m2", EVERYTHING)
    report = runtime.engine.ingest([utterance("m2", secret)])  # a redelivered event
    assert report.refused_deleted == 1 and report.added == 0
    assert "Privet" not in sql_dump(runtime)
    assert (
        runtime.engine.context(CHANNEL, "m3", EVERYTHING).flow.previous.message.message_id == "m1"
    )  # type: ignore[union-attr]
    assert not runtime.engine.delete(CHANNEL, "m404")


def test_words_edited_back_into_a_withdrawn_message_are_stored_again_at_its_place(
    runtime: Runtime,
) -> None:
    """A message edited into a command to AWAI (or into a file alone) is forgotten; when a later
    edit puts words back, the platform shows them again, and so does AWAI. Copies of earlier
    versions, and of the withdrawing edit itself, change nothing."""
    engine = runtime.engine
    engine.ingest(
        [utterance("m1", "Hello."), utterance("m2", "Budget is 40k."), utterance("m3", "Ok.")]
    )
    assert engine.withdraw(CHANNEL, "m2", edited_ts=100.0)
    assert "40k" not in sql_dump(runtime)

    original = utterance("m2", "Budget is 40k.")  # a redelivered or paged copy: never edited
    earlier = utterance("m2", "Budget is 30k.").model_copy(update={"edited_ts": 90.0})
    assert engine.ingest([original, earlier]).refused_deleted == 1
    assert not engine.edit(earlier)

    back = utterance("m2", "Budget is 45k, not 40k.").model_copy(update={"edited_ts": 120.0})
    assert engine.edit(back)
    context = engine.context(CHANNEL, "m3", EVERYTHING)
    assert context.flow.previous.message.message_id == "m2"  # type: ignore[union-attr]
    assert [t.text for t in engine.context(CHANNEL, "m2", EVERYTHING).thoughts] == [
        "Budget is 45k, not 40k."
    ]
    assert not engine.withdraw(CHANNEL, "m2", edited_ts=100.0), "a late copy takes nothing back"
    assert runtime.store.stored_texts(CHANNEL, ["m2"]) == {"m2": "Budget is 45k, not 40k."}


def test_a_message_deleted_after_its_words_were_withdrawn_never_comes_back(
    runtime: Runtime,
) -> None:
    engine = runtime.engine
    engine.ingest([utterance("m1", "The vendor contract renews on the 9th.")])
    engine.withdraw(CHANNEL, "m1", edited_ts=100.0)
    engine.delete(CHANNEL, "m1")  # deleted on the platform, or forgotten through AWAI
    later = utterance("m1", "The contract renews on the 12th.").model_copy(
        update={"edited_ts": 200.0}
    )
    assert engine.ingest([later]).refused_deleted == 1 and not engine.edit(later)
    assert runtime.store.message_count(CHANNEL) == 0

    engine.ingest([utterance("m2", "Kept out without an edit time.")])
    engine.withdraw(CHANNEL, "m2", edited_ts=None)  # nothing could tell later from earlier
    assert not engine.edit(later.model_copy(update={"message_id": "m2"}))


@pytest.mark.slow
def test_a_forget_me_makes_the_speakers_withdrawn_messages_gone_for_good(
    runtime: Runtime,
) -> None:
    """A withdrawn message has no row left for the forget-me to find; its tombstone names the
    speaker until the withdrawal is for good, so words edited back into it later stay out."""
    engine = runtime.engine
    engine.ingest(
        [
            utterance("m1", "Hello there.", speaker="ann"),
            utterance("m2", "My salary is 90k.", speaker="bob"),
            utterance("m3", "Pending, will fix.", speaker="ann"),
        ]
    )
    assert engine.withdraw(CHANNEL, "m2", edited_ts=100.0)
    assert engine.withdraw(CHANNEL, "m3", edited_ts=100.0)
    runtime.schemas.forget_speaker(CHANNEL, "bob")

    back = utterance("m2", "My salary is 95k.", speaker="bob").model_copy(
        update={"edited_ts": 120.0}
    )
    assert not engine.edit(back) and engine.ingest([back]).refused_deleted == 1
    assert "95k" not in sql_dump(runtime) and "bob" not in sql_dump(runtime)
    fixed = utterance("m3", "Fixed in 4.2.", speaker="ann").model_copy(update={"edited_ts": 130.0})
    assert engine.edit(fixed), "another speaker's withdrawal may still be undone"


def test_a_withdrawn_message_whose_words_could_not_be_stored_again_stays_withdrawn(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The save that brings words back fails at the vectors: the message stays out, and a late
    copy of its withdrawn words (no edit time) is still refused."""
    engine = runtime.engine
    engine.ingest([utterance("m1", "Budget is 40k.")])
    assert engine.withdraw(CHANNEL, "m1", edited_ts=100.0)
    upsert = runtime.store.vectors.upsert

    def refusing(name: str, ids: Sequence[str], vectors: np.ndarray, metadatas: list) -> None:
        if any(vector.startswith("m1#") for vector in ids):
            raise ValueError("Chroma refused a record")
        upsert(name, ids, vectors, metadatas)

    monkeypatch.setattr(runtime.store.vectors, "upsert", refusing)
    back = utterance("m1", "Budget is 45k.").model_copy(update={"edited_ts": 120.0})
    report = engine.ingest([back, utterance("m2", "Ok.")])
    assert [problem.message_id for problem in report.problems] == ["m1"]
    monkeypatch.setattr(runtime.store.vectors, "upsert", upsert)
    assert [u.message_id for u in runtime.store.utterances(CHANNEL)] == ["m2"]
    assert engine.ingest([utterance("m1", "Budget is 40k.")]).refused_deleted == 1
    assert engine.edit(back), "the edit can still bring the words back once the store takes it"


def test_a_withdrawal_undone_before_another_process_looks_still_changes_the_removal_mark(
    runtime: Runtime,
) -> None:
    """Other processes compare the mark to drop what they hold: a withdrawal and its undoing
    within one check must not leave it as it was."""
    engine = runtime.engine
    engine.ingest([utterance("m1", "Budget is 40k."), utterance("m2", "Ok.")])
    marks = [runtime.store.removal_mark()]
    engine.withdraw(CHANNEL, "m1", edited_ts=100.0)
    marks.append(runtime.store.removal_mark())
    engine.edit(utterance("m1", "Budget is 45k.").model_copy(update={"edited_ts": 120.0}))
    marks.append(runtime.store.removal_mark())
    engine.ingest([utterance("m3", "Thanks.")])
    marks.append(runtime.store.removal_mark())
    assert len(set(marks[:3])) == 3, "each removal and revival changes the mark"
    assert marks[3] == marks[2], "a new message is not a removal"


def test_messages_arriving_out_of_order_are_read_in_time_order(runtime: Runtime) -> None:
    runtime.engine.ingest([utterance("m3", "Third."), utterance("m1", "First.")])
    runtime.engine.ingest([utterance("m2", "Second.")])
    timeline = runtime.store.timeline(CHANNEL)
    assert [m.message_id for m in timeline.messages] == ["m1", "m2", "m3"]
    assert (
        runtime.engine.context(CHANNEL, "m3", EVERYTHING).flow.previous.message.message_id == "m2"
    )  # type: ignore[union-attr]


def test_the_read_model_survives_a_restart(make_runtime: Callable[..., Runtime]) -> None:
    first = make_runtime("same")
    first.engine.ingest([utterance("m1", "The deploy failed."), utterance("m2", "Retrying now.")])
    before = first.engine.context(CHANNEL, "m2", EVERYTHING)
    first.close()
    reopened = make_runtime("same")
    assert reopened.engine.context(CHANNEL, "m2", EVERYTHING) == before


def test_an_ingest_in_chunks_stores_what_its_messages_ingested_one_at_a_time_store(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In chunks of 4, each chunk's thoughts are embedded while the chunk before is stored
    (``Embedder.encode_ahead``); between them come an edit of a message of the chunk before,
    a text stored already, an invalid message and a message of another channel."""
    monkeypatch.setattr(engine_module, "INGEST_CHUNK", 4)
    other = "terminal:local:other"
    messages = [
        utterance(f"m{i:02}", f"Line {i} is said. Its second sentence counts {i}.")
        for i in range(1, 15)
    ]
    messages[5] = utterance("m02", "The second line, said again. Differently this time.", ts=6)
    messages[9] = utterance("m03", messages[2].text, ts=10)  # the text stored already
    messages[10] = utterance("m11", "Half an emoji \ud83d.")
    messages[12] = utterance("x13", "In the other channel. Two sentences.", channel=other)
    chunked, alone = make_runtime("chunked"), make_runtime("alone")
    counting = Counting()
    chunked.engine.embedder = counting
    report = chunked.engine.ingest(messages)
    for message in messages:
        alone.engine.ingest([message])

    assert (report.added, report.edited, report.unchanged, len(report.problems)) == (11, 1, 1, 1)
    for channel in (CHANNEL, other):
        got, expected = chunked.store.timeline(channel), alone.store.timeline(channel)
        assert [(m.message_id, m.text, m.thoughts) for m in got.messages] == [
            (m.message_id, m.text, m.thoughts) for m in expected.messages
        ]
        assert np.array_equal(got.vectors, expected.vectors)
    embedded = counting.texts()
    assert len(embedded) == len(set(embedded))  # each thought once
    assert any(name.startswith("awai-embed-ahead") for name, _ in counting.embedded)


def test_a_deleted_message_delivered_again_in_the_next_chunk_is_not_kept_after_the_ingest(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its thoughts are embedded ahead before the chunk is refused; the vector must not wait in
    the embedder for a later call (nothing else would drop the deleted words)."""
    monkeypatch.setattr(engine_module, "INGEST_CHUNK", 2)
    deleted = utterance("m9", "A secret plan nobody should keep.")
    runtime.engine.ingest([deleted])
    runtime.engine.delete(CHANNEL, "m9")
    counting = Counting()
    runtime.engine.embedder = counting
    report = runtime.engine.ingest(
        [utterance("m1", "First line here."), utterance("m2", "Second line here."), deleted]
    )

    assert report.refused_deleted == 1
    assert "A secret plan nobody should keep." in counting.texts()  # embedded ahead
    counting.embedded.clear()
    counting.encode(["A secret plan nobody should keep."])
    assert counting.texts() == ["A secret plan nobody should keep."]  # made again: none kept
