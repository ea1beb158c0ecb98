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

from awai_engine.visibility import Scopes
from bots.runtime import Runtime
from tests.factories import utterance
from tests.held_writer import HELD_SECONDS, HeldWriter, ReleaseWhenWaitedFor

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
    logging.getLogger("awai_engine.reconcile").addHandler(releaser)
    fetched: list[str] = []
    try:
        with caplog.at_level(logging.INFO, logger="awai_engine.reconcile"):
            found = reader.read_storing_first(
                CHANNEL,
                JUST_POSTED.message_id,
                EVERY_SCOPE,
                lambda: fetched.append("fetched") or JUST_POSTED,
            )
    finally:
        logging.getLogger("awai_engine.reconcile").removeHandler(releaser)
        writer.release()

    assert found.reading.context.message.message_id == JUST_POSTED.message_id
    assert found.reading.context.text == JUST_POSTED.text
    assert found.stored_now is False, "another writer stored it; this request only waited"
    assert fetched == [], "a message being stored is not fetched from the platform again"
    assert "waiting for the writer of 2" in caplog.text
    assert "which no writer finished" not in caplog.text, "the writer finished its own write"


def test_a_reading_finishes_a_write_its_writer_never_finishes(
    make_runtime: Callable[..., Runtime], caplog: pytest.LogCaptureFixture
) -> None:
    """A writer that crashed (or hangs) between its steps: the reading finishes the write, as
    the next start-up's repair would, instead of telling the person there is no such message."""
    writer_runtime = make_runtime("shared")
    writer_runtime.engine.ingest([BEFORE])
    reader = make_runtime("shared", read_model={"writer_wait_seconds": 0.2})
    writer = HeldWriter(writer_runtime)
    writer.start(JUST_POSTED)
    try:
        with caplog.at_level(logging.INFO, logger="awai_engine.reconcile"):
            found = reader.read_storing_first(
                CHANNEL, JUST_POSTED.message_id, EVERY_SCOPE, lambda: JUST_POSTED
            )
        reading = found.reading
        assert reading.context.text == JUST_POSTED.text
        assert reading.context.flow.message_ids() == (BEFORE.message_id,)
        assert "which no writer finished within 0 s" in caplog.text
    finally:
        writer.release()  # the stuck writer wakes up and finishes too: the same rows, once

    fresh = make_runtime("shared")
    timeline = fresh.store.timeline(CHANNEL)
    assert [m.ref.message_id for m in timeline.messages] == ["1", "2"]
    assert fresh.store.unfinished(CHANNEL, JUST_POSTED.message_id) is None
    assert fresh.repair().clean, "nothing is left for a repair to find"


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
