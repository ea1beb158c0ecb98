"""A channel's vectors in bounded Chroma segments: writes touch the newest only, everything else
reaches every segment (reads by id, counts, edits, deletes, a forget, a drop)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from awai_engine.embedding import Embedder
from awai_engine.reconcile import reconcile
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from storage import vectors as vectors_module
from storage.vectors import (
    MADE_WITH,
    ChromaVectors,
    collection_name,
    segment_name,
    vector_id,
)
from tests.factories import utterance

CHANNEL = "terminal:local:segments"
PER_SEGMENT = 3


def said(number: int, text: str | None = None, speaker: str = "ann") -> Any:
    return utterance(
        f"m{number:03d}",
        text or f"Line {number} is about the staging disk number {number}.",
        speaker=speaker,
        channel=CHANNEL,
    )


def sizes(runtime: Runtime) -> list[int]:
    """The vectors each segment of the channel holds, oldest first."""
    vectors = runtime.store.vectors
    return [
        vectors.client.get_collection(name, embedding_function=None).count()  # type: ignore[attr-defined]
        for name in vectors.segments(collection_name(CHANNEL))
    ]


def expected_ids(runtime: Runtime) -> list[str]:
    """The vector ids SQL's thoughts call for."""
    timeline = runtime.store.timeline(CHANNEL)
    return sorted(
        vector_id(m.ref.message_id, index)
        for m in timeline.messages
        for index in range(len(m.thoughts))
    )


@pytest.fixture
def small_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ChromaVectors, "segment_vectors", PER_SEGMENT)


