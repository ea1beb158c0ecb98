"""Forgetting and deleting leave no bytes: every file under the data folder is scanned for them.

The speaker's words and id are distinctive strings; after ``awai forget`` (or a delete and the
erasure that follows it) no file of the data folder (the AWAI SQLite database and its
write-ahead log, Chroma's SQLite and index folders, the persisted read models) holds either, in any of the encodings a
store could use. A forget interrupted at its worst point (the messages gone, the schemas left) is
finished by the next start, and forgetting the same person again completes too.
"""

from __future__ import annotations

import gc
import linecache
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from awai_engine.schemas import naming
from awai_engine.text_caches import forget_cached_texts, register_owner
from awai_engine.values import Utterance
from awai_engine.visibility import EVERYTHING, Scopes
from bots.runtime import Runtime, open_runtime
from bots.terminal.cli import main
from storage.locks import ChannelLocks
from storage.read_model import ReadModel

CHANNEL = "terminal:local:erasure"
# Every reading writes the channel's read model to disk, so the scans cover its files too.
PERSISTED = {"read_model": {"persist_every": 1}}
WORDS = "quixotrylbeam"
SPEAKER = "spk-zq9x7wv"
NAME = "Vellamo"


def conversation() -> list[Utterance]:
    lines = [
        (SPEAKER, NAME, f"The {WORDS} deploy keeps failing on the staging disk."),
        ("ann", "Ann", "Did anyone look at the staging disk yet?"),
        (SPEAKER, NAME, f"I think the {WORDS} job fills the staging disk with logs."),
        ("bo", "Bo", "We could rotate the logs every hour."),
        (SPEAKER, NAME, f"Rotating the {WORDS} logs hourly sounds right to me."),
        ("ann", "Ann", "Let's rotate them and watch the disk."),
        (SPEAKER, NAME, f"The {WORDS} deploy failed again on the full staging disk."),
        ("bo", "Bo", "Then the log rotation did not help."),
    ]
    return [
        Utterance(
            channel=CHANNEL,
            message_id=f"m{i}",
            speaker_id=speaker,
            speaker_name=name,
            text=text,
            ts=1_700_000_000 + 60 * i,
        )
        for i, (speaker, name, text) in enumerate(lines)
    ]


def hits(folder: Path, *needles: str) -> list[str]:
    """Files under ``folder`` holding any needle (UTF-8, UTF-16 or as hex text)."""
    patterns = [
        form
        for needle in needles
        for form in (
            needle.encode(),
            needle.encode("utf-16-le"),
            needle.encode().hex().encode(),
        )
    ]
    return sorted(
        f"{path.relative_to(folder)}: {pattern!r}"
        for path in folder.rglob("*")
        if path.is_file()
        for pattern in patterns
        if pattern in path.read_bytes()
    )


def held_in_memory(needle: str) -> list[str]:
    """What live Python objects of this process hold a string or bytes with ``needle`` in it
    (the constant itself aside): caches keyed by text, compiled patterns, stored rows. The source
    lines Python keeps of this test module for tracebacks hold the constant too: dropped first."""
    linecache.clearcache()
    gc.unfreeze()  # a runtime opened by open_runtime froze what it held: frozen, it is not listed
    gc.collect()
    found = []
    with warnings.catch_warnings():  # looking at torch's lazy module attributes warns
        warnings.simplefilter("ignore")
        for holder in gc.get_objects():
            for item in gc.get_referents(holder):
                if isinstance(item, str) and needle in item and item is not needle:
                    found.append(f"{type(holder).__name__}: {item[:60]}")
                elif isinstance(item, bytes) and needle.encode() in item:
                    found.append(f"{type(holder).__name__}: bytes")
    return found


def arrays_held_by(root: object, vector: np.ndarray) -> int:
    """How many arrays equal to ``vector`` are reachable from ``root`` (a runtime). Found by
    walking references, not by ``gc.get_objects()``: a dict of arrays and strings is not
    tracked by the collector, so it is in no list of live objects."""
    seen, found, stack = set(), 0, [root]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, (type, types.ModuleType, str, bytes)):
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            found += item.shape == vector.shape and bool(np.array_equal(item, vector))
            continue
        stack.extend(gc.get_referents(item))
    return found


