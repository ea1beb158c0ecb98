"""Bad input gets a clear message and loses nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from awai_engine.engine import UnknownMessageError
from awai_engine.settings import Settings
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from bots.terminal.transcript import read_transcript
from storage.store import AwaiStore, StorageError
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
    with pytest.raises(StorageError, match=r"not writable.*AWAI_DATA_DIR"):
        AwaiStore.open(settings)
