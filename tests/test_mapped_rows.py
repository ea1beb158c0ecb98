"""A loaded vectors file grows in memory after its rows without copying them (mapped_rows)."""

from __future__ import annotations

import gc
import os
import threading
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from awai_engine import mapped_rows
from awai_engine.mapped_rows import (
    file_backing,
    file_gone,
    grown,
    let_go,
    mapped,
    mapped_bytes,
    shred,
)
from awai_engine.recall_index import RecallIndexRules, RecallIndexSettings
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef, Thought


def _mapped(path: Path, rows: int) -> tuple[np.ndarray, np.ndarray]:
    written = np.random.default_rng(rows).standard_normal((rows, 384)).astype(np.float32)
    written.tofile(path)
    return written, np.memmap(path, dtype=np.float32, mode="r", shape=written.shape)


def test_grown_rows_keep_the_files_bits_and_the_appended_ones_after_the_file_is_unlinked(
    tmp_path: Path,
) -> None:
    """Another process may shred the channel's file, or write a newer generation, while this
    one still appends to what it loaded: the rows it mapped must stay what it read."""
    written, loaded = _mapped(tmp_path / "vectors", 1001)  # its last page is shared, not whole
    first = grown(loaded, 1001, 1100)
    first[1001:1050] = 7.0
    assert file_backing(first) is not None and file_backing(first[1:]) is None
    (tmp_path / "vectors").unlink()
    again = grown(first, 1050, 4000)  # mapped again from the file it holds open
    assert file_backing(again) is not None
    assert again[:1001].tobytes() == written.tobytes()
    assert (again[1001:1050] == 7.0).all()


def test_a_file_unlinked_before_its_first_growth_is_copied_and_nothing_is_left_open(
    tmp_path: Path,
) -> None:
    written, loaded = _mapped(tmp_path / "vectors", 300)
    held = grown(loaded, 300, 400)
    backing = file_backing(held)
    assert backing is not None and isinstance(backing[0], int)
    link = Path(f"/proc/self/fd/{backing[0]}")
    assert os.readlink(link) == str(tmp_path / "vectors")  # held open by the grown array
    (tmp_path / "other").write_bytes(b"")
    written_too, loaded_too = _mapped(tmp_path / "other", 20)
    (tmp_path / "other").unlink()
    copied = grown(loaded_too, 20, 40)
    assert file_backing(copied) is None and copied[:20].tobytes() == written_too.tobytes()
    assert held[:300].tobytes() == written.tobytes()
    del held, loaded, loaded_too, copied
    gc.collect()
    # Let go with the last array: the descriptor is closed (or reused for another file).
    assert not link.exists() or not os.readlink(link).startswith(str(tmp_path / "vectors"))


def _resident_kib(array: np.ndarray) -> int:
    """Resident KiB of the file mappings holding ``array``'s bytes (from /proc/self/smaps).

    Only mappings of a file (inode not 0): the rows appended after a file's are anonymous
    memory, and the kernel merges an anonymous mapping with an adjacent one of the same flags,
    so its Rss can hold a neighbour's memory too (seen once in a long-lived test worker: 3 MB).
    """
    start, stop = array.ctypes.data, array.ctypes.data + array.nbytes
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        head = fields[0]
        if "-" in head and not head.endswith(":"):
            low, high = (int(part, 16) for part in head.split("-"))
            inside = low < stop and high > start and fields[4] != "0"
        elif head == "Rss:" and inside:
            total += int(line.split()[1])
    return total


