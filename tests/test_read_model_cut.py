"""A change other than an append keeps the read model before its first changed row.

The file is cut there (``ReadModelFiles.cut``: the kept messages' bytes copied into a new
generation, the old one shredded) and the rows from there on are appended again: the property
test checks the cut file, loaded, equals a timeline built from the kept messages alone, and with
the rest appended one built from all of them, for every cut. The store tests check that an edit
of a recent message reads only the rows from it on, that no byte of a removed or replaced text
stays in any read-model file, and that other processes read right after a cut.
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awai_engine import mapped_rows
from awai_engine.timeline import Timeline
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from storage import read_model, read_model_files
from storage.read_model_files import ReadModelFiles, Snapshot
from storage.read_model_keys import HeldRows, Kept, RowKeys
from tests.append_worker import append_rest
from tests.factories import utterance
from tests.test_crash_safety import Zygote
from tests.test_erasure import hits
from tests.test_read_model import assert_same_timeline
from tests.test_read_model_files import (
    CHANNEL,
    generation,
    lines,
    loaded_as_one_of,
    persisted_runtime,
    rebuilt,
)
from tests.test_recall_index import WORDS, small_index, timeline_state, unit_vectors
from tests.timeline_specs import (
    Spec,
    assert_same_searches,
    columns_of,
    first_row,
    message_specs,
)

SECRET = "zyxwvutq"


@pytest.fixture(autouse=True)
def every_part_mapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every part used as it is gets mapped, as a large channel's are (see the fixture of the
    same name in tests/test_read_model_files.py)."""
    monkeypatch.setattr(read_model_files, "MAPPED_FROM", 1)


def built(messages: list[Spec], vectors: np.ndarray, count: int) -> Timeline:
    """The timeline of the first ``count`` messages, built at once (as a rebuild builds it)."""
    rows = first_row(messages, count)
    return Timeline.built(7, small_index(), columns_of(messages, 0, count), vectors[:rows].copy())


def keys(count: int) -> RowKeys:
    """Row ids, edit times and fallbacks of the first ``count`` messages (as :func:`built`)."""
    return RowKeys.of([(10 + p, 1.5 * p if p % 4 == 1 else None, p % 5 == 0) for p in range(count)])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message_specs(min_size=2, max_size=40), st.data())
@pytest.mark.slow
def test_a_file_cut_anywhere_equals_the_kept_messages_built_and_appending_the_rest_all(
    messages: list[Spec], data: st.DataObject
) -> None:
    """A cut before or after a cell level was fitted (the small index fits one at 16, 32 and 64
    rows), inside a message's rows or between messages, with terms first met after it: the file
    cut there loads as the kept messages built alone (levels fitted after the cut dropped, the
    terms first met after it dropped, the word index numbering the rest as before), and
    appending the rest one by one gives the whole channel built at once."""
    count = len(messages)
    vectors = unit_vectors(sum(thoughts for thoughts, *_ in messages), seed=count)
    whole = built(messages, vectors, count)
    # Half the cuts where a level was fitted, or a row either side of it, when one falls there.
    first_rows = [message.first_row for message in whole.messages]
    fitted = {level.fitted_rows + shift for level in whole.cells.levels for shift in (-1, 0, 1)}
    near = [p for p in range(1, count) if first_rows[p] in fitted]
    anywhere = st.integers(1, count - 1)
    cut = data.draw(
        st.one_of(st.sampled_from(near), anywhere) if near else anywhere, label="messages kept"
    )
    with tempfile.TemporaryDirectory() as folder:
        files = ReadModelFiles(Path(folder))
        snapshot = Snapshot(whole, 10 + count - 1, "whole", 100, "source", keys=keys(count))
        assert files.save(CHANNEL, snapshot, lambda *_: True, None) is not None
        seen: list[HeldRows] = []

        def kept(held: HeldRows, source: str) -> Kept:
            seen.append(held)
            assert source == "source"
            return Kept(cut, 9, 10 + cut - 1, "kept")

        written = files.cut(CHANNEL, small_index(), kept)
        assert written is not None and written.messages == cut
        (held,) = seen
        assert held.message_ids == [f"m{p}" for p in range(count)]
        np.testing.assert_array_equal(held.keys.ids, keys(count).ids)
        np.testing.assert_array_equal(held.keys.edited, keys(count).edited)
        np.testing.assert_array_equal(held.keys.fallbacks, keys(count).fallbacks)

        loaded = files.load(CHANNEL, small_index())
        assert loaded is not None
        assert (loaded.last_id, loaded.fingerprint, loaded.timeline.revision) == (
            10 + cut - 1,
            "kept",
            9,
        )
        assert loaded.keys is not None and len(loaded.keys) == cut
        np.testing.assert_array_equal(loaded.keys.ids, keys(cut).ids)
        prefix = built(messages, vectors, cut)
        prefix.revision = 9
        assert timeline_state(loaded.timeline) == timeline_state(prefix)

        timeline = loaded.timeline
        append_rest(timeline, whole, cut)
        assert timeline_state(timeline) == timeline_state(whole)
        assert_same_searches(
            timeline, whole, ("disk failed again", f"w{cut} w{count - 1}", "再起動 ok"), (count,)
        )


