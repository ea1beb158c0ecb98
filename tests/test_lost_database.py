"""The database is the truth: its loss is refused out loud, never answered with a new one.

A data folder whose ``awai.sqlite3`` is gone or empty while the vectors and read models derived
from it are still there would otherwise start afresh and re-ingest a transcript, bringing back
what was deleted or forgotten. Each test stores a channel through the terminal, loses the
database as an operator's mistake or a crash would, and runs the next command.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from bots.terminal.cli import main


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, Path]:
    """A data folder holding one channel, and its transcript."""
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text(
        "".join(
            json.dumps({"id": f"m{n}", "speaker": "Ann", "text": f"Note {n} on the plan."}) + "\n"
            for n in range(20)
        ),
        encoding="utf-8",
    )
    data = tmp_path / "data"
    assert main(["--data-dir", str(data), "read", str(transcript), "--message", "m5"]) == 0
    return data, transcript


def _deleted(database: Path) -> None:
    database.unlink()


def _emptied(database: Path) -> None:
    database.write_bytes(b"")


def _without_tables(database: Path) -> None:
    database.unlink()
    sqlite3.connect(database).close()


@pytest.mark.parametrize(
    "lose", [_deleted, _emptied, _without_tables], ids=["deleted", "zero bytes", "no tables"]
)
def test_a_lost_database_beside_derived_files_is_refused_and_not_made_anew(
    lose: Callable[[Path], None],
    stored: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    data, transcript = stored
    database = data / "awai.sqlite3"
    for suffix in ("-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    lose(database)
    size = database.stat().st_size if database.exists() else None
    capsys.readouterr()

    code = main(["--data-dir", str(data), "read", str(transcript), "--message", "m5"])

    said = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert "the database was lost" in said and "Traceback" not in said
    assert "import EXPORT.jsonl" in said and f"move {data} aside" in said
    assert (database.stat().st_size if database.exists() else None) == size  # nothing made


def test_a_damaged_database_file_is_refused_with_how_to_restore(
    stored: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, transcript = stored
    database = data / "awai.sqlite3"
    main(["--data-dir", str(data), "doctor"])  # leaves the write-ahead log checkpointed
    raw = database.read_bytes()
    database.write_bytes(raw[:100] + bytes(len(raw) - 100))  # every page but the header zeroed
    capsys.readouterr()

    code = main(["--data-dir", str(data), "read", str(transcript), "--message", "m5"])

    said = " ".join(capsys.readouterr().err.split())
    assert code == 2 and "Traceback" not in said
    assert "the file is damaged" in said and "Restore awai.sqlite3 from a backup" in said


def test_a_new_data_folder_is_still_created_as_before(tmp_path: Path) -> None:
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text(json.dumps({"id": "m1", "speaker": "Ann", "text": "Hi."}) + "\n")
    assert main(["--data-dir", str(tmp_path / "new"), "ingest", str(transcript)]) == 0
    assert (tmp_path / "new" / "awai.sqlite3").stat().st_size > 0
