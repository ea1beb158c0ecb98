"""A speaker's rows are indexed once per timeline and kept up with its appends."""

from __future__ import annotations

import numpy as np

from awai_engine.schemas.basis import Basis, SpeakerRows
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef, Thought

SPEAKERS = ("ann", "bo", "cy")


def append_messages(timeline: Timeline, count: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(count):
        position = len(timeline.messages)
        speaker = SPEAKERS[int(rng.integers(len(SPEAKERS)))]
        thoughts = tuple(
            Thought(index=i, text=f"thought {position}.{i}") for i in range(int(rng.integers(1, 4)))
        )
        vectors = rng.normal(size=(len(thoughts), 8)).astype(np.float32)
        ref = MessageRef(
            message_id=f"m{position}",
            speaker_id=speaker,
            speaker_name=speaker.title(),
            ts=position,
            position=position,
        )
        timeline.append(ref, "t", "t", thoughts, vectors / np.linalg.norm(vectors, axis=1)[:, None])


def assert_same(ours: Basis | None, theirs: Basis | None) -> None:
    assert (ours is None) == (theirs is None)
    if ours is None or theirs is None:
        return
    assert (ours.keys, ours.texts, ours.message_ids, ours.digest) == (
        theirs.keys,
        theirs.texts,
        theirs.message_ids,
        theirs.digest,
    )
    np.testing.assert_array_equal(ours.positions, theirs.positions)
    np.testing.assert_array_equal(ours.vectors, theirs.vectors)


def test_an_index_that_caught_up_with_appends_cuts_the_same_bases_as_a_fresh_one() -> None:
    timeline = Timeline(dimension=8)
    append_messages(timeline, 40, seed=1)
    index = SpeakerRows(timeline)
    early = {speaker: index.basis("c", speaker) for speaker in SPEAKERS}
    append_messages(timeline, 60, seed=2)
    index.catch_up()
    fresh = SpeakerRows(timeline)
    assert index.speakers() == fresh.speakers()
    for speaker in SPEAKERS:
        for end_row in (None, 5, timeline.messages[40].first_row, timeline.rows - 1):
            assert_same(index.basis("c", speaker, end_row), fresh.basis("c", speaker, end_row))
        # A basis cut before the appends is what it was.
        assert_same(index.basis("c", speaker, timeline.messages[40].first_row), early[speaker])


def test_catching_up_with_nothing_new_changes_nothing() -> None:
    timeline = Timeline(dimension=8)
    append_messages(timeline, 20, seed=3)
    index = SpeakerRows(timeline)
    before = index.basis("c", "ann")
    index.catch_up()
    assert_same(index.basis("c", "ann"), before)
    assert index.count("ann") == sum(
        len(m.thoughts) for m in timeline.messages if m.ref.speaker_id == "ann"
    )


def test_indexing_every_speaker_of_a_restored_timeline_keeps_none_of_its_messages_built() -> None:
    """A timeline loaded from its file holds its messages as columns; re-clustering indexes
    every speaker, and keeping each message it passed as an object took 220 MB at 100k."""
    built = Timeline(dimension=8)
    append_messages(built, 300, seed=5)
    restored = Timeline.restored(
        built.revision,
        built.index,
        built.messages.columns(),
        built.vectors,
        built.row_positions,
        built.row_thought,
        built.cells,
        built.lexicon,
    )
    index, fresh = SpeakerRows(restored), SpeakerRows(built)
    for speaker in SPEAKERS:
        assert_same(index.basis("c", speaker), fresh.basis("c", speaker))
    assert restored.messages.built <= len(SPEAKERS)  # each basis names its last message


def _threaded_and_renamed(count: int, seed: int) -> Timeline:
    """Messages of several speakers, some renamed on the way, some in threads (a thread's root
    names itself as its root), some with no thought at all."""
    rng = np.random.default_rng(seed)
    timeline = Timeline(dimension=8)
    for position in range(count):
        speaker = SPEAKERS[int(rng.integers(len(SPEAKERS)))]
        roots = (None, f"m{max(0, position - 3)}", f"m{position}")
        thoughts = tuple(
            Thought(index=i, text=f"thought {position}.{i}") for i in range(int(rng.integers(0, 3)))
        )
        vectors = rng.normal(size=(len(thoughts), 8)).astype(np.float32)
        ref = MessageRef(
            message_id=f"m{position}",
            speaker_id=speaker,
            speaker_name=f"{speaker.title()}{position // 25}",  # renamed every 25 messages
            ts=position,
            position=position,
            thread_root=roots[int(rng.integers(3))],
        )
        timeline.append(ref, "t", "t", thoughts, vectors)
    return timeline


def _restored(built: Timeline) -> Timeline:
    return Timeline.restored(
        built.revision,
        built.index,
        built.messages.columns(),
        built.vectors,
        built.row_positions,
        built.row_thought,
        built.cells,
        built.lexicon,
    )


def test_a_restored_timeline_has_the_threads_speakers_and_codes_its_appends_gave() -> None:
    """Restoring works column by column; it must give what appending message by message did."""
    built = _threaded_and_renamed(200, seed=7)
    restored = _restored(built)
    assert restored.threads == built.threads and restored.threads  # some replies
    assert restored.top_level == built.top_level
    np.testing.assert_array_equal(restored.speaker_codes, built.speaker_codes)
    assert restored.speakers_seen() == built.speakers_seen()
    for speaker in SPEAKERS:
        assert restored.first_said(speaker) == built.first_said(speaker)
        assert restored.speaker_name(speaker) == built.speaker_name(speaker)
    for position in range(0, 200, 7):
        assert restored.named_speakers(position) == built.named_speakers(position)


def test_a_speakers_rows_are_those_of_their_messages_in_order_and_named_as_of_the_last() -> None:
    timeline = _threaded_and_renamed(150, seed=8)
    index = SpeakerRows(timeline)
    appended = _threaded_and_renamed(60, seed=8)  # the same first 60 messages
    caught_up = SpeakerRows(appended)
    for position in range(60, 150):  # the rest, one at a time, each caught up with
        message = timeline.messages[position]
        appended.append(
            message.ref,
            message.text,
            message.summary,
            message.thoughts,
            timeline.vectors[message.first_row : message.first_row + len(message.thoughts)],
        )
        caught_up.catch_up()
    for speaker in SPEAKERS:
        said = [m for m in timeline.messages if m.ref.speaker_id == speaker]
        rows = [m.first_row + k for m in said for k in range(len(m.thoughts))]
        for each in (index, caught_up):
            assert each.count(speaker) == len(rows)
            basis = each.basis("c", speaker)
            assert basis is not None
            np.testing.assert_array_equal(
                basis.positions, timeline.row_positions[np.asarray(rows, dtype=np.int64)]
            )
            assert each.name(speaker) == said[-1].ref.speaker_name
