"""A channel's read model persisted next to the data: loaded at start, never trusted over SQL.

Each test drives the real store (SQLite, embedded Chroma, MiniLM) with ``persist_every`` 1 (every
read that changed the timeline writes it) and a small cell tree, so a few dozen messages grow
several levels. "A fresh rebuild" is a store opened with persistence off on the same folder.
"""

from __future__ import annotations

import gc
import itertools
import json
import logging
import mmap
import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awai_engine import timeline as timeline_module
from awai_engine.backends.offline import OfflineBackend
from awai_engine.engine import UnknownMessageError
from awai_engine.recall_index import RecallIndexRules, RecallIndexSettings
from awai_engine.timeline import Timeline
from awai_engine.values import Utterance
from awai_engine.visibility import EVERYTHING, Scopes
from bots.runtime import Runtime, open_runtime
from storage import read_model, read_model_files
from storage.read_model_files import Packed, ReadModelFiles
from storage.store import AwaiStore
from tests.factories import utterance
from tests.test_crash_safety import Zygote
from tests.test_erasure import hits
from tests.test_read_model import LINES, assert_same_timeline

CHANNEL = "terminal:local:test"
SMALL_INDEX = RecallIndexSettings(
    rules=RecallIndexRules(exact_rows=16, cells=2, split=2, probes=2, occurrence_probes=1)
)
PERSISTED = {"read_model": {"persist_every": 1}, "recall_index": SMALL_INDEX}
PRIVATE = "private-thread:t"
FOLDERS = itertools.count()


@pytest.fixture(autouse=True)
def every_part_mapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every part used as it is gets mapped from its file, as the large ones of a real channel
    are (``read_model_files.MAPPED_FROM``): these channels are too small to have one."""
    monkeypatch.setattr(read_model_files, "MAPPED_FROM", 1)


def persisted_runtime(make_runtime: Callable[..., Runtime], name: str = "data") -> Runtime:
    return make_runtime(name, **PERSISTED)


def rebuilt(runtime: Runtime) -> AwaiStore:
    """A store on the same folder that builds every timeline from SQL and Chroma."""
    return AwaiStore.open(runtime.settings.model_copy(update={"read_model": _no_files(runtime)}))


def _no_files(runtime: Runtime):  # type: ignore[no-untyped-def]
    return runtime.settings.read_model.model_copy(update={"persist": False})


def snapshot_folder(runtime: Runtime) -> Path:
    (folder,) = [p for p in (runtime.settings.data_dir / "read-models").iterdir() if p.is_dir()]
    return folder


def generation(runtime: Runtime) -> Path:
    folder = snapshot_folder(runtime)
    return folder / json.loads((folder / "current.json").read_text())["generation"]


def lines(first: int, count: int, speaker: str = "ann") -> list[Utterance]:
    return [
        utterance(f"m{i}", f"{LINES[i % len(LINES)]} #{i}", speaker=("ann", "bo")[i % 2])
        for i in range(first, first + count)
    ]


def assert_same_cells(ours: Timeline, theirs: Timeline) -> None:
    mine, other = ours.cells.state(), theirs.cells.state()
    assert mine.filed == other.filed
    np.testing.assert_array_equal(mine.row_cells, other.row_cells)
    assert len(ours.cells.levels) == len(theirs.cells.levels) >= 2  # the small index grew a tree
    for a, b in zip(ours.cells.levels, theirs.cells.levels, strict=True):
        np.testing.assert_array_equal(a.centroids, b.centroids)
        np.testing.assert_array_equal(a.cell_sizes, b.cell_sizes)
        for rows, others, size in zip(a.cell_rows, b.cell_rows, a.cell_sizes, strict=True):
            np.testing.assert_array_equal(rows[:size], others[:size])
    assert ours.lexicon.state().terms == theirs.lexicon.state().terms


def test_a_started_process_loads_the_file_and_reads_only_the_rows_added_since(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 40))
    writer.store.timeline(CHANNEL)  # written to disk
    writer.engine.ingest(lines(41, 3))  # after the file: to be caught up from SQL

    started = AwaiStore.open(writer.settings)
    asked: list[list[str]] = []
    original = started.vectors.vectors_of
    monkeypatch.setattr(
        started.vectors, "vectors_of", lambda c, ids: asked.append(list(ids)) or original(c, ids)
    )
    try:
        loaded = started.timeline(CHANNEL)
        # Only the new messages' vectors were read (a rebuild reads every message's).
        assert {vector.split("#")[0] for batch in asked for vector in batch} == {
            "m41",
            "m42",
            "m43",
        }
        reference = rebuilt(writer)
        assert_same_timeline(loaded, reference.timeline(CHANNEL))
        assert_same_cells(loaded, reference.timeline(CHANNEL))
        reference.close()
    finally:
        started.close()


def test_a_long_ingest_holds_its_channel_loaded_back_from_its_file_not_as_appended_objects(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A channel grown by appends alone is written out and loaded back as columns once it
    holds ``COMPACT_APPENDED`` appended messages: the same timeline, and the one it replaces
    is retired, so nothing derived from it keeps the appended objects alive."""
    monkeypatch.setattr(read_model, "COMPACT_APPENDED", 12)
    writer = make_runtime("data", read_model={"persist_every": 1000}, recall_index=SMALL_INDEX)
    writer.engine.ingest(lines(1, 10))
    first = writer.store.timeline(CHANNEL)
    assert first.messages.restored == 0  # under the bar: kept as appended
    before = writer.engine.read(CHANNEL, "m6", EVERYTHING).context
    writer.engine.ingest(lines(11, 5))
    compacted = writer.store.timeline(CHANNEL)
    assert first.retired and compacted is not first
    assert compacted.messages.restored == len(compacted.messages) == 15
    assert compacted.messages.built == 0
    writer.engine.ingest(lines(16, 4))  # appended after it, caught up as before
    grown = writer.store.timeline(CHANNEL)
    assert grown is compacted and len(grown.messages) == 19
    reference = rebuilt(writer)
    try:
        assert_same_timeline(grown, reference.timeline(CHANNEL))
        assert_same_cells(grown, reference.timeline(CHANNEL))
        # what a message read as before the channel was loaded back, it reads as after
        assert writer.engine.read(CHANNEL, "m6", EVERYTHING).context == before
    finally:
        reference.close()


