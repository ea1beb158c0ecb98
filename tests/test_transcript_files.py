"""`awai read FILE` of a file stored before: unchanged, it is not read again; grown by appending,
only its new lines are read; changed any other way, it is read whole. Whichever, the channel
holds exactly what one read of the whole file stores (`awai export` gives the same bytes)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_bad_input_cli import Awai

START = 1772442000


def line(n: int, speaker: str, text: str, ts: bool = True) -> dict[str, object]:
    record: dict[str, object] = {"id": f"m{n}", "speaker": speaker, "text": text}
    if ts:
        record["ts"] = START + 60 * n
    return record


FIRST = [
    line(1, "Ann", "The battery drains overnight since the update."),
    line(2, "Bo", "Ann: which phone model is it on?"),
    "not json",
    line(3, "Cy", "I see it on the Pixel too, maybe the sync job."),
]
APPENDED = [
    line(4, "Bo", "@Cy can you batch the sync job?", ts=False),  # keeps m3's time
    line(5, "Dee", "cy: I can review it tomorrow."),
    line(2, "Bo", "A repeated id keeps the first line."),
]


def write(path: Path, records: list[object], mode: str = "w") -> Path:
    with path.open(mode, encoding="utf-8") as handle:
        for record in records:
            handle.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
    return path


def exported(awai: Awai) -> list[dict[str, object]]:
    return [json.loads(text) for text in awai.export("chat").splitlines()]


@pytest.fixture
def awai(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Awai:
    return Awai(tmp_path / "data", capsys)


def test_an_unchanged_file_is_not_read_again_and_its_refused_lines_still_count(
    awai: Awai, tmp_path: Path
) -> None:
    path = write(tmp_path / "chat.jsonl", FIRST)
    code, said = awai("ingest", str(path))
    assert code == 1 and "line 3: not valid JSON" in said and "3 added" in said

    code, said = awai("read", str(path), "--message", "m2")

    assert code == 0
    assert f"{path} is unchanged since it was stored (4 lines, 1 refused then)" in said
    assert "line 3" not in said  # not parsed, so not told again
    assert "Ann" in said  # the reading itself
    code, said = awai("ingest", str(path))
    assert code == 1  # the file still holds a refused line


def test_appended_lines_are_read_alone_and_store_what_a_whole_read_stores(
    awai: Awai, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "chat.jsonl", FIRST)
    awai("ingest", str(path))
    write(path, APPENDED, mode="a")

    code, said = awai("ingest", str(path))

    assert code == 1
    assert "(4 lines stored before, not read again)" in said
    assert "line 7: duplicate id 'm2' (stored from an earlier line); this line is ignored" in said
    assert "2 added, 0 edited, 0 unchanged" in said
    whole = Awai(tmp_path / "whole", capsys)
    code, said = whole("ingest", str(path))
    assert "line 7: duplicate id 'm2' (first on line 2)" in said
    assert awai.export("chat") == whole.export("chat")
    by_id = {record["id"]: record for record in exported(awai)}
    assert by_id["m4"]["ts"] == by_id["m3"]["ts"]


def test_a_file_rewritten_in_place_is_read_whole_and_its_edit_stored(
    awai: Awai, tmp_path: Path
) -> None:
    path = write(tmp_path / "chat.jsonl", FIRST)
    awai("ingest", str(path))
    status = path.stat()
    edited = [*FIRST[:3], line(3, "Cy", "I see it on the Pixel too, surely the sync job.")]
    write(path, edited)
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))  # same size, same mtime

    code, said = awai("ingest", str(path))

    assert code == 1  # line 3 still refused: the whole file was read
    assert "line 3: not valid JSON" in said and "1 edited" in said
    assert "not read again" not in said
    texts = {record["id"]: record["text"] for record in exported(awai)}
    assert texts["m3"] == "I see it on the Pixel too, surely the sync job."


def test_a_touched_file_with_the_same_bytes_reads_no_line(awai: Awai, tmp_path: Path) -> None:
    path = write(tmp_path / "chat.jsonl", FIRST)
    awai("ingest", str(path))
    os.utime(path, ns=(1, 1))

    code, said = awai("ingest", str(path))

    assert code == 1  # line 3 was refused when it was stored
    assert "0 added, 0 edited, 0 unchanged" in said and "(4 lines stored before" in said
    code, said = awai("ingest", str(path))
    assert "is unchanged since it was stored" in said


def test_a_refused_message_is_tried_again_on_the_next_read(
    awai: Awai, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "chat.jsonl", [FIRST[0], line(9, "Bo", "x" * 80)])
    monkeypatch.setenv("AWAI_LIMITS__MAX_MESSAGE_CHARS", "60")
    code, said = awai("ingest", str(path))
    assert code == 1 and "1 added" in said
    monkeypatch.delenv("AWAI_LIMITS__MAX_MESSAGE_CHARS")

    code, said = awai("ingest", str(path))

    assert code == 0 and "1 added, 0 edited, 1 unchanged" in said


def test_a_file_stored_into_one_channel_is_read_whole_into_another(
    awai: Awai, tmp_path: Path
) -> None:
    path = write(tmp_path / "chat.jsonl", FIRST[:2])
    awai("ingest", str(path))
    code, said = awai("ingest", str(path), "--channel", "other")
    assert code == 0 and "2 added" in said  # a record is per channel


@pytest.mark.slow
def test_a_kill_while_appended_lines_are_stored_leaves_the_next_read_whole(
    awai: Awai, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SIGKILL after some appended messages were written: the record of the file was dropped
    before, so the next read reads it whole, tells nothing twice and stores what one whole read
    stores."""
    path = write(tmp_path / "chat.jsonl", FIRST)
    awai("ingest", str(path))
    many = [line(100 + n, f"p{n % 7}", f"Sync {n}, battery {n % 11}.") for n in range(1300)]
    write(path, many, mode="a")
    database = awai.data / "awai.sqlite3"
    command = Path(sys.executable).with_name("awai")
    worker = subprocess.Popen(
        [str(command), "--data-dir", str(awai.data), "ingest", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 240
        while worker.poll() is None and _stored(database) < 3 + 1024:
            assert time.monotonic() < deadline, "the ingest never got to its second chunk"
            time.sleep(0.05)
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    assert _stored(database) < 3 + len(many), "killed too late to test anything"

    code, said = awai("ingest", str(path))

    assert code == 1 and "line 3: not valid JSON" in said  # read whole: told again
    assert "duplicate" not in said and "not read again" not in said
    whole = Awai(tmp_path / "whole", capsys)
    whole("ingest", str(path))
    assert awai.export("chat") == whole.export("chat")


def _stored(database: Path) -> int:
    with contextlib.closing(sqlite3.connect(database, timeout=30)) as connection:
        return int(connection.execute("SELECT count(*) FROM utterances").fetchone()[0])
