"""Transcript input without an end or with odd ends: a line over the limit is told and skipped
without being held, a pipe or device is refused before a byte is read, CR-only line ends read as
lines, an empty message id is refused; and the parser keeps what each line depends on as it goes."""

from __future__ import annotations

import io
import json
import os
import threading
import tracemalloc
from pathlib import Path

import pytest

from bots.terminal.cli import main
from bots.terminal.transcript import SpeakerIndex, addressees, read_transcript, stream_transcript
from bots.terminal.transcript_lines import read_lines

LINES = [
    {"id": "a1", "speaker": "Ann", "text": "The battery drains overnight.", "ts": 1772442000},
    {"id": "a2", "speaker": "Bo", "text": "Ann: since the update?", "ts": 1772442060},
    {"id": "a3", "speaker": "Ann", "text": "Yes, since Tuesday.", "ts": 1772442120},
]


def encoded(records: list[dict[str, object]], end: bytes) -> bytes:
    return b"".join(json.dumps(record).encode() + end for record in records)


def awai(capsys: pytest.CaptureFixture[str], data: Path, *argv: str) -> tuple[int, str]:
    code = main(["--data-dir", str(data), *argv])
    captured = capsys.readouterr()
    said = " ".join((captured.err + captured.out).split())
    assert "Traceback" not in said
    return code, said


@pytest.mark.parametrize("end", [b"\r", b"\r\n", b"\n"], ids=["cr", "crlf", "lf"])
def test_every_kind_of_line_end_reads_the_same_messages(tmp_path: Path, end: bytes) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_bytes(encoded(LINES, end))

    transcript = read_transcript(path, "c", 10**6)

    assert [u.message_id for u in transcript.utterances] == ["a1", "a2", "a3"]
    assert transcript.utterances[1].addressees == ("Ann",)
    assert transcript.problems == []


def test_a_crlf_split_between_two_reads_is_one_line_end() -> None:
    data = b"x" * (65536 - 1) + b"\r\n" + b"y\r\n"
    lines = list(read_lines(io.BytesIO(data), 10**6))
    assert [(line.number, line.length) for line in lines] == [(1, 65535), (2, 1)]
    assert lines[-1].end == len(data)


def test_a_line_over_the_limit_is_told_by_number_and_the_lines_around_it_are_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWAI_LIMITS__MAX_LINE_BYTES", "4096")
    huge = {"id": "huge", "speaker": "Bo", "text": "words " * 20_000, "ts": 1772442090}
    path = tmp_path / "chat.jsonl"
    path.write_bytes(encoded([LINES[0], LINES[1], huge, LINES[2]], b"\n"))

    code, said = awai(capsys, tmp_path / "data", "ingest", str(path))

    assert code == 1
    size = len(json.dumps(huge))
    assert f"{path}: line 3: {size:,} bytes long; a line may have at most 4,096" in said
    assert "AWAI_LIMITS__MAX_LINE_BYTES" in said and "3 added" in said


def test_a_line_without_an_end_is_never_held_whole() -> None:
    """A file of 64 MiB with no line end (what /dev/zero is, bounded) costs the limit, not its
    size."""

    class Endless(io.RawIOBase):
        left = 64 << 20

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
            size = min(len(buffer), self.left)
            buffer[:size] = b"\0" * size
            self.left -= size
            return size

    tracemalloc.start()
    lines = list(read_lines(io.BufferedReader(Endless()), 1 << 20))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    assert [(line.data, line.length) for line in lines] == [(None, 64 << 20)]
    assert peak < 8 << 20


@pytest.mark.parametrize("command", ["ingest", "import", "read"])
def test_a_fifo_is_refused_at_once_without_waiting_for_a_writer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    fifo = tmp_path / "chat.jsonl"
    os.mkfifo(fifo)
    extra = ["--message", "a1"] if command == "read" else ["--channel", "c"]
    result: list[tuple[int, str]] = []
    worker = threading.Thread(
        target=lambda: result.append(awai(capsys, tmp_path / "data", command, str(fifo), *extra)),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=60)

    assert result, "the command waited for a writer to the FIFO"
    code, said = result[0]
    assert code == 2
    assert f"{fifo} is a pipe (FIFO), not a regular file" in said


def test_a_character_device_is_refused_before_a_byte_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = awai(capsys, tmp_path / "data", "ingest", "/dev/zero", "--channel", "c")
    assert code == 2
    assert "/dev/zero is a character device, not a regular file" in said


@pytest.mark.parametrize("given", ["", "   "], ids=["empty", "blank"])
@pytest.mark.parametrize("command", ["read", "demo", "schemas"])
def test_an_empty_message_id_is_refused_not_read_as_every_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: str, command: str
) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_bytes(encoded(LINES, b"\n"))
    argv = {
        "read": ["read", str(path), "--message", given],
        "demo": ["demo", "--message", given],
        "schemas": ["schemas", "chat", "--as-of", given],
    }[command]

    with pytest.raises(SystemExit) as stopped:
        main(["--data-dir", str(tmp_path / "data"), *argv])

    said = " ".join(capsys.readouterr().err.split())
    assert stopped.value.code == 2
    option = "--as-of" if command == "schemas" else "--message"
    assert f"argument {option}: the message id is empty" in said
    assert not (tmp_path / "data").exists()


def test_an_empty_speaker_is_refused_not_read_as_every_speaker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--data-dir", str(tmp_path / "data"), "schemas", "chat", "--speaker", " "])

    assert stopped.value.code == 2
    assert "argument --speaker: the speaker is empty" in capsys.readouterr().err


def test_an_address_finds_its_speaker_among_thousands_by_exact_case_first() -> None:
    index = SpeakerIndex(f"user{n}" for n in range(5000))
    index.add("Ann")
    index.add("ANN")  # differs only in case: found when written so, else the first seen is

    assert addressees("ann: and @user4999, @nobody", index) == ("Ann", "user4999")
    assert addressees("@ANN yes", index) == ("ANN",)
    assert addressees("田中さん、どう？", {"田中"}) == ("田中",)


def test_a_transcript_streamed_gives_its_messages_as_taken_and_what_a_whole_read_gives(
    tmp_path: Path,
) -> None:
    """An ingest takes a file's messages as they are parsed, never the file parsed whole: the
    first comes before the later lines are read, a bad line is told once reached, and read
    through it is what a whole read gives (messages, problems, what describes the file)."""
    path = tmp_path / "chat.jsonl"
    records = [*LINES, {"id": "a2", "speaker": "Bo", "text": "again", "ts": 1772442200}]
    path.write_bytes(encoded(records[:1], b"\n") + b"{not json\n" + encoded(records[1:], b"\n"))

    transcript, utterances = stream_transcript(path, "c", 10**6)
    first = next(utterances)
    assert first.message_id == "a1"
    assert transcript.problems == [] and transcript.source is None  # line 2 not read yet
    rest = list(utterances)

    whole = read_transcript(path, "c", 10**6)
    assert [first, *rest] == whole.utterances
    assert [u.message_id for u in whole.utterances] == ["a1", "a2", "a3"]
    assert transcript.problems == whole.problems and len(whole.problems) == 2  # JSON, duplicate
    assert (transcript.source, transcript.lines, transcript.last_ts) == (
        whole.source,
        whole.lines,
        whole.last_ts,
    )
    assert transcript.utterances == []  # nothing held: the caller took them