def test_a_channel_whose_file_cannot_be_written_stays_as_appended(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading back needs the file current: when it cannot be written, the timeline in memory
    is kept as it is (and still read right)."""
    monkeypatch.setattr(read_model, "COMPACT_APPENDED", 5)
    writer = make_runtime("data", read_model={"persist_every": 1000}, recall_index=SMALL_INDEX)
    files = writer.store.read_model.files
    assert files is not None
    monkeypatch.setattr(files, "save", lambda *args, **kwargs: None)  # a write that fails
    writer.engine.ingest(lines(1, 8))
    held = writer.store.timeline(CHANNEL)
    assert not held.retired and held.messages.restored == 0 and len(held.messages) == 8
    assert writer.engine.read(CHANNEL, "m8", EVERYTHING).context.message.message_id == "m8"


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 6)),
        st.tuples(st.just("append private"), st.integers(1, 3)),
        st.tuples(st.just("edit"), st.integers(0, 80)),
        st.tuples(st.just("delete"), st.integers(0, 80)),
        st.tuples(st.just("make the thread public"), st.just(0)),
        st.tuples(st.just("read"), st.integers(0, 1)),
        st.tuples(st.just("restart"), st.integers(0, 1)),
    ),
    min_size=2,
    max_size=8,
)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=OPERATIONS)
@pytest.mark.slow
def test_reading_from_a_persisted_model_equals_reading_from_a_fresh_rebuild(
    operations: list[tuple[str, int]], make_runtime: Callable[..., Runtime]
) -> None:
    """Two processes write, read and restart in any order; whatever file is on disk, a started
    process reads every message (for everyone, and for an asker outside the private thread)
    exactly as a process that rebuilt the channel from SQL and Chroma."""
    name = f"persisted-{next(FOLDERS)}"
    processes = [persisted_runtime(make_runtime, name), persisted_runtime(make_runtime, name)]
    processes[0].engine.ingest(lines(1, 12))
    stored = [f"m{i}" for i in range(1, 13)]
    next_id = 13
    for step, (operation, value) in enumerate(operations):
        runtime = processes[step % 2]
        if operation in ("append", "append private"):
            batch = lines(next_id, value)
            if operation == "append private":
                batch = [
                    u.model_copy(update={"scope": PRIVATE, "thread_root": "m1"}) for u in batch
                ]
            runtime.engine.ingest(batch)
            stored += [u.message_id for u in batch]
            next_id += value
        elif operation == "edit" and stored:
            target = stored[value % len(stored)]
            runtime.engine.edit(utterance(target, f"edited {target}: {LINES[value % 8]}"))
        elif operation == "delete" and len(stored) > 1:
            runtime.engine.delete(CHANNEL, stored.pop(value % len(stored)))
        elif operation == "make the thread public":
            runtime.store.rescope_thread(CHANNEL, "m1", "channel")
        elif operation == "read":
            runtime.engine.context(CHANNEL, stored[-1], EVERYTHING)
        elif operation == "restart":
            processes[value] = persisted_runtime(make_runtime, name)
    started = persisted_runtime(make_runtime, name)
    reference = Runtime(
        started.settings, rebuilt(started), started.engine.embedder, OfflineBackend()
    )
    try:
        assert_same_timeline(started.store.timeline(CHANNEL), reference.store.timeline(CHANNEL))
        for asker in (EVERYTHING, Scopes.channel()):
            view = reference.engine.views.view(CHANNEL, reference.store.timeline(CHANNEL), asker)
            visible = [m.message_id for m in view.timeline.messages]
            for message_id in visible[-6:]:
                ours = started.engine.context(CHANNEL, message_id, asker)
                theirs = reference.engine.context(CHANNEL, message_id, asker)
                assert ours == theirs
    finally:
        reference.close()


@pytest.mark.parametrize(
    "damage",
    [
        "vectors cut short",
        "a byte of the vectors changed",
        "a byte of the texts changed",
        "a cell level missing",
        "the pointer torn",
        "the pointer names a folder that is gone",
    ],
)
@pytest.mark.slow
def test_a_torn_or_damaged_file_is_detected_and_the_channel_rebuilt(
    damage: str, make_runtime: Callable[..., Runtime]
) -> None:
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 40))
    writer.store.timeline(CHANNEL)
    parts = generation(writer)
    if damage == "vectors cut short":
        vectors = parts / "vectors"
        vectors.write_bytes(vectors.read_bytes()[:-100])
    elif damage == "a byte of the vectors changed":
        vectors = parts / "vectors"
        data = bytearray(vectors.read_bytes())
        data[len(data) // 2] ^= 1
        vectors.write_bytes(bytes(data))
    elif damage == "a byte of the texts changed":
        strings = parts / "texts.bin"
        data = bytearray(strings.read_bytes())
        at = data.index(b"staging")
        data[at] = ord("S")
        strings.write_bytes(bytes(data))
    elif damage == "a cell level missing":
        (parts / "level1_cells").unlink()
    elif damage == "the pointer torn":
        pointer = snapshot_folder(writer) / "current.json"
        pointer.write_bytes(pointer.read_bytes()[:40])
    else:
        shutil.rmtree(parts)

    started = AwaiStore.open(writer.settings)
    reference = rebuilt(writer)
    try:
        assert_same_timeline(started.timeline(CHANNEL), reference.timeline(CHANNEL))
        assert generation(writer) != parts  # the damaged one is gone, a new one written
        assert not parts.exists()
    finally:
        started.close()
        reference.close()


def resident_kib(path: Path, field: str = "Rss:") -> int:
    """KiB of ``path``'s pages this process has mapped and resident (``/proc/self/smaps``;
    ``field="Size:"``: mapped, resident or not)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5:  # a mapping's header line
            inside = len(fields) >= 6 and fields[5] == str(path)
        elif inside and fields[0] == field:
            total += int(fields[1])
    return total


