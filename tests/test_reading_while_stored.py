"""A reading asked while another writer is storing the message waits for it, never "not found".

Readers see only synced rows (storage/writes.py: rows first, unsynced; then vectors; then the
rows marked synced). A person picks "Read with AWAI" on a message the moment it is posted, so a
reading often arrives while another process (or thread) is writing that message's vectors. Two
runtimes on one data folder play the two processes; the writer's vector upsert is held on an
event, the way a slow Chroma server or a crash between the steps would hold it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

import pytest

from awai_engine.engine import StillStoringError
from awai_engine.visibility import Scopes
from bots.runtime import Runtime
from tests.factories import utterance
from tests.held_writer import HELD_SECONDS, WAITING, HeldWriter, ReleaseWhenWaitedFor

CHANNEL = "terminal:local:test"
EVERY_SCOPE = Scopes.channel()
BEFORE = utterance("1", "Shall we ship the beta on Friday?", "ann")
JUST_POSTED = utterance("2", "Friday works if QA signs off by Thursday.", "ben")


@pytest.fixture
def two_processes(make_runtime: Callable[..., Runtime]) -> Iterator[tuple[Runtime, Runtime]]:
    """A writer and a reader on one data folder, the channel already holding one message."""
    writer = make_runtime("shared")
    writer.engine.ingest([BEFORE])
    reader = make_runtime("shared", read_model={"writer_wait_seconds": HELD_SECONDS})
    reader.engine.read(CHANNEL, BEFORE.message_id, EVERY_SCOPE)  # its read model is current
    yield writer, reader


def test_a_reading_asked_while_another_process_stores_the_message_waits_for_that_write(
    two_processes: tuple[Runtime, Runtime], caplog: pytest.LogCaptureFixture
) -> None:
    writer_runtime, reader = two_processes
    writer = HeldWriter(writer_runtime)
    writer.start(JUST_POSTED)

    releaser = ReleaseWhenWaitedFor(writer)
    logging.getLogger("awai_engine.engine").addHandler(releaser)
    fetched: list[str] = []
    try:
        with caplog.at_level(logging.INFO, logger="awai_engine.engine"):
            found = reader.read_storing_first(
                CHANNEL,
                JUST_POSTED.message_id,
                EVERY_SCOPE,
                lambda: fetched.append("fetched") or JUST_POSTED,
            )
    finally:
        logging.getLogger("awai_engine.engine").removeHandler(releaser)
        writer.release()

    assert found.reading.context.message.message_id == JUST_POSTED.message_id
    assert found.reading.context.text == JUST_POSTED.text
    assert found.stored_now is False, "another writer stored it; this request only waited"
    assert fetched == [], "a message being stored is not fetched from the platform again"
    assert "waiting for the writer of 2" in caplog.text


def test_a_write_that_does_not_finish_in_time_is_told_as_still_being_stored(
    make_runtime: Callable[..., Runtime],
) -> None:
    """A writer stuck (or dead) between its steps: after the wait the person hears that the
    message is still being stored, not that it does not exist, and the reader does not write it
    over the writer's head (an edit or a delete may land meanwhile; a dead writer's restart
    finishes it). Once the writer finishes, the same request reads it."""
    writer_runtime = make_runtime("shared")
    writer_runtime.engine.ingest([BEFORE])
    reader = make_runtime("shared", read_model={"writer_wait_seconds": 0.2})
    writer = HeldWriter(writer_runtime)
    writer.start(JUST_POSTED)
    fetched: list[str] = []
    try:
        with pytest.raises(StillStoringError, match=r"still being stored after 0\.2 s"):
            reader.read_storing_first(
                CHANNEL,
                JUST_POSTED.message_id,
                EVERY_SCOPE,
                lambda: fetched.append("fetched") or JUST_POSTED,
            )
        assert fetched == []
        assert reader.store.write_under_way(CHANNEL, JUST_POSTED.message_id) is not None
    finally:
        writer.release()
    found = reader.read_storing_first(
        CHANNEL, JUST_POSTED.message_id, EVERY_SCOPE, lambda: JUST_POSTED
    )
    assert found.reading.context.text == JUST_POSTED.text
    assert found.reading.context.flow.message_ids() == (BEFORE.message_id,)
    assert reader.repair().clean, "nothing is left for a repair to find"


def test_an_asker_who_may_not_see_the_message_is_not_made_to_wait_for_it(
    two_processes: tuple[Runtime, Runtime], caplog: pytest.LogCaptureFixture
) -> None:
    """A message being stored in a place the asker cannot see looks like any unknown one: no
    wait, which would tell them a write is under way."""
    writer_runtime, reader = two_processes
    secret = JUST_POSTED.model_copy(update={"scope": "private-thread:7"})
    writer = HeldWriter(writer_runtime)
    writer.start(secret)
    try:
        with caplog.at_level(logging.INFO, logger="awai_engine.engine"):
            waited = reader.engine.await_write(CHANNEL, secret.message_id, EVERY_SCOPE)
            assert waited is False
            assert WAITING not in caplog.text
            releaser = ReleaseWhenWaitedFor(writer)  # one who may see it does wait for it
            logging.getLogger("awai_engine.engine").addHandler(releaser)
            try:
                member = Scopes.channel("private-thread:7")
                assert reader.engine.await_write(CHANNEL, secret.message_id, member) is True
            finally:
                logging.getLogger("awai_engine.engine").removeHandler(releaser)
        assert WAITING in caplog.text
    finally:
        writer.release()


def test_a_message_no_one_is_storing_is_fetched_from_the_platform(
    two_processes: tuple[Runtime, Runtime],
) -> None:
    _, reader = two_processes
    fetched: list[str] = []
    found = reader.read_storing_first(
        CHANNEL,
        JUST_POSTED.message_id,
        EVERY_SCOPE,
        lambda: fetched.append("fetched") or JUST_POSTED,
    )
    assert fetched == ["fetched"]
    assert found.stored_now is True
    assert found.reading.context.text == JUST_POSTED.text
