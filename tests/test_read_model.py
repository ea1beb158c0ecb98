"""Cached read models catch up with rows written by any process and stay within their memory.

A second :class:`AwaiStore` on the same data folder stands for another bot process: it shares the
databases, not the cache. "Without a rebuild" is observed as the same timeline object extended in
place (a rebuild makes a new one); "the same as a rebuild" compares with a store opened afresh.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awai_engine.backends.offline import OfflineBackend
from awai_engine.embedding import Embedder
from awai_engine.ports import PreparedUtterance
from awai_engine.timeline import Timeline
from awai_engine.values import Extraction, Thought, Utterance
from bots.runtime import Runtime
from storage import fingerprints
from storage import read_model as read_model_module
from storage import vectors as vectors_module
from storage.read_model import EXTENDED_FROM
from storage.store import AwaiStore
from storage.vectors import MADE_WITH
from tests.factories import utterance
from tests.test_recall_index import timeline_state

CHANNEL = "terminal:local:test"
LINES = (
    "the staging deploy failed again",
    "disk on the runner is full",
    "I cleared the cache, retrying",
    "lunch at noon?",
    "green now, shipping the release",
    "who owns the flaky login test",
    "the battery drain is back on Pixel",
    "ok",
)


@pytest.fixture
def other_process(runtime: Runtime) -> Iterator[Callable[[], AwaiStore]]:
    opened: list[AwaiStore] = []

    def open_store() -> AwaiStore:
        opened.append(AwaiStore.open(runtime.settings))
        return opened[-1]

    yield open_store
    for store in opened:
        store.close()


def prepared(
    message: Utterance, extraction: Extraction, embedder: Embedder, fallback: bool = False
) -> PreparedUtterance:
    if fallback:
        extraction = extraction.model_copy(
            update={
                "fallback": True,
                "thoughts": tuple(
                    t.model_copy(update={"fallback": True}) for t in extraction.thoughts
                ),
            }
        )
    vectors = embedder.encode([t.text for t in extraction.thoughts])
    return PreparedUtterance(message, extraction, vectors)


def assert_same_timeline(ours: Timeline, theirs: Timeline) -> None:
    assert [m.ref for m in ours.messages] == [m.ref for m in theirs.messages]
    assert [(m.text, m.summary, m.thoughts, m.first_row) for m in ours.messages] == [
        (m.text, m.summary, m.thoughts, m.first_row) for m in theirs.messages
    ]
    np.testing.assert_array_equal(ours.vectors, theirs.vectors)
    assert ours.vectors.tobytes() == theirs.vectors.tobytes()  # bit for bit
    np.testing.assert_array_equal(ours.row_positions, theirs.row_positions)
    assert ours.revision == theirs.revision
    assert timeline_state(ours) == timeline_state(theirs)  # cells and word index too


def test_another_process_appends_new_rows_to_its_timeline_instead_of_rebuilding(
    runtime: Runtime, other_process: Callable[[], AwaiStore]
) -> None:
    runtime.engine.ingest([utterance(f"m{i}", LINES[i]) for i in range(1, 4)])
    reader = other_process()
    before = reader.timeline(CHANNEL)
    assert len(before.messages) == 3

    runtime.engine.ingest([utterance(f"m{i}", LINES[i]) for i in range(4, 7)])
    after = reader.timeline(CHANNEL)

    assert after is before  # extended in place: only the new rows were read
    assert [m.message_id for m in after.messages] == ["m1", "m2", "m3", "m4", "m5", "m6"]
    assert_same_timeline(after, other_process().timeline(CHANNEL))


def test_the_writing_process_catches_up_on_its_own_rows_too(runtime: Runtime) -> None:
    runtime.engine.ingest([utterance("m1", LINES[1])])
    before = runtime.store.timeline(CHANNEL)
    runtime.engine.ingest([utterance("m2", LINES[2])])
    assert runtime.store.timeline(CHANNEL) is before
    assert len(before.messages) == 2


class Spy:
    """Counts what a store asks of Chroma's vectors and how often it passes over every row of a
    channel for its fingerprint (real calls, only observed)."""

    def __init__(self, store: AwaiStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.vector_ids: list[str] = []
        self.passes = 0
        vectors_of = store.vectors.vectors_of
        fingerprint = fingerprints.fingerprint

        def observed_vectors_of(name: str, ids: list[str]) -> dict[str, np.ndarray]:
            self.vector_ids += ids
            return vectors_of(name, ids)

        def observed_fingerprint(*args: object) -> str:
            self.passes += 1
            return fingerprint(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(store.vectors, "vectors_of", observed_vectors_of)
        monkeypatch.setattr(fingerprints, "fingerprint", observed_fingerprint)


def test_the_writer_catches_up_on_its_own_appends_without_chroma_or_a_pass_over_the_channel(
    runtime: Runtime, other_process: Callable[[], AwaiStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its catch-up read every vector it had just written back from Chroma (loading Chroma's
    index: +223 MiB at 100k messages) and the channel's fingerprint twice, a pass over every
    row. Chroma gives back the bits written (an inner-product collection), so the vectors
    written are appended as they are, and the fingerprint is extended by the new rows alone."""
    runtime.engine.ingest([utterance(f"m{i}", LINES[i % 8]) for i in range(1, 4)])
    timeline = runtime.store.timeline(CHANNEL)
    spy = Spy(runtime.store, monkeypatch)
    for first in (4, 7, 10):
        runtime.engine.ingest([utterance(f"m{i}", LINES[i % 8]) for i in range(first, first + 3)])
    assert runtime.store.timeline(CHANNEL) is timeline and len(timeline.messages) == 12
    assert spy.vector_ids == [] and spy.passes == 0
    monkeypatch.undo()
    assert_same_timeline(timeline, other_process().timeline(CHANNEL))
    cached = runtime.store.read_model._cache[CHANNEL]
    with runtime.store.db.read() as session:  # what any other process or start compares with
        row = runtime.store.db.channel(session, CHANNEL)
        assert row is not None
        assert cached.fingerprint == fingerprints.fingerprint(session, row, cached.last_id)