def test_a_loaded_model_keeps_its_vectors_out_of_memory_until_a_reading_scores_them(
    make_runtime: Callable[..., Runtime],
) -> None:
    """The vectors file is checked when loaded, but not through the map the rows are read from:
    that made every page of it (186 MB at 100k messages) resident in every process holding the
    channel, where a reading touches only the rows it scores."""
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 400))
    writer.store.timeline(CHANNEL)
    vectors = generation(writer) / "vectors"
    writer.close()
    started = AwaiStore.open(writer.settings)
    try:
        timeline = started.timeline(CHANNEL)
        assert isinstance(timeline.vectors, np.memmap)
        assert resident_kib(vectors) == 0
        float(np.asarray(timeline.vectors).sum())  # a reading that scores every row
        assert resident_kib(vectors) * 1024 >= vectors.stat().st_size // 2
    finally:
        started.close()


def test_appending_to_a_loaded_model_copies_none_of_its_vectors_and_equals_a_rebuild(
    make_runtime: Callable[..., Runtime],
) -> None:
    """The first append to a loaded channel copied every vector of its file into the process
    (+186 MiB at 100k messages, reading every page of the map): the file's rows now stay
    mapped under the grown array, and only the rows appended since are in memory. A copy
    would have read every page of the file; at most one is resident after several appends."""
    writer = make_runtime("data", read_model={"persist_every": 1})
    writer.engine.ingest(lines(1, 400))
    writer.store.timeline(CHANNEL)
    vectors = generation(writer) / "vectors"
    writer.close()
    started = open_runtime(writer.settings)
    reference = None
    try:
        loaded = started.store.timeline(CHANNEL)
        assert isinstance(loaded.vectors, np.memmap) and resident_kib(vectors) == 0
        loaded_bytes = vectors.stat().st_size  # the appends below are written after these
        for first in (401, 403, 405):
            started.engine.ingest(lines(first, 2))
            assert started.store.timeline(CHANNEL) is loaded  # caught up, not rebuilt
        assert not isinstance(loaded.vectors, np.memmap) and loaded.rows > 400
        # The file's rows are still read from the file, not from a copy, and at most the page
        # they share with the first rows appended after them is resident.
        assert resident_kib(vectors, "Size:") * 1024 >= loaded_bytes
        assert resident_kib(vectors) <= mmap.PAGESIZE // 1024
        reference = rebuilt(started)
        assert_same_timeline(loaded, reference.timeline(CHANNEL))
    finally:
        started.close()
        if reference is not None:
            reference.close()
    again = AwaiStore.open(writer.settings)  # what the appends wrote reads back the same
    reference = rebuilt(started)
    try:
        assert_same_timeline(again.timeline(CHANNEL), reference.timeline(CHANNEL))
    finally:
        again.close()
        reference.close()