@pytest.mark.usefixtures("small_segments")
def test_writes_fill_segments_in_turn_and_touch_only_the_newest(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime.engine.ingest([said(n) for n in range(1, 8)])
    vectors, name = runtime.store.vectors, collection_name(CHANNEL)
    before = vectors.segments(name)
    assert len(before) >= 3 and all(size <= PER_SEGMENT for size in sizes(runtime))
    touched: list[str] = []
    opened = ChromaVectors._collection

    def spy(self: ChromaVectors, segment: str, channel_key: str | None = None) -> Any:
        touched.append(segment)
        return opened(self, segment, channel_key)

    monkeypatch.setattr(ChromaVectors, "_collection", spy)
    runtime.engine.ingest([said(n) for n in range(8, 12)])
    monkeypatch.undo()

    after = vectors.segments(name)
    assert len(after) > len(before)  # it rolled over
    # Only the newest segment was opened: an older one's index would be loaded by any call.
    assert set(touched) == {before[-1]}
    assert all(size <= PER_SEGMENT for size in sizes(runtime))
    assert sorted(vectors.all_ids(name)) == expected_ids(runtime)
    assert vectors.count(name) == len(expected_ids(runtime))
    # The vectors read back from every segment are the bits the timeline holds.
    timeline = runtime.store.timeline(CHANNEL)
    ids = [
        vector_id(m.ref.message_id, index)
        for m in timeline.messages
        for index in range(len(m.thoughts))
    ]
    stored = vectors.vectors_of(name, ids)
    assert np.vstack([stored[i] for i in ids]).tobytes() == timeline.vectors.tobytes()


@pytest.mark.usefixtures("small_segments")
def test_edits_and_deletes_reach_the_segment_that_holds_the_message(runtime: Runtime) -> None:
    runtime.engine.ingest([said(n) for n in range(1, 10)])
    vectors, name = runtime.store.vectors, collection_name(CHANNEL)
    assert len(vectors.segments(name)) >= 3
    runtime.engine.edit(said(1, "Never mind. The disk is fine now. Closing it."))
    runtime.engine.delete(CHANNEL, "m005")
    ids = vectors.all_ids(name)
    assert sorted(ids) == expected_ids(runtime) and len(ids) == len(set(ids))
    assert not any(i.startswith("m005#") for i in ids)
    first = vectors.client.get_collection(name, embedding_function=None)  # type: ignore[attr-defined]
    assert not any(i.startswith("m001#") for i in first.get(include=[])["ids"])
    assert runtime.engine.read(CHANNEL, "m009", EVERYTHING).context is not None


def test_a_collection_made_before_segments_is_segment_0_and_the_next_write_rolls_over(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime.engine.ingest([said(n) for n in range(1, 6)])  # one collection, as before segments
    vectors, name = runtime.store.vectors, collection_name(CHANNEL)
    assert vectors.segments(name) == [name]
    held = sizes(runtime)[0]
    monkeypatch.setattr(ChromaVectors, "segment_vectors", PER_SEGMENT)  # already over it
    runtime.engine.ingest([said(6)])
    assert vectors.segments(name) == [name, segment_name(name, 1)]
    assert sizes(runtime)[0] == held  # nothing more went into the full one
    assert sorted(vectors.all_ids(name)) == expected_ids(runtime)


@pytest.mark.usefixtures("small_segments")
def test_segments_written_after_a_rebuild_stopped_at_its_drop_have_the_channels_settings(
    runtime: Runtime, embedder: Embedder
) -> None:
    runtime.engine.ingest([said(n) for n in range(1, 8)])
    vectors, name = runtime.store.vectors, collection_name(CHANNEL)
    vectors.drop(name)  # a rebuild killed after dropping the damaged index, before writing anew

    repaired = reconcile(runtime.store, embedder)  # the next start embeds the thoughts again
    runtime.engine.ingest([said(n) for n in range(8, 14)])  # ...and later writes roll over

    assert [found.missing_vectors for found in repaired.channels] == [7]
    segments = vectors.segments(name)
    assert len(segments) >= 4 and segments[0] == name
    for segment in segments:
        made = vectors.client.get_collection(segment, embedding_function=None).metadata  # type: ignore[attr-defined]
        assert {key: made[key] for key in MADE_WITH} == MADE_WITH, segment
    assert sorted(vectors.all_ids(name)) == expected_ids(runtime)
    assert vectors.keeps_as_given(name)


@pytest.mark.usefixtures("small_segments")
def test_a_segment_0_made_without_settings_by_an_earlier_version_still_rolls_over(
    runtime: Runtime,
) -> None:
    vectors, name = runtime.store.vectors, collection_name(CHANNEL)
    vectors.client.create_collection(name, embedding_function=None)  # type: ignore[attr-defined]

    runtime.engine.ingest([said(n) for n in range(1, 8)])

    segments = vectors.segments(name)
    assert len(segments) >= 3
    newer = vectors.client.get_collection(segments[-1], embedding_function=None).metadata  # type: ignore[attr-defined]
    assert {key: newer[key] for key in MADE_WITH} == MADE_WITH
    assert sorted(vectors.all_ids(name)) == expected_ids(runtime)


def _vector_bytes(runtime: Runtime, message_ids: list[str]) -> list[bytes]:
    timeline = runtime.store.timeline(CHANNEL)
    return [
        timeline.vectors[row].tobytes()
        for m in timeline.messages
        if m.ref.message_id in message_ids
        for row in range(m.first_row, m.first_row + len(m.thoughts))
    ]


def _files_holding(runtime: Runtime, needles: list[bytes]) -> list[str]:
    folder = runtime.settings.data_dir / "chroma"
    return sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and any(needle in path.read_bytes() for needle in needles)
    )


@pytest.mark.usefixtures("small_segments")
def test_a_forget_leaves_none_of_the_speakers_vectors_in_any_segment_or_file(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime()
    lines = [said(n, speaker="zed" if n % 3 == 0 else "ann") for n in range(1, 13)]
    runtime.engine.ingest(lines)
    runtime.close()  # Chroma's index files written (its log alone holds them before)
    runtime = make_runtime()
    vectors, name = runtime.store.vectors, collection_name(CHANNEL)
    assert len(vectors.segments(name)) >= 3
    zed = [u.message_id for u in lines if u.speaker_id == "zed"]
    needles = _vector_bytes(runtime, zed)
    assert _files_holding(runtime, needles)  # the scan finds them while they are stored

    runtime.schemas.forget_speaker(CHANNEL, "zed")
    runtime.store.finish_erasures()

    assert _files_holding(runtime, needles) == []
    assert not any(i.split("#")[0] in zed for i in vectors.all_ids(name))
    assert sorted(vectors.all_ids(collection_name_now(runtime))) == expected_ids(runtime)


def collection_name_now(runtime: Runtime) -> str:
    """The channel's collection as SQL names it now (a compaction renames it)."""
    with runtime.store.db.read() as session:
        row = runtime.store.db.channel(session, CHANNEL)
        assert row is not None
        return row.collection


@pytest.mark.usefixtures("small_segments")
def test_dropping_a_channel_drops_every_segment(runtime: Runtime) -> None:
    runtime.engine.ingest([said(n) for n in range(1, 8)])
    vectors, name = runtime.store.vectors, collection_name(CHANNEL)
    assert len(vectors.segments(name)) >= 3
    runtime.store.drop_channel(CHANNEL)
    runtime.store.finish_erasures()
    assert vectors.segments(name) == []


@pytest.mark.usefixtures("small_segments")
def test_a_gap_in_the_segments_hides_none_after_it_and_is_never_filled(runtime: Runtime) -> None:
    """A segment gone from the middle (dropped by another process mid-compaction, say): the
    ones after it are still read and deleted, and writes go on after the newest."""
    runtime.engine.ingest([said(n) for n in range(1, 10)])
    vectors, name = runtime.store.vectors, collection_name(CHANNEL)
    before = vectors.segments(name)
    assert len(before) >= 3
    vectors.client.delete_collection(segment_name(name, 1))  # type: ignore[attr-defined]
    runtime.engine.ingest([said(n) for n in range(10, 16)])
    after = vectors.segments(name)
    assert segment_name(name, 1) not in after and after[: len(before) - 1] == [
        before[0],
        *before[2:],
    ]
    assert all(size <= PER_SEGMENT for size in sizes(runtime))
    ids = vectors.all_ids(name)
    assert {vector_id("m015", 0), vector_id("m009", 0)} <= set(ids)
    runtime.engine.delete(CHANNEL, "m009")
    assert vector_id("m009", 0) not in vectors.all_ids(name)


@pytest.mark.usefixtures("small_segments")
def test_a_segment_dropped_after_it_was_listed_is_passed_over_not_made_again(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process drops a segment between a reader's listing and its turn: reads, counts
    and deletes go on with the rest, and no empty segment of that name comes back."""
    runtime.engine.ingest([said(n) for n in range(1, 10)])
    vectors, name = runtime.store.vectors, collection_name(CHANNEL)
    listed = vectors.segments(name)
    dropped = segment_name(name, 1)
    assert dropped in listed
    vectors.client.delete_collection(dropped)  # type: ignore[attr-defined]
    monkeypatch.setattr(ChromaVectors, "segments", lambda self, _name, checked=True: listed)

    kept = [vector for vector in expected_ids(runtime) if vector in set(vectors.all_ids(name))]
    assert vectors.count(name) == len(kept) > 0
    assert set(vectors.vectors_of(name, expected_ids(runtime))) == set(kept)
    vectors.delete_messages(name, ["m009"])
    vectors.delete_thoughts_from(name, "m008", 0)
    vectors.delete_ids(name, [vector_id("m007", 0)])
    monkeypatch.undo()

    assert dropped not in vectors.segments(name)
    assert not {vector_id(m, 0) for m in ("m007", "m008", "m009")} & set(vectors.all_ids(name))


@pytest.mark.usefixtures("small_segments")
def test_a_forget_lists_the_segments_once_however_many_messages_it_removes(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listing and opening every segment per slice of ids made a forget of a large speaker pay
    the channel's segment count once per 500 messages; the ids are sliced inside one pass."""

    def by_two(items: Any, size: int = 2) -> Any:
        return (items[start : start + 2] for start in range(0, len(items), 2))

    for module in ("storage.vectors", "storage.writes"):  # slices of 2, not 500
        monkeypatch.setattr(f"{module}.batches", by_two)
    runtime.engine.ingest([said(n, speaker="zed") for n in range(1, 8)])
    vectors, name = runtime.store.vectors, collection_name(CHANNEL)
    listings: list[str] = []
    listed = ChromaVectors.segments

    def spy(self: ChromaVectors, segment: str, checked: bool = True) -> list[str]:
        listings.append(segment)
        return listed(self, segment, checked)

    monkeypatch.setattr(ChromaVectors, "segments", spy)
    removed = runtime.store.delete_speaker(CHANNEL, "zed")
    monkeypatch.undo()

    assert len(removed) == 7 and listings.count(name) == 1
    assert vectors.all_ids(name) == []


def _unit_rows(count: int, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, 8)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _write(vectors: ChromaVectors, name: str, first: int, count: int) -> None:
    ids = [vector_id(f"m{number:03d}", 0) for number in range(first, first + count)]
    metadatas = [{"message_id": f"m{n:03d}", "thought": 0} for n in range(first, first + count)]
    vectors.upsert(name, ids, _unit_rows(count, first), metadatas)


@pytest.mark.usefixtures("small_segments")
def test_an_embedded_client_is_let_go_once_a_segment_fills_and_the_next_call_finds_everything(
    tmp_path: Path,
) -> None:
    """Chroma keeps every index it loaded until its client closes: a long ingest held each
    segment it filled. The client is closed after the write that rolled over, and opened again
    by the next call, which reads every vector written before."""
    vectors, name = ChromaVectors.embedded(tmp_path / "chroma"), collection_name(CHANNEL)
    vectors.create(name, CHANNEL)
    _write(vectors, name, 0, 2)
    assert vectors.opened  # the newest segment's index is what the next write needs
    _write(vectors, name, 2, 2)  # fills segment 0 and starts segment 1
    assert not vectors.opened
    _write(vectors, name, 4, 1)
    assert vectors.opened
    assert vectors.count(name) == 5
    found = vectors.vectors_of(name, [vector_id(f"m{n:03d}", 0) for n in range(5)])
    assert len(found) == 5 and np.allclose(found[vector_id("m000", 0)], _unit_rows(2, 0)[0])


@pytest.mark.usefixtures("small_segments")
def test_a_call_through_more_segments_than_a_client_may_hold_lets_them_go_when_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A count, a read by id or a forget loads every segment's index (a bot's edit in a big
    channel held them all for good); past HELD_SEGMENTS the client is closed when the call
    ends, never while another call is in progress."""
    monkeypatch.setattr(vectors_module, "HELD_SEGMENTS", 2)
    vectors, name = ChromaVectors.embedded(tmp_path / "chroma"), collection_name(CHANNEL)
    vectors.create(name, CHANNEL)
    for first in range(0, 4 * PER_SEGMENT, PER_SEGMENT):
        _write(vectors, name, first, PER_SEGMENT)  # each segment filled by one write
    assert len(vectors.segments(name)) == 4
    vectors.count(name)  # opens the client again
    assert not vectors.opened
    with vectors._in_use():  # another call in progress
        assert vectors.count(name) == 4 * PER_SEGMENT
        assert vectors.opened
    assert not vectors.opened
    vectors.delete_messages(name, ["m000", "m011"])
    assert vectors.count(name) == 4 * PER_SEGMENT - 2