def test_letting_go_of_a_files_rows_unmaps_the_touched_pages_but_keeps_every_row(
    tmp_path: Path,
) -> None:
    """Gathering rows spread over the file maps nearly all of it (the kernel maps the pages
    around each one touched); letting go unmaps them and the rows still read the same, the
    ones appended after the file's included."""
    written, loaded = _mapped(tmp_path / "vectors", 10_001)  # 15 MB, its last page shared
    held = grown(loaded, 10_001, 10_500)
    held[10_001:10_200] = 3.0
    for array in (loaded[:9_000], held[:10_300]):  # as a timeline holds them: its rows so far
        spread = array[np.arange(0, 9_000, 40)].copy()  # one row in every 60 KiB
        assert _resident_kib(array) > 10_000  # most of the 15 MB mapped
        let_go(array)
        assert _resident_kib(array) <= 2 * 4  # the page the file shares with the appended rows
        assert array[np.arange(0, 9_000, 40)].tobytes() == spread.tobytes()
        assert array[:9_000].tobytes() == written[:9_000].tobytes()
    assert (held[10_001:10_200] == 3.0).all()
    copied = np.memmap(tmp_path / "vectors", dtype=np.float32, mode="c", shape=written.shape)
    copied[0] = 5.0  # a private copy's written page would be lost: it is not let go
    let_go(copied)
    assert (copied[0] == 5.0).all()
    let_go(np.zeros((4, 4), dtype=np.float32))  # not mapped from a file: nothing to do


def _bytes_of(descriptor: int) -> bytes:
    """The whole file behind ``descriptor`` (opened before any shred: it sees the inode even
    once unlinked, and holds no lock)."""
    return os.pread(descriptor, os.fstat(descriptor).st_size, 0)


def test_a_shred_leaves_a_mapped_file_as_it_was_and_its_last_holder_zeros_it(
    tmp_path: Path,
) -> None:
    """Another process's removal shreds the channel's file while this one reads it: zeroed
    under it, its rows read as zeros (and were written into its next file). The shred unlinks
    it alone; the rows stay; the last array over the file zeros it as it lets go."""
    path = tmp_path / "vectors"
    written = np.random.default_rng(7).standard_normal((1001, 384)).astype(np.float32)
    written.tofile(path)
    loaded = mapped(path, np.float32, written.shape)
    held = grown(loaded, 1001, 1200)
    spy = os.open(path, os.O_RDONLY)
    try:
        assert not file_gone(loaded) and not file_gone(held[:1001])
        shred(path)
        assert not path.exists()
        assert file_gone(loaded) and file_gone(held[:1001])
        assert loaded.tobytes() == held[:1001].tobytes() == written.tobytes()
        assert _bytes_of(spy) == written.tobytes()  # not zeroed while mapped
        del loaded
        gc.collect()
        assert _bytes_of(spy) == written.tobytes()  # the grown array still maps it
        assert held[:1001].tobytes() == written.tobytes()
        del held
        gc.collect()
        assert _bytes_of(spy) == bytes(written.nbytes)  # the last holder zeroed it
    finally:
        os.close(spy)


def test_a_shred_of_a_file_nobody_maps_zeros_it_before_it_is_unlinked(tmp_path: Path) -> None:
    """A texts file is never mapped: zeroed, synced, then unlinked, so a kill between the two
    leaves zeros, not the words."""
    path = tmp_path / "texts.bin"
    path.write_bytes(b"the zyxwvutq password is hunter2" * 1000)
    spy = os.open(path, os.O_RDONLY)
    try:
        shred(path)
        assert not path.exists() and _bytes_of(spy) == bytes(32_000)
    finally:
        os.close(spy)


def test_a_file_let_go_before_it_was_shredded_is_zeroed_by_the_shred(tmp_path: Path) -> None:
    """Mapped once, let go, then shredded: nobody holds it, so the shred itself zeros it."""
    path = tmp_path / "vectors"
    np.ones((64, 384), dtype=np.float32).tofile(path)
    loaded = mapped(path, np.float32, (64, 384))
    assert float(loaded.sum()) == 64 * 384
    del loaded
    gc.collect()
    spy = os.open(path, os.O_RDONLY)
    try:
        shred(path)
        assert _bytes_of(spy) == bytes(64 * 384 * 4)
    finally:
        os.close(spy)
    assert not file_gone(np.zeros((2, 2), dtype=np.float32))  # not mapped: never gone