def test_listing_a_loaded_channels_message_ids_builds_none_of_its_messages(
    make_runtime: Callable[..., Runtime],
) -> None:
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 30))
    expected = [message.message_id for message in writer.store.timeline(CHANNEL).messages]
    writer.close()
    started = persisted_runtime(make_runtime, "data")
    assert started.message_ids(CHANNEL) == expected == [f"m{i}" for i in range(1, 31)]
    assert started.store.timeline(CHANNEL).messages.restored == 30
    assert started.store.timeline(CHANNEL).messages.built == 0


def test_a_held_channel_keeps_a_bounded_number_of_its_messages_built_and_reads_the_same(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-running bot reads many messages of a loaded channel: past the bound the oldest
    built ones go back to their columns, and every reading is what it was with all of them."""
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 60))
    before = [writer.engine.read(CHANNEL, f"m{i}", EVERYTHING) for i in range(1, 61)]
    writer.close()
    monkeypatch.setattr(timeline_module, "BUILT_KEPT", 7)
    started = persisted_runtime(make_runtime, "data")
    messages = started.store.timeline(CHANNEL).messages
    for i in range(1, 61):
        assert started.engine.read(CHANNEL, f"m{i}", EVERYTHING) == before[i - 1]
        assert messages.built <= 7
    assert messages.built == 7 and messages.restored == 60


def test_a_removal_shreds_the_file_at_once_and_a_stale_copy_is_never_read(
    make_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    """A delete removes the file with the message (before the erasure is even finished); a file
    from before the delete (a process that crashed while writing, a restored backup) fails the
    check against SQL, is shredded, and the channel rebuilt without the message."""
    writer = persisted_runtime(make_runtime)
    secret = utterance("m50", "the zyxwvutq password is hunter2")
    writer.engine.ingest([*lines(1, 20), secret])
    writer.store.timeline(CHANNEL)
    copy = tmp_path / "before-the-delete"
    shutil.copytree(snapshot_folder(writer), copy)
    assert hits(snapshot_folder(writer), "zyxwvutq")

    other = persisted_runtime(make_runtime)  # another process on the same folder deletes it
    other.engine.delete(CHANNEL, "m50")
    assert hits(writer.settings.data_dir / "read-models", "zyxwvutq") == []

    folder = snapshot_folder(writer)
    shutil.rmtree(folder)
    shutil.copytree(copy, folder)  # the stale file is back
    started = AwaiStore.open(writer.settings)
    try:
        assert "m50" not in started.timeline(CHANNEL).position_of
        assert hits(writer.settings.data_dir / "read-models", "zyxwvutq") == []
    finally:
        started.close()


def test_a_removal_zeroes_the_vectors_a_process_still_holds_open(
    make_runtime: Callable[..., Runtime],
) -> None:
    """Unlinking leaves a file's bytes on disk while a process keeps it open or mapped: the
    removed message's vector (which says much of its text) is zeroed in place first."""
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest([*lines(1, 20), utterance("m50", "the zyxwvutq password is hunter2")])
    writer.store.timeline(CHANNEL)
    with (generation(writer) / "vectors").open("rb") as held:  # as a reading process holds it
        assert any(held.read())
        other = persisted_runtime(make_runtime)
        other.engine.delete(CHANNEL, "m50")
        held.seek(0)
        left = held.read()
    assert left and not any(left)


def test_a_process_reading_a_loaded_file_reads_right_after_another_removes_a_message_it_lacks(
    make_runtime: Callable[..., Runtime],
) -> None:
    """Found by the property test above: a process maps the file and appends its own messages;
    another deletes one of those (which the first has not caught up yet, so its fingerprint
    still holds and it is caught up, not rebuilt). The delete shredded the file, and zeros over
    it turned the first process's mapped rows into zeros, which it read and wrote into its next
    file. A mapped file is now unlinked alone and its rows stay what they were."""
    first = persisted_runtime(make_runtime, "two")
    second = persisted_runtime(make_runtime, "two")
    first.engine.ingest(lines(1, 12))
    first.engine.ingest(lines(13, 2))  # the file holds the first 12, read before this batch
    first.store.timeline(CHANNEL)  # and now all 14
    assert isinstance(second.store.timeline(CHANNEL).vectors, np.memmap)  # loaded, mapped
    second.engine.ingest(lines(15, 6))
    first.engine.delete(CHANNEL, "m18")  # one of the second's, not yet in its timeline
    second.engine.ingest(lines(21, 1))
    reference = rebuilt(second)
    started = AwaiStore.open(second.settings)
    try:
        assert_same_timeline(second.store.timeline(CHANNEL), reference.timeline(CHANNEL))
        assert_same_timeline(started.timeline(CHANNEL), reference.timeline(CHANNEL))
    finally:
        started.close()
        reference.close()


def test_a_process_lets_go_of_a_file_another_shreds_at_its_next_reading_and_it_is_zeroed_then(
    make_runtime: Callable[..., Runtime],
) -> None:
    """While a process maps the file, a removal elsewhere unlinks it without zeros (see above):
    its bytes stay on disk only until that process's next reading, which finds the file gone,
    drops its timeline and reads the channel again; the last mapping zeros the file."""
    writer = persisted_runtime(make_runtime, "held")
    writer.engine.ingest([*lines(1, 20), utterance("m50", "the zyxwvutq password is hunter2")])
    writer.store.timeline(CHANNEL)
    holder = persisted_runtime(make_runtime, "held")
    loaded = holder.store.timeline(CHANNEL)
    assert isinstance(loaded.vectors, np.memmap)
    expected = np.array(loaded.vectors)
    # The files, even once unlinked: the vectors, and the texts (mapped too, see above).
    spy = os.open(generation(writer) / "vectors", os.O_RDONLY)
    texts = os.open(generation(writer) / "texts.bin", os.O_RDONLY)
    size = os.fstat(texts).st_size
    try:
        writer.engine.delete(CHANNEL, "m50")
        assert hits(writer.settings.data_dir / "read-models", "zyxwvutq") == []
        np.testing.assert_array_equal(loaded.vectors, expected)  # not zeroed under the holder
        assert os.pread(spy, expected.nbytes, 0) == expected.tobytes()
        assert b"zyxwvutq" in os.pread(texts, size, 0)
        assert loaded.messages[loaded.position_of["m50"]].text.startswith("the zyxwvutq")

        holder.engine.context(CHANNEL, "m20", EVERYTHING)
        assert loaded.retired and holder.store.timeline(CHANNEL) is not loaded
        assert "m50" not in holder.store.timeline(CHANNEL).position_of
        del loaded
        gc.collect()
        assert os.pread(spy, expected.nbytes, 0) == bytes(expected.nbytes)
        assert os.pread(texts, size, 0) == bytes(size)
    finally:
        os.close(spy)
        os.close(texts)


def test_the_schedulers_check_lets_go_of_a_file_another_process_shredded(
    make_runtime: Callable[..., Runtime],
) -> None:
    """A bot that holds the channel but is not asked to read it lets go at the check the
    scheduler runs in every process."""
    writer = persisted_runtime(make_runtime, "idle")
    writer.engine.ingest(lines(1, 20))
    writer.store.timeline(CHANNEL)
    holder = persisted_runtime(make_runtime, "idle")
    loaded = holder.store.timeline(CHANNEL)
    writer.engine.ingest(lines(21, 2))
    writer.store.timeline(CHANNEL)  # the file holds all 22
    # The file cut to 21 in a new generation, the one the holder maps shredded; what the holder
    # holds unchanged.
    writer.engine.delete(CHANNEL, "m22")
    assert holder.store.drop_outdated_timelines() == [CHANNEL]
    assert loaded.retired and not holder.store.holds_timeline(CHANNEL)


def test_a_thread_made_private_in_another_process_is_private_in_a_loaded_model(
    make_runtime: Callable[..., Runtime],
) -> None:
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(
        [
            *lines(1, 12),
            *[utterance(f"m{i}", f"the staging deploy thread {i}", thread="m1") for i in (20, 21)],
            utterance("m30", "back to the staging deploy thread"),
        ]
    )
    writer.store.timeline(CHANNEL)  # the file says the thread is public
    persisted_runtime(make_runtime).store.rescope_thread(CHANNEL, "m1", PRIVATE)

    started = persisted_runtime(make_runtime)
    timeline = started.store.timeline(CHANNEL)
    assert [timeline.scopes[timeline.position_of[m]] for m in ("m20", "m21")] == [PRIVATE] * 2
    member = started.engine.context(CHANNEL, "m30", Scopes.channel(PRIVATE))
    assert {a.source.message_id for a in member.associations} & {"m20", "m21"}
    outsider = started.engine.context(CHANNEL, "m30", Scopes.channel())
    assert {a.source.message_id for a in outsider.associations}.isdisjoint({"m20", "m21"})
    with pytest.raises(UnknownMessageError):
        started.engine.context(CHANNEL, "m21", Scopes.channel())


def test_a_read_only_data_folder_reads_its_file_without_writing(
    make_runtime: Callable[..., Runtime],
) -> None:
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 20))
    writer.store.timeline(CHANNEL)
    writer.engine.ingest(lines(21, 2))
    before = sorted(p.name for p in snapshot_folder(writer).rglob("*"))
    looking = AwaiStore.open(writer.settings, read_only=True)  # export, doctor, schemas
    try:
        assert len(looking.timeline(CHANNEL).messages) == 22
    finally:
        looking.close()
    assert sorted(p.name for p in snapshot_folder(writer).rglob("*")) == before


