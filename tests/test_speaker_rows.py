"""A speaker's rows are indexed once per timeline and kept up with its appends."""

from __future__ import annotations

import pickle

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from awai_engine.schemas.basis import Basis, SpeakerRows
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef, Thought

SPEAKERS = ("ann", "bo", "cy")


def ref(position: int, speaker: str, name: str = "", root: str | None = None) -> MessageRef:
    return MessageRef(
        message_id=f"m{position}",
        speaker_id=speaker,
        speaker_name=name or speaker.title(),
        ts=position,
        position=position,
        thread_root=root,
    )


def append_messages(timeline: Timeline, count: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(count):
        position = len(timeline.messages)
        speaker = SPEAKERS[int(rng.integers(len(SPEAKERS)))]
        thoughts = tuple(
            Thought(index=i, text=f"thought {position}.{i}") for i in range(int(rng.integers(1, 4)))
        )
        vectors = rng.normal(size=(len(thoughts), 8)).astype(np.float32)
        timeline.append(
            ref(position, speaker),
            "t",
            "t",
            thoughts,
            vectors / np.linalg.norm(vectors, axis=1)[:, None],
        )


def restored(built: Timeline) -> Timeline:
    """The timeline as a file would give it back: restored from its columns and arrays."""
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
    loaded = restored(built)
    index, fresh = SpeakerRows(loaded), SpeakerRows(built)
    for speaker in SPEAKERS:
        assert_same(index.basis("c", speaker), fresh.basis("c", speaker))
    assert loaded.messages.built <= len(SPEAKERS)  # each basis names its last message


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
        name = f"{speaker.title()}{position // 25}"  # renamed every 25 messages
        root = roots[int(rng.integers(3))]
        timeline.append(ref(position, speaker, name, root), "t", "t", thoughts, vectors)
    return timeline


def test_a_restored_timeline_has_the_threads_speakers_and_codes_its_appends_gave() -> None:
    """Restoring works column by column; it must give what appending message by message did."""
    built = _threaded_and_renamed(200, seed=7)
    loaded = restored(built)
    assert loaded.threads == built.threads and loaded.threads  # some replies
    assert loaded.top_level == built.top_level
    np.testing.assert_array_equal(loaded.speaker_codes, built.speaker_codes)
    assert loaded.speakers_seen() == built.speakers_seen()
    for speaker in SPEAKERS:
        assert loaded.first_said(speaker) == built.first_said(speaker)
        assert loaded.speaker_name(speaker) == built.speaker_name(speaker)
    for position in range(0, 200, 7):
        assert loaded.named_speakers(position) == built.named_speakers(position)


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


def test_a_timeline_gives_the_same_speakers_until_a_new_one_speaks() -> None:
    """Every basis cut carries the channel's speakers, and naming keeps what it found of them
    by that tuple: it must be the same object until someone new speaks."""
    timeline = Timeline(dimension=3)

    def say(speaker: str) -> None:
        position = len(timeline.messages)
        timeline.append(ref(position, speaker), "t", "t", (), np.empty((0, 3), dtype=np.float32))

    say("ann")
    first = timeline.speakers_seen()
    say("ann")
    assert timeline.speakers_seen() is first
    say("bo")
    assert timeline.speakers_seen() == (("Ann", 0), ("Bo", 2))


def test_a_basis_gives_any_of_its_rows_with_the_bits_of_all_of_them_gathered() -> None:
    """A reading takes only a recalled schema's rows (``vectors_at``); clustering takes them
    all (``vectors``): either way, and in either order, the same float32 bits."""
    timeline = Timeline(dimension=8)
    append_messages(timeline, 60, seed=4)
    index = SpeakerRows(timeline)
    picked = [5, 0, 3, 3, 11]
    first = index.basis("c", "ann")
    assert first is not None
    alone = first.vectors_at(picked)
    second = index.basis("c", "ann")
    assert second is not None
    whole = second.vectors
    assert alone.dtype == whole.dtype == np.float32
    np.testing.assert_array_equal(alone, whole[picked])
    np.testing.assert_array_equal(second.vectors_at(picked), alone)
    np.testing.assert_array_equal(first.rows.head(12).all(), whole[:12])


def test_a_basis_sent_to_another_process_carries_its_own_rows_not_the_channels() -> None:
    """Pickled (a chain handed to a worker), a basis's rows are its speaker's alone: the
    timeline's matrix it would gather them from stays behind."""
    timeline = Timeline(dimension=8)
    append_messages(timeline, 300, seed=5)
    basis = SpeakerRows(timeline).basis("c", "ann", timeline.messages[30].first_row)
    assert basis is not None
    sent = pickle.dumps(basis.rows)
    assert len(sent) < timeline.vectors.nbytes // 4  # ann's first few rows, not 300 messages'
    np.testing.assert_array_equal(pickle.loads(sent).all(), basis.vectors)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_a_speakers_rows_made_on_first_use_are_the_same_whenever_they_are_asked_for(
    data: st.DataObject,
) -> None:
    """An index cuts a speaker's rows from its first grouping when first asked: asked before
    some appends, after them or never until the end, every speaker's rows and name are those
    of an index made afresh at that moment."""
    whole = _threaded_and_renamed(90, seed=data.draw(st.integers(0, 50), label="seed"))
    start = data.draw(st.integers(1, 89), label="messages when the index is made")
    timeline = Timeline(dimension=8)

    def grown_to(end: int) -> None:
        for position in range(len(timeline.messages), end):
            message = whole.messages[position]
            timeline.append(
                message.ref,
                message.text,
                message.summary,
                message.thoughts,
                whole.vectors[message.first_row : message.first_row + len(message.thoughts)],
            )

    grown_to(start)
    index = SpeakerRows(timeline)
    for step in data.draw(st.lists(st.integers(0, 30), max_size=6), label="appends"):
        asked = data.draw(st.sets(st.sampled_from(SPEAKERS)), label="asked before them")
        fresh = SpeakerRows(timeline)
        for speaker in sorted(asked):
            assert index.count(speaker) == fresh.count(speaker)
            assert index.name(speaker) == fresh.name(speaker)
            assert_same(index.basis("c", speaker), fresh.basis("c", speaker))
        grown_to(min(90, len(timeline.messages) + step))
        index.catch_up()
    fresh = SpeakerRows(timeline)
    assert index.speakers() == fresh.speakers()
    for speaker in SPEAKERS:
        assert index.name(speaker) == fresh.name(speaker)
        assert_same(index.basis("c", speaker), fresh.basis("c", speaker))