def names_held_by(module: types.ModuleType, name: str) -> list[str]:
    """The strings holding ``name`` (any case) reachable from a module's own values, walked by
    references: tuples and sets of strings are not tracked by the collector, so
    :func:`held_in_memory` cannot see what they hold."""
    seen, found = set(), []
    stack: list[object] = list(vars(module).values())
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, (type, types.ModuleType, types.FunctionType)):
            continue
        seen.add(id(item))
        if isinstance(item, str):
            found += [item] if name.casefold() in item.casefold() else []
            continue
        stack.extend(gc.get_referents(item))
    return found


def filled(runtime: Runtime) -> None:
    runtime.engine.ingest(conversation())
    runtime.schemas.recluster(CHANNEL, force=True)
    runtime.schemas.digest(CHANNEL, EVERYTHING)  # a digest snapshot names the speaker too
    runtime.engine.read(CHANNEL, "m7", EVERYTHING)
    assert hits(runtime.settings.data_dir / "read-models", WORDS, SPEAKER)  # persisted
    # The speaker asked for a reading too: the once-a-minute claim names them.
    assert runtime.store.claims.claim(f"slack:reading:{CHANNEL}:m1:{SPEAKER}", 60)


def test_chroma_keeps_no_speaker_id_beside_the_vectors_only_what_deletes_filter_on(
    runtime: Runtime,
) -> None:
    """The speaker's id lives in SQL alone: Chroma's log and index hold a vector's message id and
    thought index (what its deletes filter on), so there is one copy fewer of who said it."""
    runtime.engine.ingest(conversation())
    with runtime.store.db.read() as session:
        channel = runtime.store.db.channel(session, CHANNEL)
        assert channel is not None
        name = channel.collection
    chroma: Any = runtime.store.vectors.client
    stored = chroma.get_collection(name).get(include=["metadatas"])
    assert stored["ids"]
    assert {tuple(sorted(m)) for m in stored["metadatas"]} == {("message_id", "thought")}
    assert hits(runtime.settings.data_dir / "chroma", SPEAKER) == []