def test_a_start_whose_file_is_current_reads_without_opening_chroma_or_the_model(
    make_runtime: Callable[..., Runtime],
) -> None:
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 20))
    expected = writer.engine.context(CHANNEL, "m20", EVERYTHING)  # the file is written
    started = open_runtime(writer.settings)  # the start-up check, as every command runs it
    try:
        assert started.engine.context(CHANNEL, "m20", EVERYTHING) == expected
        assert not started.store.vectors.opened
        assert not started.engine.embedder.loaded
    finally:
        started.close()

    writer.engine.ingest(lines(21, 1))  # the file is behind SQL now: it vouches for nothing
    behind = open_runtime(writer.settings)
    try:
        assert behind.store.vectors.opened  # the start-up check counted the vectors in Chroma
        assert [m.message_id for m in behind.store.timeline(CHANNEL).messages][-1] == "m21"
    finally:
        behind.close()  # and the file it caught up is written as it closes
    last = open_runtime(writer.settings)
    try:
        assert len(last.store.timeline(CHANNEL).messages) == 21
        assert not last.store.vectors.opened
    finally:
        last.close()


def test_a_start_with_other_blas_threads_still_reads_the_file_it_was_made_with_the_same_index(
    make_runtime: Callable[..., Runtime],
) -> None:
    """The file depends on the index's fitted rules, not on how many threads multiply: an
    operator turning ``AWAI_RECALL_INDEX__BLAS_THREADS`` does not make every channel rebuild."""
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 20))
    expected = writer.engine.context(CHANNEL, "m20", EVERYTHING)  # the file is written
    threads = writer.settings.recall_index.model_copy(update={"blas_threads": 2})
    started = open_runtime(writer.settings.model_copy(update={"recall_index": threads}))
    try:
        assert started.engine.context(CHANNEL, "m20", EVERYTHING) == expected
        assert not started.store.vectors.opened  # read from the file, not rebuilt
    finally:
        started.close()