def test_a_writer_storing_much_without_reading_keeps_a_bounded_record_and_reads_back(
    runtime: Runtime,
    other_process: Callable[[], AwaiStore],
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bot stores every message of a held channel but may read none for hours: what it keeps
    of its own appends is bounded, and past the bound its catch-up reads them back."""
    runtime.engine.ingest([utterance("m1", LINES[1])])
    timeline = runtime.store.timeline(CHANNEL)
    monkeypatch.setattr(read_model_module, "APPENDED_KEPT", 2)
    spy = Spy(runtime.store, monkeypatch)
    offline = OfflineBackend()
    for i in range(2, 6):  # stored one by one, as a bot does, and not read
        message = utterance(f"m{i}", LINES[i])
        runtime.store.save(
            CHANNEL, [prepared(message, offline.extract_one(message.text), embedder)]
        )
    assert runtime.store.timeline(CHANNEL) is timeline and len(timeline.messages) == 5
    assert len(spy.vector_ids) >= 4  # read back: the record was dropped past its bound
    monkeypatch.undo()
    assert_same_timeline(timeline, other_process().timeline(CHANNEL))


def test_a_change_by_another_process_between_the_writers_appends_is_not_taken_for_its_own(
    runtime: Runtime, other_process: Callable[[], AwaiStore]
) -> None:
    runtime.engine.ingest([utterance(f"m{i}", LINES[i % 8]) for i in range(1, 5)])
    before = runtime.store.timeline(CHANNEL)
    other_process().delete(CHANNEL, "m2")
    runtime.engine.ingest([utterance("m5", LINES[5])])  # its revisions no longer chain
    after = runtime.store.timeline(CHANNEL)
    assert after is not before and "m2" not in after.position_of
    assert_same_timeline(after, other_process().timeline(CHANNEL))


def test_a_cosine_collection_made_before_is_read_back_and_still_equals_a_rebuild(
    make_runtime: Callable[..., Runtime],
    other_process: Callable[[], AwaiStore],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Chroma normalises a cosine collection's vectors again as it stores them, so the bits it
    gives back are not those written: a collection made so before keeps reading them back."""
    monkeypatch.setattr(vectors_module, "MADE_WITH", {**MADE_WITH, "hnsw:space": "cosine"})
    runtime = make_runtime("cosine")
    runtime.engine.ingest([utterance(f"m{i}", LINES[i % 8]) for i in range(1, 4)])
    timeline = runtime.store.timeline(CHANNEL)
    monkeypatch.undo()
    spy = Spy(runtime.store, monkeypatch)
    runtime.engine.ingest([utterance(f"m{i}", LINES[i % 8]) for i in range(4, 7)])
    assert runtime.store.timeline(CHANNEL) is timeline
    assert len(spy.vector_ids) == 3 and spy.passes == 0  # its own appends: no pass, still
    monkeypatch.undo()
    fresh = AwaiStore.open(runtime.settings)
    try:
        assert_same_timeline(timeline, fresh.timeline(CHANNEL))
    finally:
        fresh.close()


@pytest.mark.parametrize(
    "change",
    [
        "edit",
        "delete",
        "delete the last, then append",
        "earlier in channel order",
        "fallback thoughts re-extracted in place",
    ],
)
@pytest.mark.slow
def test_a_change_other_than_an_append_rebuilds_the_other_processes_timeline(
    change: str, runtime: Runtime, other_process: Callable[[], AwaiStore], embedder: Embedder
) -> None:
    runtime.engine.ingest([utterance(f"m{i}", LINES[i]) for i in range(2, 6)])
    fallback = utterance("m6", "restore test wednesday? the backup job failed")
    offline = OfflineBackend().extract_one(fallback.text)
    runtime.store.save(CHANNEL, [prepared(fallback, offline, embedder, fallback=True)])
    reader = other_process()
    before = reader.timeline(CHANNEL)
    if change == "edit":
        runtime.engine.edit(utterance("m3", "the runner disk is fine, it was the cache"))
    elif change == "delete":
        runtime.engine.delete(CHANNEL, "m3")
    elif change == "delete the last, then append":  # SQLite gives the new row the freed id
        runtime.engine.delete(CHANNEL, "m5")
        runtime.engine.ingest([utterance("m6", LINES[6])])
    elif change == "earlier in channel order":
        runtime.engine.ingest([utterance("m1", LINES[1])])  # ts 1: before every cached message
    else:  # the model answers again and splits the message its own way; text and place stay
        rewritten = Extraction(
            thoughts=(
                Thought(index=0, text="is the restore test on wednesday"),
                Thought(index=1, text="the backup job failed"),
            ),
            summary="restore test and a failed backup",
        )
        runtime.store.save(CHANNEL, [prepared(fallback, rewritten, embedder)])
    after = reader.timeline(CHANNEL)
    assert after is not before
    assert_same_timeline(after, other_process().timeline(CHANNEL))


def test_a_channel_rebuilt_after_an_edit_holds_its_messages_as_columns_not_as_values(
    runtime: Runtime,
) -> None:
    """A rebuild took a hundred thousand messages as values (5.5 KB each) until the timeline was
    written out and loaded back; it now holds columns, as a loaded file does, and builds only the
    messages a reading looks at."""
    runtime.engine.ingest([utterance(f"m{i}", LINES[i % len(LINES)]) for i in range(1, 30)])
    runtime.engine.edit(utterance("m3", "the runner disk is fine, it was the cache"))
    timeline = runtime.store.timeline(CHANNEL)
    assert timeline.messages.restored == len(timeline.messages) == 29
    assert timeline.messages.built == 0
    assert timeline.messages[2].text == "the runner disk is fine, it was the cache"


@pytest.mark.slow
def test_the_least_recently_read_channels_are_dropped_past_the_memory_bound(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(read_model={"max_mb": 1})
    channels = [f"terminal:local:c{n}" for n in range(4)]
    for channel in channels:
        # About 0.3 MiB of text per channel, and its arrays: the bound cannot hold all four.
        runtime.engine.ingest(
            [
                utterance(f"m{i}", f"{LINES[i % len(LINES)]} {'x' * 6000}", channel=channel)
                for i in range(1, 51)
            ]
        )
    model = runtime.store.read_model
    for channel in channels:
        runtime.store.timeline(channel)
        assert model.cached_bytes() <= 1024 * 1024 or model.cached_channels() == [channel]
    assert model.cached_channels()[-1] == channels[-1]
    assert channels[0] not in model.cached_channels()
    runtime.store.timeline(channels[0])  # read again: loaded again, now the most recent
    assert model.cached_channels()[-1] == channels[0]


FOLDERS = itertools.count()
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 3)),
        st.tuples(st.just("edit"), st.integers(0, 50)),
        st.tuples(st.just("delete"), st.integers(0, 50)),
        st.tuples(st.just("read"), st.just(0)),
    ),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(operations=OPERATIONS, persisted=st.booleans(), extended=st.booleans())
