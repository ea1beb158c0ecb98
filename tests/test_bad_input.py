"""Bad input gets a clear message and loses nothing."""

from __future__ import annotations

import errno
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from sqlalchemy import event, text

from awai_engine import engine as engine_module
from awai_engine.embedding import Embedder
from awai_engine.engine import OutOfSpaceError, UnknownMessageError
from awai_engine.reconcile import DamagedVectorsError
from awai_engine.settings import EmbeddingSettings, Settings
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from bots.terminal.transcript import read_transcript
from storage.store import AwaiStore, StorageError
from storage.vectors import ChromaVectors, collection_name
from tests.factories import utterance

CHANNEL = "terminal:local:test"


def test_empty_and_whitespace_messages_are_refused_with_a_reason_and_the_rest_is_kept(
    runtime: Runtime,
) -> None:
    report = runtime.engine.ingest(
        [utterance("m1", ""), utterance("m2", "   \n\t "), utterance("m3", "Real words.")]
    )
    assert report.added == 1
    assert {p.message_id for p in report.problems} == {"m1", "m2"}
    assert all("no text" in p.reason for p in report.problems)
    assert runtime.engine.context(CHANNEL, "m3", EVERYTHING).thoughts[0].text == "Real words."


def test_a_hundred_thousand_characters_are_stored_whole_with_bounded_thoughts(
    runtime: Runtime,
) -> None:
    text = ("This sentence repeats to make a very long message. " * 2000)[:100_000]
    report = runtime.engine.ingest([utterance("m1", text)])
    assert report.added == 1
    assert any("sentences" in note for note in report.notes)
    context = runtime.engine.context(CHANNEL, "m1", EVERYTHING)
    assert context.text == text.strip()
    assert len(context.thoughts) == runtime.settings.limits.max_thoughts_per_message