def test_a_file_written_before_the_rules_were_split_from_the_settings_is_read_not_rebuilt(
    make_runtime: Callable[..., Runtime], caplog: pytest.LogCaptureFixture
) -> None:
    """Files written before the index's rules became their own value recorded ``blas_threads``
    beside them: an upgrade reads them as they are, and a file with other rules is rebuilt
    quietly (an upgrade is routine, not damage)."""
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 20))
    expected = writer.engine.context(CHANNEL, "m20", EVERYTHING)  # the file is written
    pointer = snapshot_folder(writer) / "current.json"
    meta = json.loads(pointer.read_text())
    pointer.write_text(json.dumps({**meta, "index": {**meta["index"], "blas_threads": 1}}))
    started = open_runtime(writer.settings)
    try:
        assert started.engine.context(CHANNEL, "m20", EVERYTHING) == expected
        assert not started.store.vectors.opened  # read from the file, not rebuilt
    finally:
        started.close()

    meta = json.loads(pointer.read_text())
    pointer.write_text(json.dumps({**meta, "index": {**meta["index"], "probes": 99}}))
    with caplog.at_level(logging.INFO, logger="storage.read_model_files"):
        other = open_runtime(writer.settings)
        try:
            assert other.engine.context(CHANNEL, "m20", EVERYTHING) == expected
        finally:
            other.close()
    rebuilt_said = [r for r in caplog.records if "unusable" in r.getMessage()]
    assert rebuilt_said and all(r.levelno == logging.INFO for r in rebuilt_said)


def test_a_file_made_from_a_database_since_reset_is_never_taken_for_the_new_one(
    make_runtime: Callable[..., Runtime],
) -> None:
    """A reset database counts revisions and row ids from the same numbers again, so a kept
    file can match them while the messages differ: the channel row's incarnation tells them
    apart (found in review: m3, which the new database does not hold, was read)."""
    said = ["we ship the release on friday", "the staging box is down again"]
    writer = persisted_runtime(make_runtime)
    for n, text in enumerate([*said, "the zyxwvutq password is hunter2"], start=1):
        writer.engine.ingest([utterance(f"m{n}", text)])
    writer.engine.read(CHANNEL, "m3", EVERYTHING)
    writer.close()
    # The database replaced by a new one made beside the same vectors (a database that is lost
    # is refused: storage.lost_database); the read-models folder stays.
    data_dir = writer.settings.data_dir
    other = make_runtime(
        "other",
        read_model={"persist": False},
        recall_index=SMALL_INDEX,
        chroma_path=data_dir / "chroma",
    )
    for message_id, text in [("m1", said[0]), ("m2", said[1]), ("m4", "lunch at noon anyone")]:
        other.engine.ingest([utterance(message_id, text)])
    other.close()
    for leftover in data_dir.glob("awai.sqlite3*"):
        leftover.unlink()
    shutil.copy(other.settings.data_dir / "awai.sqlite3", data_dir)

    fresh = persisted_runtime(make_runtime)
    assert list(fresh.store.timeline(CHANNEL).position_of) == ["m1", "m2", "m4"]