def test_a_holder_letting_go_while_another_shreds_the_file_still_leaves_only_zeros(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found in review: a holder looked at the file (still linked) and only then took its lock,
    while a shred unlinked it and, finding it held, left it to the holder; the holder closed
    without zeroing, and the bytes stayed on disk with nobody holding them. The holder now takes
    the lock first: here it pauses right after, while the shred runs, and still zeros it."""
    path = tmp_path / "texts.bin"
    path.write_bytes(b"SECRET!!" * 4096)
    spy = os.open(path, os.O_RDONLY)
    looking, shredded = threading.Event(), threading.Event()

    class Paused(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            return getattr(os, name)

        def fstat(self, descriptor: int) -> os.stat_result:
            found = os.fstat(descriptor)
            if threading.current_thread().name == "holder":
                looking.set()
                shredded.wait(5)
            return found

    def holder() -> None:
        held = mapped_bytes(path, 8)
        del held
        gc.collect()  # lets go here

    monkeypatch.setattr(mapped_rows, "os", Paused("os"))
    thread = threading.Thread(target=holder, name="holder")
    thread.start()
    try:
        assert looking.wait(5)
        shred(path)
    finally:
        shredded.set()
        thread.join()
    try:
        assert not path.exists() and _bytes_of(spy) == bytes(32 * 1024)
    finally:
        os.close(spy)


def test_a_forked_child_letting_go_never_zeros_the_file_under_its_parent(tmp_path: Path) -> None:
    """A child shares its parent's locked descriptor, so its let-go could take the lock
    "exclusively" and zero a shredded file the parent still maps."""
    path = tmp_path / "vectors"
    np.arange(4096, dtype=np.float32).tofile(path)
    rows = mapped(path, np.float32, (1024, 4))
    shred(path)  # held: unlinked alone
    child = os.fork()
    if child == 0:  # pragma: no cover (the child's coverage is not collected)
        del rows
        gc.collect()
        os._exit(0)
    os.waitpid(child, 0)
    assert rows[1].tolist() == [4.0, 5.0, 6.0, 7.0]


def test_a_file_shredded_while_it_was_being_opened_is_not_mapped(tmp_path: Path) -> None:
    """The shared lock waited for a shred that zeroed the file: those zeros are no rows."""
    path = tmp_path / "vectors"
    np.ones((16, 4), dtype=np.float32).tofile(path)
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.unlink(path)
        with pytest.raises(FileNotFoundError):
            mapped_rows._share(descriptor)
    finally:
        os.close(descriptor)


def test_a_cell_level_fitted_over_a_loaded_channel_lets_go_of_the_file_pages_it_read(
    tmp_path: Path,
) -> None:
    """A level's fit reads every row so far; a channel loaded from its file, grown until a
    level is fitted, keeps none of the file's pages mapped in by it (an ingest of 30,000 lines
    kept 43 MiB of them), and still reads every row as it was."""
    index = RecallIndexSettings(
        rules=RecallIndexRules(exact_rows=16, cells=2, split=2, probes=2, occurrence_probes=1)
    )
    rng = np.random.default_rng(3)
    built = Timeline(dimension=384, index=index)

    def append(timeline: Timeline, count: int) -> None:
        for _ in range(count):
            position = len(timeline.messages)
            vector = rng.standard_normal((1, 384)).astype(np.float32)
            ref = MessageRef(
                message_id=f"m{position}",
                speaker_id="ann",
                speaker_name="Ann",
                ts=float(position),
                position=position,
            )
            timeline.append(
                ref, "t", "t", (Thought(index=0, text="t"),), vector / np.linalg.norm(vector)
            )

    append(built, 3_000)
    path = tmp_path / "vectors"
    built.vectors.tofile(path)
    file_rows = np.memmap(path, dtype=np.float32, mode="r", shape=built.vectors.shape)
    loaded = Timeline.restored(
        built.revision,
        index,
        built.messages.columns(),
        file_rows,
        built.row_positions,
        built.row_thought,
        built.cells,
        built.lexicon,
    )
    levels = len(loaded.cells.levels)
    while len(loaded.cells.levels) == levels:
        append(loaded, 1)
    assert _resident_kib(loaded.vectors[:3_000]) <= 2 * 4  # none but a page shared with appends
    assert loaded.vectors[:3_000].tobytes() == built.vectors[:3_000].tobytes()
