"""A process killed while Chroma wrote its own database is a crash to recover from, not damage.

Chroma keeps its catalogue and write log in ``chroma.sqlite3`` (SQLite, rollback journal). A
process killed inside one of its transactions leaves a hot journal beside the file; the next
connection that may write rolls it back, as SQLite is made to. AWAI checks the file before
Chroma opens it; a check that cannot roll the journal back ("attempt to write a readonly
database") took the folder for damaged and set every channel's vectors aside (seen in the
random-kill test, tests/test_crash_safety.py). The check now takes a pending journal for what
it is and leaves it to Chroma; it never rolls one back itself, since it may be Chroma's own
transaction in this process. Here the journal is left by a real SQLite writer killed
mid-transaction, in a subprocess.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bots.terminal.cli import main
from storage.embedded_checks import EmbeddedChecks
from tests.test_bad_input_cli import read_only

KILLED_MID_TRANSACTION = """
import os, sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA cache_size=5")  # the transaction spills pages into the file
connection.execute("BEGIN")
connection.execute("CREATE TABLE half_written (value BLOB)")
for _ in range(3000):
    connection.execute("INSERT INTO half_written VALUES (randomblob(1000))")
os._exit(9)
"""


def line(number: int) -> str:
    speaker = ("Ann", "Bo", "Cy")[number % 3]
    text = f"Note {number}: the staging disk {number} fills up again after the sync job."
    return json.dumps({"id": f"m{number}", "speaker": speaker, "text": text}) + "\n"


def vector_segments(chroma: Path) -> list[tuple[str, str]]:
    """Each collection's VECTOR segment id, as Chroma's catalogue names them."""
    with sqlite3.connect(chroma / "chroma.sqlite3") as connection:
        return sorted(
            connection.execute(
                "SELECT c.name, s.id FROM segments s JOIN collections c ON s.collection = c.id"
                " WHERE s.scope = 'VECTOR'"
            ).fetchall()
        )


def awai(data: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["--data-dir", str(data), *argv])
    captured = capsys.readouterr()
    return code, " ".join((captured.out + captured.err).split())


def test_a_write_journal_left_by_a_killed_process_is_rolled_back_and_no_vector_is_set_aside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    data, chat = tmp_path / "data", tmp_path / "chat.jsonl"
    chat.write_text("".join(line(n) for n in range(12)), encoding="utf-8")
    assert awai(data, capsys, "ingest", str(chat))[0] == 0
    chroma = data / "chroma"
    before = vector_segments(chroma)
    subprocess.run([sys.executable, "-c", KILLED_MID_TRANSACTION, str(chroma / "chroma.sqlite3")])
    journal = chroma / "chroma.sqlite3-journal"
    assert journal.is_file()
    with pytest.raises(sqlite3.OperationalError, match="readonly database"):  # a hot journal
        uri = f"{(chroma / 'chroma.sqlite3').as_uri()}?mode=ro"
        sqlite3.connect(uri, uri=True).execute("SELECT count(*) FROM segments").fetchone()
    with chat.open("a", encoding="utf-8") as handle:  # new lines: this start writes vectors
        handle.writelines(line(n) for n in range(12, 16))

    code, said = awai(data, capsys, "ingest", str(chat))

    assert code == 0, said
    assert not journal.exists()
    assert "damaged" not in said + caplog.text and "set aside" not in caplog.text
    assert vector_segments(chroma) == before  # the same index, not one rebuilt
    with sqlite3.connect(chroma / "chroma.sqlite3") as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    assert "half_written" not in tables  # the killed transaction was rolled back
    code, said = awai(data, capsys, "doctor")
    assert code == 0, said


def test_a_read_only_folder_with_a_cut_off_write_is_looked_at_whole_and_left_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, chat = tmp_path / "data", tmp_path / "chat.jsonl"
    chat.write_text("".join(line(n) for n in range(3)), encoding="utf-8")
    assert awai(data, capsys, "ingest", str(chat))[0] == 0
    chroma = data / "chroma"
    subprocess.run([sys.executable, "-c", KILLED_MID_TRANSACTION, str(chroma / "chroma.sqlite3")])
    before = (chroma / "chroma.sqlite3").read_bytes()

    with read_only(data) as folder:
        code, said = awai(folder, capsys, "doctor")

    assert code == 0, said
    assert "│ chat │ readable │ ok │" in said
    assert (chroma / "chroma.sqlite3-journal").is_file()  # the copy's journal was rolled back
    assert (chroma / "chroma.sqlite3").read_bytes() == before


def test_a_collection_checked_while_a_journal_waits_is_not_damaged_and_is_checked_again_later(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The journal may be Chroma's own transaction running in this process: the check reads
    around it, never rolls it back, and looks again at the collection's next use."""
    data, chat = tmp_path / "data", tmp_path / "chat.jsonl"
    chat.write_text("".join(line(n) for n in range(3)), encoding="utf-8")
    assert awai(data, capsys, "ingest", str(chat))[0] == 0
    chroma = data / "chroma"
    [(name, _)] = vector_segments(chroma)
    subprocess.run([sys.executable, "-c", KILLED_MID_TRANSACTION, str(chroma / "chroma.sqlite3")])
    before = (chroma / "chroma.sqlite3").read_bytes()
    checks = EmbeddedChecks(chroma, writable=True)

    checks.collection(name)  # no DamagedVectorsError

    assert (chroma / "chroma.sqlite3-journal").is_file()
    assert (chroma / "chroma.sqlite3").read_bytes() == before  # nothing rolled back by the check
    assert name not in checks._checked
    sqlite3.connect(chroma / "chroma.sqlite3").execute("SELECT 1 FROM segments").close()
    assert not (chroma / "chroma.sqlite3-journal").exists()  # a writer's open rolled it back
    checks.collection(name)
    assert name in checks._checked