@pytest.mark.slow
def test_a_writer_killed_at_any_step_leaves_the_file_as_it_was_or_as_it_was_meant_to_be(
    make_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    """SIGKILL after every step that changes the disk, of an append to a file and of a first
    whole write (tests/append_worker.py): the file left loads as the old prefix or the whole
    channel, never torn, never shredded; and the next write appends past what the killed one
    left, to the whole channel."""
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 30))
    writer.store.timeline(CHANNEL)
    folder = writer.settings.data_dir / "read-models"
    shutil.copytree(folder, tmp_path / "prefix")
    writer.engine.ingest(lines(31, 14))
    writer.store.timeline(CHANNEL)  # appended: the file holds the whole channel
    shutil.copytree(folder, tmp_path / "whole")
    index = writer.settings.recall_index
    held = loaded_as_one_of([tmp_path / "prefix", tmp_path / "whole"], index)
    zygote = Zygote(tmp_path / "worker.log", module="tests.append_worker")

    def job(target: Path, pause_at: int) -> list[str]:
        return zygote.killed_after(
            {
                "channel": CHANNEL,
                "index": index.rules.model_dump(),
                "source": str(tmp_path / "whole"),
                "target": str(target),
                "pause_at": pause_at,
            }
        )

    try:
        for start in ("a file of the first 30", "no file"):
            left: list[int | None] = []
            for step in itertools.count(1):
                target = tmp_path / f"target-{len(left)}-{start}"
                if start == "no file":
                    target.mkdir()
                else:
                    shutil.copytree(tmp_path / "prefix", target)
                said = job(target, step)
                if said[-2].split()[1] == "DONE":
                    break
                assert said[-1].endswith(f" {-signal.SIGKILL}"), said
                left.append(held(target))
                assert job(target, 0)[-1].endswith(" 0")  # the next write, to its end
                assert held(target) == 44
            if start == "no file":
                assert set(left) == {None, 44}  # nothing published, or all of it
            else:
                assert set(left) == {30, 44}  # never torn, never shredded
            assert len(left) >= 20  # every step of the write was a kill point
    finally:
        zygote.close()


def test_a_file_grows_by_appending_the_new_messages_not_by_being_rewritten(
    make_runtime: Callable[..., Runtime],
) -> None:
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 30))
    writer.store.timeline(CHANNEL)
    parts = generation(writer)
    before = {path.name: path.read_bytes() for path in parts.iterdir()}
    inode = (parts / "vectors").stat().st_ino

    writer.engine.ingest(lines(31, 14))  # crosses a level of the small cell tree
    writer.store.timeline(CHANNEL)
    assert generation(writer) == parts and (parts / "vectors").stat().st_ino == inode
    for name, old in before.items():
        assert (parts / name).read_bytes()[: len(old)] == old  # every byte written stays
    started = AwaiStore.open(writer.settings)
    reference = rebuilt(writer)
    try:
        assert_same_timeline(started.timeline(CHANNEL), reference.timeline(CHANNEL))
        assert_same_cells(started.timeline(CHANNEL), reference.timeline(CHANNEL))
    finally:
        started.close()
        reference.close()


def test_the_file_is_current_when_an_ingest_ends_so_the_next_start_reads_no_row(
    make_runtime: Callable[..., Runtime],
) -> None:
    """An ingest reads the timeline before each batch it stores, so the last batch is not in
    it when the process closes: closing catches it up and appends it."""
    writer = make_runtime("data", recall_index=SMALL_INDEX)  # persisted every 500 messages
    writer.engine.ingest(lines(1, 20))
    writer.engine.ingest(lines(21, 20))
    writer.close()
    started = open_runtime(writer.settings)
    try:
        assert len(started.store.timeline(CHANNEL).messages) == 40
        assert not started.store.vectors.opened  # vouched for by the file: current at close
    finally:
        started.close()