@pytest.mark.slow
def test_awai_forget_leaves_none_of_the_speakers_words_or_id_in_any_file(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(**PERSISTED)
    data_dir = runtime.settings.data_dir
    filled(runtime)
    assert hits(data_dir, WORDS, SPEAKER)  # the scan finds them while they are stored
    runtime.close()

    assert main(["--data-dir", str(data_dir), "forget", CHANNEL, "--speaker", NAME, "--yes"]) == 0

    assert hits(data_dir, WORDS, SPEAKER) == []
    reopened = open_runtime(runtime.settings)
    try:  # the others' words are all still there and read as before
        assert [m.ref.speaker_id for m in reopened.store.timeline(CHANNEL).messages] == [
            "ann",
            "bo",
            "ann",
            "bo",
        ]
        assert reopened.engine.read(CHANNEL, "m7", EVERYTHING).context.flow.previous is not None
    finally:
        reopened.close()


@pytest.mark.slow
def test_a_forget_leaves_none_of_the_speakers_words_in_the_process_memory(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(**PERSISTED)
    filled(runtime)  # re-clustered, digested and read: every cache of words has been used
    assert held_in_memory(WORDS)

    assert names_held_by(naming, NAME)  # naming kept the channel's speakers, the name too

    runtime.schemas.forget_speaker(CHANNEL, SPEAKER)

    assert held_in_memory(WORDS) == []
    assert names_held_by(naming, NAME) == []
    assert runtime.engine.read(CHANNEL, "m7", EVERYTHING).context.flow.previous is not None


@pytest.mark.slow
def test_deleted_messages_leave_none_of_their_words_in_the_process_memory(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime()
    runtime.engine.ingest(conversation())
    runtime.schemas.recluster(CHANNEL, force=True)
    runtime.engine.read(CHANNEL, "m7", EVERYTHING)
    assert held_in_memory(WORDS)

    for message_id in ("m0", "m2", "m4", "m6"):
        runtime.engine.delete(CHANNEL, message_id)

    assert held_in_memory(WORDS) == []


@pytest.mark.slow
def test_what_another_process_deleted_leaves_this_ones_memory_at_its_next_check(
    make_runtime: Callable[..., Runtime],
) -> None:
    reader = make_runtime()  # two processes of one deployment, on the same data
    remover = make_runtime()
    remover.engine.ingest(conversation())
    reader.engine.read(CHANNEL, "m7", EVERYTHING)
    remover.engine.ingest([_said("m8", "Shall we try a bigger disk?")])
    assert reader.engine.drop_removed_elsewhere() == [], "rows appended are caught up, not dropped"
    assert CHANNEL in reader.store.read_model.cached_channels()

    for message_id in ("m0", "m2", "m4", "m6"):
        remover.engine.delete(CHANNEL, message_id)
    assert held_in_memory(WORDS), "the reader holds them until it checks"

    assert reader.engine.drop_removed_elsewhere() == [CHANNEL]
    assert held_in_memory(WORDS) == []
    assert reader.engine.drop_removed_elsewhere() == []
    previous = reader.engine.read(CHANNEL, "m7", EVERYTHING).context.flow.previous
    assert previous is not None and previous.message.message_id == "m5"


@pytest.mark.slow
def test_what_this_process_appended_and_another_deleted_leaves_its_memory_at_its_next_check(
    make_runtime: Callable[..., Runtime],
) -> None:
    """A process keeps the vectors of its own appends until its next catch-up; a row it
    appended and another process deleted meanwhile must not wait for that catch-up."""
    writer = make_runtime()
    remover = make_runtime()
    writer.engine.ingest(conversation())
    writer.engine.read(CHANNEL, "m7", EVERYTHING)  # held, so its next appends are kept
    writer.engine.ingest([_said("m8", f"The {WORDS} disk is full again.")])
    kept = writer.store.read_model._appended[CHANNEL].vectors  # what the check must let go
    appended = [vector.copy() for key, vector in kept.items() if key.startswith("m8")]
    assert appended and all(arrays_held_by(writer, vector) for vector in appended)

    remover.engine.delete(CHANNEL, "m8")
    assert writer.engine.drop_removed_elsewhere() == [], "no row its timeline holds changed"

    assert not any(arrays_held_by(writer, vector) for vector in appended)


@pytest.mark.slow
def test_a_process_with_its_own_data_folder_shreds_its_file_of_what_another_deleted(
    make_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    """With PostgreSQL and a Chroma server, each process may keep its read models in a data
    folder of its own, which a removal in another process cannot shred."""
    remover = make_runtime(**PERSISTED)
    remover.engine.ingest(conversation())
    elsewhere = tmp_path / "other-process" / "read-models"
    other = _read_model(remover, elsewhere)
    other.timeline(CHANNEL)  # read there, and written to its folder
    remover.engine.delete(CHANNEL, "m0")  # "The … deploy keeps failing on the staging disk."
    assert hits(elsewhere, "keeps failing"), "its file still holds the deleted message"

    restarted = _read_model(remover, elsewhere)  # nothing in memory yet, only the file
    assert restarted.drop_outdated() == [CHANNEL]
    assert hits(elsewhere, "keeps failing") == []
    assert restarted.drop_outdated() == []
    assert "m0" not in restarted.timeline(CHANNEL).position_of


class _CacheOwner:
    """Stands for a cache of message words (the embedder's, say): counts its clearings."""

    def __init__(self) -> None:
        self.cleared = 0

    def forget_cached_texts(self) -> None:
        self.cleared += 1


def test_a_removal_elsewhere_empties_the_caches_of_words_of_a_process_holding_no_read_model(
    make_runtime: Callable[..., Runtime],
) -> None:
    """A process that embedded or indexed a message holds its words in caches whether or not it
    still holds the channel's read model."""
    reader, remover = make_runtime(), make_runtime()
    remover.engine.ingest(conversation())
    cache = _CacheOwner()
    register_owner(cache)
    reader.engine.drop_removed_elsewhere()
    before = cache.cleared
    assert reader.engine.drop_removed_elsewhere() == [] and cache.cleared == before, (
        "nothing removed since: nothing cleared"
    )
    remover.engine.delete(CHANNEL, "m0")
    cleared_by_the_remover = cache.cleared
    assert reader.engine.drop_removed_elsewhere() == []  # it holds no read model of the channel
    assert cache.cleared == cleared_by_the_remover + 1


OTHER = "terminal:local:elsewhere"


def _readings_held(runtime: Runtime) -> list[str]:
    """The channels the views and the schema indexes hold a timeline for."""
    views = runtime.engine.views
    indexed = (channel for channel, _ in runtime.schemas._indexes)
    return sorted({*views._views, *views._scopes, *indexed})


@pytest.mark.slow
def test_what_was_made_from_a_read_model_goes_when_it_is_evicted(
    make_runtime: Callable[..., Runtime],
) -> None:
    """The views (a restricted one too) and the schema indexes hold the channel's timeline:
    evicted under ``read_model.max_mb``, it takes them along, and a removal elsewhere then
    leaves no word in this process (on main they kept it, and ``max_mb`` bounded nothing)."""
    reader, remover = make_runtime(), make_runtime()
    private = _said("m8", "Only the thread sees this.").model_copy(update={"scope": "thread-1"})
    remover.engine.ingest([*conversation(), private])
    remover.engine.ingest([_said("m1", "Elsewhere.").model_copy(update={"channel": OTHER})])
    reader.engine.read(CHANNEL, "m7", EVERYTHING)
    reader.engine.read(CHANNEL, "m7", Scopes.channel())  # a restricted view, and its index
    assert _readings_held(reader) == [CHANNEL]
    read_model = reader.store.read_model
    read_model.settings = read_model.settings.model_copy(update={"max_mb": 0})  # full

    reader.engine.read(OTHER, "m1", EVERYTHING)  # evicts the channel read least recently

    assert read_model.cached_channels() == [OTHER]
    assert _readings_held(reader) == [OTHER]
    for message_id in ("m0", "m2", "m4", "m6"):
        remover.engine.delete(CHANNEL, message_id)
    reader.engine.drop_removed_elsewhere()
    assert held_in_memory(WORDS) == []


@pytest.mark.slow
def test_the_removal_check_drops_views_and_indexes_whose_read_model_is_gone(
    make_runtime: Callable[..., Runtime],
) -> None:
    """Whatever holds a channel's words is checked, not only the read models: views and
    indexes left holding a timeline the read model no longer has (popped here behind its
    back) cannot be checked against the database, so they go (on main they stayed)."""
    reader, remover = make_runtime(), make_runtime()
    remover.engine.ingest(conversation())
    reader.engine.read(CHANNEL, "m7", EVERYTHING)
    read_model = reader.store.read_model
    with read_model._cache_guard:
        del read_model._cache[CHANNEL]
    assert _readings_held(reader) == [CHANNEL]
    assert reader.engine.drop_removed_elsewhere() == [CHANNEL], "held, and not checkable"
    assert _readings_held(reader) == []

    reader.engine.read(CHANNEL, "m7", EVERYTHING)
    with read_model._cache_guard:
        del read_model._cache[CHANNEL]
    for message_id in ("m0", "m2", "m4", "m6"):
        remover.engine.delete(CHANNEL, message_id)
    assert reader.engine.drop_removed_elsewhere() == [CHANNEL]
    assert held_in_memory(WORDS) == []


@pytest.mark.slow
def test_a_reading_in_flight_during_the_removal_check_keeps_nothing_it_dropped(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race, made deterministic: the reading gets the channel's timeline, then (before it
    makes its views and schema index) another process deletes and this one's check drops that
    timeline. The reading still answers, from what it had; then nothing of it is kept (on main
    it registered the dropped timeline again, for good)."""
    reader, remover = make_runtime(), make_runtime()
    remover.engine.ingest(conversation())
    reader.engine.read(CHANNEL, "m7", EVERYTHING)
    timeline = reader.store.timeline
    raced = []

    def removed_meanwhile(channel: str):  # type: ignore[no-untyped-def]
        got = timeline(channel)
        if not raced:
            raced.append(channel)
            for message_id in ("m0", "m2", "m4", "m6"):
                remover.engine.delete(CHANNEL, message_id)
            assert reader.engine.drop_removed_elsewhere() == [CHANNEL]
        return got

    monkeypatch.setattr(reader.store, "timeline", removed_meanwhile)
    assert reader.engine.read(CHANNEL, "m7", EVERYTHING).context.flow.previous is not None
    assert raced == [CHANNEL]
    monkeypatch.undo()

    forget_cached_texts()  # the words it looked up meanwhile (the text caches' own gap)
    assert held_in_memory(WORDS) == []
    assert reader.engine.drop_removed_elsewhere() == []
    previous = reader.engine.read(CHANNEL, "m7", EVERYTHING).context.flow.previous
    assert previous is not None and previous.message.message_id == "m5"


def _read_model(runtime: Runtime, folder: Path) -> ReadModel:
    """Another process's read models, on the same SQL and Chroma, persisted in ``folder``."""
    store, settings = runtime.store, runtime.settings
    return ReadModel(
        store.db, store.vectors, ChannelLocks(), settings.recall_index, settings.read_model, folder
    )


def _said(message_id: str, text: str) -> Utterance:
    return Utterance(
        channel=CHANNEL,
        message_id=message_id,
        speaker_id="ann",
        speaker_name="Ann",
        text=text,
        ts=1_700_000_000 + 60 * int(message_id[1:]),
    )


@pytest.mark.slow
def test_a_deleted_message_leaves_no_bytes_once_its_erasure_is_finished(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(**PERSISTED)
    runtime.engine.ingest(conversation())
    runtime.engine.read(CHANNEL, "m7", EVERYTHING)
    assert hits(runtime.settings.data_dir / "read-models", WORDS)  # persisted
    runtime.engine.delete(CHANNEL, "m0")  # the first mention of the words... and the others:
    for message_id in ("m2", "m4", "m6"):
        runtime.engine.delete(CHANNEL, message_id)
    assert [item.channel for item in runtime.store.pending_erasures()] == [CHANNEL]
    runtime.store.finish_erasures()
    assert runtime.store.pending_erasures() == []
    assert hits(runtime.settings.data_dir, WORDS) == []


@pytest.mark.slow
def test_a_forget_interrupted_after_the_messages_went_is_finished_by_the_next_start(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = make_runtime(**PERSISTED)
    data_dir = runtime.settings.data_dir
    filled(runtime)

    def crash(channel: str, speaker_id: str) -> None:
        raise KeyboardInterrupt("the process died here")

    # The worst point: the messages are gone, the schema summaries (their sentences) are not.
    monkeypatch.setattr(runtime.store.schemas, "forget_speaker", crash)
    with pytest.raises(KeyboardInterrupt):
        runtime.schemas.forget_speaker(CHANNEL, SPEAKER)
    monkeypatch.undo()
    runtime.close()
    assert hits(data_dir, WORDS)  # left behind by the crash

    # A second `awai forget` of the same person: the start finishes it, and it says so.
    assert main(["--data-dir", str(data_dir), "forget", CHANNEL, "--speaker", NAME, "--yes"]) == 0
    assert hits(data_dir, WORDS, SPEAKER) == []


@pytest.mark.slow
def test_doctor_repair_finishes_an_interrupted_forget(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = make_runtime(**PERSISTED)
    data_dir = runtime.settings.data_dir
    filled(runtime)
    monkeypatch.setattr(runtime.store, "finish_erasures", lambda channels=None: 0)
    runtime.schemas.forget_speaker(CHANNEL, SPEAKER)  # everything but the scrub
    runtime.close()
    assert hits(data_dir, SPEAKER)  # Chroma's log and SQLite's free pages still hold it

    assert main(["--data-dir", str(data_dir), "doctor", "--repair"]) == 0
    assert hits(data_dir, WORDS, SPEAKER) == []