@pytest.mark.slow
def test_a_cut_killed_at_any_step_leaves_the_file_as_it_was_or_cut_and_the_next_one_finishes_it(
    make_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    """SIGKILL after every step that changes the disk, of a cut of a file to its first 30 of 44
    messages (tests/append_worker.py): the file left loads whole or cut, never torn, never
    shredded; the next cut finishes it, and then no byte of the messages after the cut (a secret
    among them) is left in any file, not even a generation the killed one made or left."""
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest([*lines(1, 35), utterance("m36", f"the {SECRET} password"), *lines(37, 8)])
    writer.store.timeline(CHANNEL)
    folder = writer.settings.data_dir / "read-models"
    shutil.copytree(folder, tmp_path / "whole")
    index = writer.settings.recall_index

    def kept(held: HeldRows, source: str) -> Kept:
        return Kept(30, 5, int(held.keys.ids[29]), "cut")

    shutil.copytree(folder, tmp_path / "cut")
    assert ReadModelFiles(tmp_path / "cut").cut(CHANNEL, index, kept) is not None
    held = loaded_as_one_of([tmp_path / "whole", tmp_path / "cut"], index)
    zygote = Zygote(tmp_path / "worker.log", module="tests.append_worker")

    def job(target: Path, pause_at: int) -> list[str]:
        return zygote.killed_after(
            {
                "channel": CHANNEL,
                "index": index.rules.model_dump(),
                "target": str(target),
                "cut": 30,
                "revision": 5,
                "pause_at": pause_at,
            }
        )

    try:
        left: list[int | None] = []
        for step in itertools.count(1):
            target = tmp_path / f"target-{step}"
            shutil.copytree(tmp_path / "whole", target)
            said = job(target, step)
            if said[-2].split()[1] == "DONE":
                break
            assert said[-1].endswith(f" {-signal.SIGKILL}"), said
            left.append(held(target))
            assert job(target, 0)[-1].endswith(" 0")  # the next cut, to its end
            assert held(target) == 30
            assert hits(target, SECRET) == []
        assert set(left) == {44, 30}  # never torn, never shredded
        assert len(left) >= 20  # every step of the cut was a kill point
    finally:
        zygote.close()


def vector_reads(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The messages whose vectors the runtime's store reads from Chroma from now on."""
    read: set[str] = set()
    vectors_of = runtime.store.vectors.vectors_of

    def observed(name: str, ids: list[str]) -> dict[str, np.ndarray]:
        read.update(key.split("#")[0] for key in ids)
        return vectors_of(name, ids)

    monkeypatch.setattr(runtime.store.vectors, "vectors_of", observed)
    return read


def assert_rebuilt_alike(runtime: Runtime, timeline: Timeline) -> None:
    reference = rebuilt(runtime)
    try:
        assert_same_timeline(timeline, reference.timeline(CHANNEL))
    finally:
        reference.close()


def test_an_edit_of_a_recent_message_reads_again_only_the_rows_from_it_on(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The edit cuts the channel's file before the edited message; the next reading loads the
    36 messages before it and reads only the edited one and those after it (it read every row
    and every vector of the channel: 17.9 s at 100,000 messages)."""
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 40))
    writer.store.timeline(CHANNEL)  # the file holds all 40
    writer.engine.edit(utterance("m37", "the runner disk is fine, it was the cache"))
    read = vector_reads(writer, monkeypatch)
    timeline = writer.store.timeline(CHANNEL)
    assert read == {"m37", "m38", "m39", "m40"}
    assert timeline.messages.restored == 36  # loaded from the file cut before the edit
    assert timeline.messages[36].text == "the runner disk is fine, it was the cache"
    monkeypatch.undo()
    assert_rebuilt_alike(writer, timeline)
    assert writer.store.drop_outdated_timelines() == []  # the file is current: no churn


def test_an_edit_far_back_takes_the_rows_after_it_in_as_columns_and_loads_them_back_past_the_bar(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows from an edit far back on are many: they are taken in at once as columns
    (``Timeline.extend``), not appended one by one as values, and the timeline equals a
    rebuild. Held as columns, they still count as held in memory (their vectors are: only the
    kept messages' rows are mapped from the file), so past ``COMPACT_APPENDED`` of them the
    timeline is written out and loaded back, every row mapped."""
    monkeypatch.setattr(read_model, "EXTENDED_FROM", 10)
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 40))
    writer.store.timeline(CHANNEL)
    writer.engine.edit(utterance("m5", "the runner disk is fine, it was the cache"))
    read = vector_reads(writer, monkeypatch)
    timeline = writer.store.timeline(CHANNEL)
    assert read == {f"m{i}" for i in range(5, 41)}
    assert timeline.messages.restored == 40 and timeline.messages.built == 0
    backing = mapped_rows.file_backing(timeline.vectors)  # the four kept messages' rows only
    assert backing is not None and 4 <= backing[1] < timeline.rows
    assert timeline.messages[4].text == "the runner disk is fine, it was the cache"
    assert_rebuilt_alike(writer, timeline)

    monkeypatch.setattr(read_model, "COMPACT_APPENDED", 30)
    writer.engine.edit(utterance("m6", "and the cache is fine too"))
    compacted = writer.store.timeline(CHANNEL)
    assert isinstance(compacted.vectors, np.memmap)  # all 40 loaded back from the file
    assert compacted.messages.restored == 40 and compacted.messages.built == 0
    monkeypatch.undo()
    assert_rebuilt_alike(writer, compacted)


def test_a_message_earlier_than_the_newest_keeps_the_messages_before_it(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A late message (a backfill, an out-of-order event) moves the positions after it only."""
    writer = persisted_runtime(make_runtime)
    writer.engine.ingest(lines(1, 30))
    writer.engine.ingest(lines(32, 2))
    writer.store.timeline(CHANNEL)
    writer.engine.ingest(lines(31, 1))  # its time is before m32's
    read = vector_reads(writer, monkeypatch)
    timeline = writer.store.timeline(CHANNEL)
    assert read == {"m31", "m32", "m33"}
    assert [m.message_id for m in timeline.messages[29:]] == ["m30", "m31", "m32", "m33"]
    monkeypatch.undo()
    assert_rebuilt_alike(writer, timeline)


@pytest.mark.parametrize("change", ["delete", "edit", "forget"])
@pytest.mark.slow
def test_a_removal_or_an_edit_leaves_no_byte_of_the_old_words_in_any_read_model_file(
    change: str, make_runtime: Callable[..., Runtime]
) -> None:
    """The file is cut before the message, not shredded whole: the 30 messages before it are
    kept in a new generation, and the one cut from is shredded as any is. Another process that
    maps it keeps reading it unchanged until its next reading, which lets go of it; the last
    mapping to let go zeros it."""
    writer = persisted_runtime(make_runtime, "private")
    secret = utterance("m31", f"the {SECRET} password is hunter2", speaker="zed")
    writer.engine.ingest([*lines(1, 30), secret, *lines(32, 5)])
    writer.store.timeline(CHANNEL)
    holder = persisted_runtime(make_runtime, "private")
    loaded = holder.store.timeline(CHANNEL)
    assert isinstance(loaded.vectors, np.memmap)
    parts = generation(writer)
    spies = {name: os.open(parts / name, os.O_RDONLY) for name in ("vectors", "texts.bin")}
    try:
        if change == "delete":
            writer.engine.delete(CHANNEL, "m31")
        elif change == "edit":
            writer.engine.edit(utterance("m31", "nothing to see here", speaker="zed"))
        else:
            assert writer.store.delete_speaker(CHANNEL, "zed") == ["m31"]
        assert hits(writer.settings.data_dir / "read-models", SECRET) == []
        assert generation(writer) != parts
        assert (
            json.loads((generation(writer).parent / "current.json").read_text())["messages"] == 30
        )
        texts = os.fstat(spies["texts.bin"]).st_size
        assert SECRET.encode() in os.pread(spies["texts.bin"], texts, 0)  # not zeroed under it

        holder.engine.context(CHANNEL, "m20", EVERYTHING)
        assert loaded.retired and holder.store.timeline(CHANNEL) is not loaded
        del loaded
        gc.collect()
        for spy in spies.values():
            size = os.fstat(spy).st_size
            assert os.pread(spy, size, 0) == bytes(size)
    finally:
        for spy in spies.values():
            os.close(spy)
    for runtime in (writer, holder):
        assert_rebuilt_alike(runtime, runtime.store.timeline(CHANNEL))
    assert hits(writer.settings.data_dir / "read-models", SECRET) == []


def test_another_process_catches_up_past_a_cut_and_the_schedulers_check_then_settles(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader holding the file a delete elsewhere cut finds it replaced, loads the cut one and
    reads only the messages after the cut; neither process's check then finds anything
    outdated (a cut file says what it holds, so it is not taken for a change at every run)."""
    writer = persisted_runtime(make_runtime, "two")
    writer.engine.ingest(lines(1, 40))
    writer.store.timeline(CHANNEL)
    reader = persisted_runtime(make_runtime, "two")
    before = reader.store.timeline(CHANNEL)
    writer.engine.delete(CHANNEL, "m38")
    read = vector_reads(reader, monkeypatch)
    after = reader.store.timeline(CHANNEL)
    assert after is not before and before.retired
    assert read == {"m39", "m40"}
    monkeypatch.undo()
    assert_rebuilt_alike(reader, after)
    assert writer.store.drop_outdated_timelines() == []
    assert reader.store.drop_outdated_timelines() == []
    assert reader.store.timeline(CHANNEL) is after


@pytest.mark.parametrize("kernel_copy", ["refused", "absent"])
def test_a_cut_where_the_kernel_cannot_copy_writes_the_same_file(
    kernel_copy: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kept bytes are copied in the kernel where it can (``os.copy_file_range``); a file
    system that refuses it, or a system without it, gets them through a buffer, the same."""
    messages = [(1 + p % 3, [WORDS[p % len(WORDS)]], p % 4, p % 3) for p in range(30)]
    vectors = unit_vectors(sum(thoughts for thoughts, *_ in messages), seed=3)
    whole = built(messages, vectors, len(messages))

    def cut(folder: Path) -> dict[str, bytes]:
        files = ReadModelFiles(folder)
        snapshot = Snapshot(whole, 39, "whole", 100, "source", keys=keys(len(messages)))
        assert files.save(CHANNEL, snapshot, lambda *_: True, None) is not None
        assert files.cut(CHANNEL, small_index(), lambda *_: Kept(20, 9, 29, "kept")) is not None
        (pointer,) = folder.glob("*/current.json")
        parts = pointer.parent / json.loads(pointer.read_text())["generation"]
        return {path.name: path.read_bytes() for path in parts.iterdir()}

    expected = cut(tmp_path / "kernel")
    if kernel_copy == "refused":

        def refused(*args: object) -> int:
            raise OSError(18, "Invalid cross-device link")

        monkeypatch.setattr(os, "copy_file_range", refused)
    else:
        monkeypatch.delattr(os, "copy_file_range")
    assert cut(tmp_path / "buffered") == expected