def test_the_vectors_are_read_whole_for_their_check_once_until_the_file_changes(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vectors file is most of a channel's bytes: a load that checked it leaves a stamp, and
    the next load of the file as it was skips reading it; a write, or an edit by any tool, brings
    the whole check back."""
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 30))
    writer.store.timeline(CHANNEL)
    checked: list[int] = []
    crc_of = read_model_files._crc_of

    def counting(path: Path, length: int) -> int:
        if path.name == "vectors":  # the other parts mapped here are checked at every load
            checked.append(length)
        return crc_of(path, length)

    monkeypatch.setattr(read_model_files, "_crc_of", counting)
    files = ReadModelFiles(writer.settings.data_dir / "read-models")
    assert files.load(CHANNEL, SMALL_INDEX) is not None and len(checked) == 1
    assert files.load(CHANNEL, SMALL_INDEX) is not None and len(checked) == 1  # as it was

    writer.engine.ingest(lines(31, 5))
    writer.store.timeline(CHANNEL)  # appended to
    assert files.load(CHANNEL, SMALL_INDEX) is not None and len(checked) == 2

    vectors = generation(writer) / "vectors"
    status = vectors.stat()
    data = bytearray(vectors.read_bytes())
    data[len(data) // 2] ^= 1
    vectors.write_bytes(bytes(data))  # a tool's edit of a file already checked...
    os.utime(vectors, ns=(status.st_atime_ns, status.st_mtime_ns))  # ...its time put back
    assert files.load(CHANNEL, SMALL_INDEX) is None  # found, the file shredded
    assert len(checked) == 3


def test_doctor_finds_a_vectors_byte_changed_in_place_that_a_start_no_longer_reads_for(
    make_runtime: Callable[..., Runtime],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A start believes the stamp of a vectors file it checked before and that has not changed
    since (device, inode, size, times); a byte that rots under the file system changes none of
    them. `awai doctor` reads every part whole, says so, and --repair removes the file for the
    next start to rebuild."""
    from bots.terminal.cli import main

    monkeypatch.setenv("COLUMNS", "220")
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 20))
    writer.store.timeline(CHANNEL)
    files = ReadModelFiles(writer.settings.data_dir / "read-models")
    assert files.load(CHANNEL, SMALL_INDEX) is not None  # checked whole, stamped
    vectors = generation(writer) / "vectors"
    stamp = vectors.with_name("vectors.checked")
    checked = json.loads(stamp.read_text())
    data = bytearray(vectors.read_bytes())
    data[len(data) // 2] ^= 1
    vectors.write_bytes(bytes(data))
    found = vectors.stat()  # rot changes no metadata: the stamp as it would still read
    checked[2:] = [found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns]
    stamp.write_text(json.dumps(checked))
    assert files.load(CHANNEL, SMALL_INDEX) is not None  # what a start cannot see
    data_dir = str(writer.settings.data_dir)

    assert main(["--data-dir", data_dir, "doctor"]) == 1
    said = " ".join(capsys.readouterr().out.split())
    assert "read-model file of" in said and "is damaged" in said and "--repair" in said

    assert main(["--data-dir", data_dir, "doctor", "--repair"]) == 0
    assert "Removed the damaged read-model file" in " ".join(capsys.readouterr().out.split())
    assert files.load(CHANNEL, SMALL_INDEX) is None  # gone: the next start rebuilds it
    assert main(["--data-dir", data_dir, "doctor"]) == 0


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.one_of(
            st.lists(st.text(max_size=6), max_size=3),
            st.text(max_size=12),
            st.integers(-(2**53), 2**53),
            st.booleans(),
        ),
        max_size=12,
    ),
    data=st.data(),
)
def test_packed_items_read_together_read_as_each_item_does(
    values: list, data: st.DataObject
) -> None:
    """A run of a packed column, or items picked from it, are decoded as one JSON list (commas
    put between the items): every item must come back as decoding it alone gives, whatever it
    holds (empty lists, brackets and commas inside strings, Japanese), and none as none."""
    encoded = [orjson.dumps(value) for value in values]
    packed = Packed(b"".join(encoded), np.cumsum([0, *map(len, encoded)], dtype=np.int64))
    first = data.draw(st.integers(0, len(values)))
    end = data.draw(st.integers(first, len(values)))
    assert packed[first:end] == [packed[index] for index in range(first, end)] == values[first:end]
    picked = data.draw(st.lists(st.integers(0, len(values) - 1), max_size=6)) if values else []
    assert packed.gather(np.array(picked, dtype=np.int64)) == [values[index] for index in picked]


def loaded_as_one_of(
    folders: list[Path], index: RecallIndexSettings
) -> Callable[[Path], int | None]:
    """A check of a folder a killed writer left: its file loads as none, or as the timeline one
    of ``folders``' files holds with as many messages (compared whole, its cells included); how
    many messages it holds."""
    expected = {
        len(snapshot.timeline.messages): snapshot.timeline
        for snapshot in (ReadModelFiles(folder).load(CHANNEL, index) for folder in folders)
        if snapshot is not None
    }
    assert len(expected) == len(folders)

    def held(target: Path) -> int | None:
        found = ReadModelFiles(target).load(CHANNEL, index)
        if found is None:
            return None
        assert_same_timeline(found.timeline, expected[len(found.timeline.messages)])
        assert_same_cells(found.timeline, expected[len(found.timeline.messages)])
        return len(found.timeline.messages)

    return held