@pytest.mark.slow
def test_a_message_over_the_length_limit_is_refused_with_the_setting_named(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(limits={"max_message_chars": 50})
    report = runtime.engine.ingest([utterance("m1", "x" * 51), utterance("m2", "fine")])
    assert report.added == 1
    assert "AWAI_LIMITS__MAX_MESSAGE_CHARS" in report.problems[0].reason


def test_control_and_binary_characters_are_dropped_and_the_words_kept(runtime: Runtime) -> None:
    runtime.engine.ingest([utterance("m1", "Hello\x00\x07 world\x1b. Second\ufffe line.")])
    context = runtime.engine.context(CHANNEL, "m1", EVERYTHING)
    assert [t.text for t in context.thoughts] == ["Hello world.", "Second line."]


def test_emoji_only_mentions_code_blocks_and_japanese_become_sensible_thoughts(
    runtime: Runtime,
) -> None:
    runtime.engine.ingest(
        [
            utterance("m1", "👍🎉"),
            utterance(
                "m2",
                "@Ben can you check this?\n```\nfor i in range(3):\n    print(i)\n```\nThanks.",
            ),
            utterance("m3", "今日はリリース日です。テストは全部通りました！問題はありますか？"),
            utterance("m4", "Plan:\n- migrate the database\n- update the docs"),
        ]
    )
    thoughts = {
        m: [t.text for t in runtime.engine.context(CHANNEL, m, EVERYTHING).thoughts]
        for m in ("m1", "m2", "m3", "m4")
    }
    assert thoughts["m1"] == ["👍🎉"]
    assert thoughts["m2"] == [
        "@Ben can you check this?",
        "```\nfor i in range(3):\n    print(i)\n```",
        "Thanks.",
    ]
    assert thoughts["m3"] == [
        "今日はリリース日です。",
        "テストは全部通りました！",
        "問題はありますか？",
    ]
    assert thoughts["m4"] == ["Plan:", "migrate the database", "update the docs"]


def test_reading_an_unknown_message_says_which_and_where(runtime: Runtime) -> None:
    runtime.engine.ingest([utterance("m1", "Hello.")])
    with pytest.raises(UnknownMessageError, match=r"'nope'.*terminal:local:test"):
        runtime.engine.context(CHANNEL, "nope", EVERYTHING)


def write_lines(path: Path, lines: list[str | bytes]) -> Path:
    with path.open("wb") as handle:
        for line in lines:
            handle.write(line if isinstance(line, bytes) else line.encode("utf-8"))
            handle.write(b"\n")
    return path


def test_malformed_lines_are_reported_with_their_line_numbers_and_the_rest_is_read(
    tmp_path: Path,
) -> None:
    path = write_lines(
        tmp_path / "chat.jsonl",
        [
            json.dumps({"id": "a", "speaker": "Ann", "text": "Hi."}),
            '{"id": "b", "speaker": "Bo", "text": ',
            b"\xff\xfe not utf-8",
            json.dumps({"id": "c", "speaker": "", "text": "no speaker"}),
            json.dumps({"id": "d", "speaker": "Cy", "text": "Bad time.", "ts": "yesterday"}),
            json.dumps(["not", "an", "object"]),
            json.dumps({"id": "a", "speaker": "Ann", "text": "Same id again."}),
            json.dumps({"id": 7, "speaker": "Dee", "text": "Numeric id.", "ts": 1700000000}),
        ],
    )
    transcript = read_transcript(path, "chat", 10**6)
    assert [u.message_id for u in transcript.utterances] == ["a", "7"]
    problems = {p.line: p.reason for p in transcript.problems}
    assert set(problems) == {2, 3, 4, 5, 6, 7}
    assert "not valid JSON" in problems[2]
    assert "UTF-8" in problems[3]
    assert "speaker" in problems[4]
    assert "yesterday" in problems[5] or "ts" in problems[5]
    assert "duplicate id 'a' (first on line 1)" in problems[7]


def test_timestamps_accept_iso_and_epoch_and_missing_ones_keep_file_order(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "chat.jsonl",
        [
            json.dumps(
                {"id": "a", "speaker": "Ann", "text": "One.", "ts": "2026-03-02T09:00:00+00:00"}
            ),
            json.dumps({"id": "b", "speaker": "Bo", "text": "Two."}),
            json.dumps({"id": "c", "speaker": "Cy", "text": "Three.", "ts": 1772442060}),
            json.dumps({"id": "d", "speaker": "Cy", "text": "Reply.", "thread": "c"}),
        ],
    )
    transcript = read_transcript(path, "chat", 10**6)
    assert [u.ts for u in transcript.utterances] == [
        1772442000.0,
        1772442000.0,
        1772442060.0,
        1772442060.0,
    ]
    assert transcript.utterances[3].thread_root == "c"
    assert transcript.channel == "terminal:local:chat"


def test_a_data_directory_that_cannot_be_written_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    settings = Settings(data_dir=blocker / "data", _env_file=None)  # type: ignore[call-arg]
    with pytest.raises(StorageError, match=r"cannot be created or written.*AWAI_DATA_DIR"):
        AwaiStore.open(settings)


class FailingOn(Embedder):
    """The real embedder, except that a call holding a text with ``marker`` fails, as a model
    can fail on one input (what fails is the whole call, as with the real library), in place or
    ahead (:meth:`Embedder.encode_ahead`)."""

    def __init__(self, marker: str) -> None:
        super().__init__(EmbeddingSettings(), cache_size=0)
        self._marker = marker

    def encode_uncached(self, texts: Sequence[str]) -> np.ndarray:
        if any(self._marker in text for text in texts):
            raise RuntimeError("the model failed on this input")
        return super().encode_uncached(texts)


@pytest.mark.parametrize("chunk", [1024, 3], ids=["one chunk", "in the next chunk"])
def test_a_message_that_fails_embedding_costs_only_itself_and_the_rest_of_the_batch_is_stored(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """With chunks of 3 the message is in the second chunk, first embedded (and failing) ahead,
    while the first chunk is stored."""
    monkeypatch.setattr(engine_module, "INGEST_CHUNK", chunk)
    runtime.engine.embedder = FailingOn("POISON")
    batch = [utterance(f"m{i}", f"Ordinary message {i}.") for i in range(1, 7)]
    batch.insert(3, utterance("m35", "This one is POISON for the model."))
    report = runtime.engine.ingest(batch)
    assert report.added == 6
    assert [(p.message_id, p.reason) for p in report.problems] == [
        ("m35", "could not be stored (RuntimeError: the model failed on this input)")
    ]
    timeline = runtime.store.timeline(CHANNEL)
    assert [m.message_id for m in timeline.messages] == [f"m{i}" for i in range(1, 7)]


def test_a_message_that_fails_storage_costs_only_itself(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    upsert = runtime.store.vectors.upsert

    def refusing(name: str, ids: Sequence[str], vectors: np.ndarray, metadatas: list) -> None:
        if any(vector.startswith("bad#") for vector in ids):
            raise ValueError("Chroma refused a record")
        upsert(name, ids, vectors, metadatas)

    monkeypatch.setattr(runtime.store.vectors, "upsert", refusing)
    report = runtime.engine.ingest(
        [utterance("m1", "First."), utterance("bad", "Second.", ts=2), utterance("m3", "Third.")]
    )
    assert report.added == 2
    assert [p.message_id for p in report.problems] == ["bad"]
    assert "Chroma refused a record" in report.problems[0].reason
    assert [m.message_id for m in runtime.store.timeline(CHANNEL).messages] == ["m1", "m3"]
    assert [u.message_id for u in runtime.store.utterances(CHANNEL)] == ["m1", "m3"]


def test_when_every_message_fails_the_store_is_at_fault_and_the_error_is_raised(
    runtime: Runtime,
) -> None:
    runtime.engine.embedder = FailingOn("")
    with pytest.raises(RuntimeError, match="the model failed"):
        runtime.engine.ingest([utterance("m1", "One."), utterance("m2", "Two.")])


@pytest.mark.slow
def test_surrogates_and_impossible_times_are_refused_for_every_adapter(runtime: Runtime) -> None:
    report = runtime.engine.ingest(
        [
            utterance("m1", "Fine."),
            utterance("m2", "Half an emoji \ud83d."),
            utterance("m3", "No time.", ts=float("nan")),
            utterance("m4", "Far future.", ts=1e18),
            utterance("m5", "Milliseconds.", ts=1772442000123),
            utterance("m6", "Fine too.", ts=7),
        ]
    )
    reasons = {p.message_id: p.reason for p in report.problems}
    assert report.added == 2 and set(reasons) == {"m2", "m3", "m4", "m5"}
    assert "lone surrogate \\ud83d at character 15" in reasons["m2"]
    assert "'ts' is nan, not a time" in reasons["m3"]
    assert "not a time between 1970-01-01 and 2100-01-01" in reasons["m4"]
    assert "looks like milliseconds" in reasons["m5"]


def _limit_sqlite_pages(runtime: Runtime, pages: int) -> None:
    """Make the SQLite file full at ``pages`` pages: SQLite's own SQLITE_FULL, no mount needed."""
    engine = runtime.store.db.engine
    engine.dispose()  # every later connection gets the limit
    event.listen(
        engine,
        "connect",
        lambda connection, _record: connection.execute(f"PRAGMA max_page_count = {pages}"),
    )


@pytest.mark.slow
def test_a_full_disk_stops_ingest_saying_so_and_keeps_what_was_stored(runtime: Runtime) -> None:
    first = [utterance(f"m{i}", f"Stored before the disk filled, number {i}.") for i in range(1, 6)]
    runtime.engine.ingest(first)
    before = list(runtime.store.utterances(CHANNEL))
    with runtime.store.db.read() as session:
        pages = session.execute(text("PRAGMA page_count")).scalar_one()
    _limit_sqlite_pages(runtime, pages)
    more = [utterance(f"n{i}", "Long words " * 400 + str(i), ts=100 + i) for i in range(40)]

    with pytest.raises(OutOfSpaceError, match=r"The disk is full \(No space left on device") as e:
        runtime.engine.ingest(more)

    assert "storing stopped after 0 new or edited message(s), which are kept" in str(e.value)
    assert "run the same command again" in str(e.value)
    assert list(runtime.store.utterances(CHANNEL)) == before
    assert [m.message_id for m in runtime.store.timeline(CHANNEL).messages] == [
        u.message_id for u in first
    ]


def test_chromas_disk_full_and_damaged_index_errors_are_raised_as_what_they_mean() -> None:
    from chromadb.errors import InternalError

    vectors = ChromaVectors(client=None)
    # The words Chroma 1.5 said when its folder's disk filled up (seen on a 3 MB tmpfs).
    said = "Query error: Database error: error returned from database: (code: 13) database or disk is full"
    with pytest.raises(OSError) as raised, vectors._calling("c-1", writing=True):
        raise InternalError(said)
    assert raised.value.errno == errno.ENOSPC
    with pytest.raises(InternalError), vectors._calling("c-1", writing=True):
        raise InternalError("some other failure")
    # What it said of index files a full disk had cut short (tests/test_damaged_vectors.py).
    for damaged in (
        "Error executing plan: Error sending backfill request to compactor: Error constructing"
        " hnsw segment reader: Error creating hnsw segment reader: Error deserializing pickle"
        " file: eval error at offset 100: EOF while parsing",
        "Error in compaction: Error constructing hnsw segment reader: Error creating hnsw"
        " segment reader: Error loading hnsw index",
        "Error executing plan: Internal error: Error getting embedding",
    ):
        with pytest.raises(DamagedVectorsError) as found, vectors._calling("c-1"):
            raise InternalError(damaged)
        assert found.value.collection == "c-1"
        assert "`awai doctor --repair` rebuilds it from the stored messages" in str(found.value)


# Chroma's rule for collection names (chromadb 1.5), as its own validation states it.
CHROMA_NAME = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9._-]{1,510})[a-zA-Z0-9]")
CHANNEL_KEYS = st.one_of(
    st.text(max_size=600),  # what a user types as --channel, lone surrogates included
    st.builds(
        lambda platform, a, b: f"{platform}:{a}:{b}",
        st.sampled_from(["terminal", "slack", "discord"]),
        st.text(st.characters(codec="utf-8"), max_size=40),
        st.text(st.characters(codec="utf-8"), max_size=120),
    ),
    st.from_regex(r"[.\-_:a-z]{0,80}", fullmatch=True),  # dots, dashes, colons only
)


@hypothesis_settings(max_examples=400, deadline=None)
@given(st.lists(CHANNEL_KEYS, min_size=1, max_size=4, unique=True))
@pytest.mark.slow
def test_every_channel_key_maps_to_a_distinct_valid_chroma_collection_name(keys: list[str]) -> None:
    names = [collection_name(key) for key in keys]
    for name in names:
        assert CHROMA_NAME.fullmatch(name) and ".." not in name, name
    assert len(set(names)) == len(names)
    assert names == [collection_name(key) for key in keys]  # deterministic


def test_collection_names_of_channels_stored_before_stay_the_same() -> None:
    """Stored channels keep their collection: names Chroma accepted before must not move."""
    assert collection_name("terminal:local:chat") == "awai-terminal-local-chat-d815bb1484686e28"
    assert collection_name("slack:T123:C456") == "awai-slack-T123-C456-cd3e6993db4357b0"
    assert collection_name("discord:111:222") == "awai-discord-111-222-b0e1b332b9c05d4f"
    assert (
        collection_name("terminal:local:ünï code") == "awai-terminal-local-n-code-6844745c3aa75ddb"
    )


def test_real_chroma_accepts_the_names_of_awkward_channel_keys(tmp_path: Path) -> None:
    vectors = ChromaVectors.embedded(tmp_path / "chroma")
    keys = ["terminal:local:a..b", "..", "", "-", "terminal:local:" + "x." * 300, "slack:T:\ud800"]
    for key in keys:
        vectors.create(collection_name(key), key.encode("utf-8", "replace").decode())
        assert vectors.count(collection_name(key)) == 0