@pytest.mark.slow
def test_a_timeline_kept_up_by_catching_up_equals_one_built_afresh(
    operations: list[tuple[str, int]],
    persisted: bool,
    extended: bool,
    make_runtime: Callable[..., Runtime],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whatever mix of appends, edits and deletes another process makes, a reader that caught
    up holds exactly the timeline a newly started process builds. ``persisted``: every reading
    writes the channel's file, so each edit and delete cuts it and the next readings load it
    and catch up from the cut. ``extended``: every catch-up takes its rows in at once as
    columns (``Timeline.extend``), as one of many rows does."""
    monkeypatch.setattr(read_model_module, "EXTENDED_FROM", 1 if extended else EXTENDED_FROM)
    writer = make_runtime(  # every example (and replay) a new folder
        f"catch-up-{next(FOLDERS)}",
        **({"read_model": {"persist_every": 1}} if persisted else {}),
    )
    reader = AwaiStore.open(writer.settings)
    # A newly started process that builds from SQL and Chroma alone, whatever the files hold.
    afresh = writer.settings.model_copy(
        update={"read_model": writer.settings.read_model.model_copy(update={"persist": False})}
    )
    try:
        stored: list[str] = []
        next_id = 1
        for name, value in operations:
            if name == "append":
                batch = [
                    utterance(f"m{next_id + i}", LINES[(next_id + i) % len(LINES)])
                    for i in range(value)
                ]
                writer.engine.ingest(batch)
                stored += [u.message_id for u in batch]
                next_id += value
            elif name == "edit" and stored:
                target = stored[value % len(stored)]
                writer.engine.edit(utterance(target, f"edited {target}: {LINES[value % 8]}"))
            elif name == "delete" and stored:
                writer.engine.delete(CHANNEL, stored.pop(value % len(stored)))
            if stored:
                fresh = AwaiStore.open(afresh)
                try:
                    assert_same_timeline(reader.timeline(CHANNEL), fresh.timeline(CHANNEL))
                    # and the writer, which appends the vectors it wrote without reading them
                    assert_same_timeline(writer.store.timeline(CHANNEL), fresh.timeline(CHANNEL))
                finally:
                    fresh.close()
    finally:
        reader.close()
