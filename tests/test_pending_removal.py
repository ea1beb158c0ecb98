"""A forget interrupted late is never reported as "ok": ``awai doctor`` counts it as a removal
unfinished (exit 1) until it is finished, and a command that only looks (``awai schemas``)
finishes it before showing anything, so nothing of the person is shown or left on disk. That
finish writes, so it takes the writer lock: it waits for a command writing the folder and is
refused beside a bot.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest

from bots.runtime import Runtime
from bots.terminal.cli import main
from bots.terminal.transcript import channel_name
from tests.test_erasure import CHANNEL, PERSISTED, SPEAKER, WORDS, filled, hits
from tests.test_writer_lock import held_by


@pytest.fixture
def interrupted(make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch) -> Runtime:
    """A forget whose messages went and whose scrub of the files never ran (killed late)."""
    runtime = make_runtime(**PERSISTED)
    filled(runtime)
    monkeypatch.setattr(runtime.store, "finish_erasures", lambda channels=None: 0)
    runtime.schemas.forget_speaker(CHANNEL, SPEAKER)
    runtime.close()
    assert hits(runtime.settings.data_dir, SPEAKER)  # Chroma's log still holds the id
    return runtime


def doctor_row(data_dir: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, str]]:
    """The doctor's exit code and the channel's row, cell by column heading."""
    code = main(["--data-dir", data_dir, "doctor"])
    out = capsys.readouterr().out
    [heading] = [line for line in out.split("\n") if line.startswith("┃ channel ")]
    [row] = [line for line in out.split("\n") if line.startswith(f"│ {channel_name(CHANNEL)} ")]
    cells = [cell.strip() for cell in row.strip("│").split("│")]
    return code, dict(
        zip((cell.strip() for cell in heading.strip("┃").split("┃")), cells, strict=True)
    )


def test_doctor_reports_an_unfinished_removal_until_it_is_finished(
    interrupted: Runtime, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    data_dir = str(interrupted.settings.data_dir)

    code, row = doctor_row(data_dir, capsys)

    assert code == 1 and row["state"] == "needs repair" and row["removals unfinished"] == "1"
    assert main(["--data-dir", data_dir, "doctor", "--repair"]) == 0
    assert f"Finished forgetting {SPEAKER}" in capsys.readouterr().out
    code, row = doctor_row(data_dir, capsys)
    assert code == 0 and row["state"] == "ok" and "removals unfinished" not in row  # none left
    assert hits(interrupted.settings.data_dir, WORDS, SPEAKER) == []


def test_a_command_that_only_looks_finishes_an_unfinished_removal_first(
    interrupted: Runtime, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = interrupted.settings.data_dir

    assert main(["--data-dir", str(data_dir), "schemas", CHANNEL, "--json"]) == 0

    assert SPEAKER not in capsys.readouterr().out
    assert hits(data_dir, WORDS, SPEAKER) == []


def test_finishing_a_removal_waits_for_the_command_writing_the_folder(
    interrupted: Runtime, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = interrupted.settings.data_dir

    with held_by(data_dir, "ingest", until_stopped=False, seconds=1.5):
        started = time.monotonic()
        code = main(["--data-dir", str(data_dir), "schemas", CHANNEL, "--json"])
    captured = capsys.readouterr()

    assert code == 0, captured.err
    assert time.monotonic() - started >= 1.5
    assert f"awai ingest (process {os.getpid()}, running since" in captured.err
    assert SPEAKER not in captured.out
    assert hits(data_dir, WORDS, SPEAKER) == []


def test_finishing_a_removal_is_refused_while_a_bot_runs_and_writes_nothing(
    interrupted: Runtime, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = interrupted.settings.data_dir
    chroma_before = sorted((p.name, p.stat().st_mtime_ns) for p in (data_dir / "chroma").rglob("*"))

    with held_by(data_dir, "slack", until_stopped=True):
        code = main(["--data-dir", str(data_dir), "schemas", CHANNEL, "--json"])
    said = capsys.readouterr()

    assert code == 2, said.err
    assert f"awai slack (process {os.getpid()}, running since" in said.err
    assert "Stop it" in said.err and "Traceback" not in said.err
    assert SPEAKER not in said.out
    assert sorted((p.name, p.stat().st_mtime_ns) for p in (data_dir / "chroma").rglob("*")) == (
        chroma_before
    )
    assert hits(data_dir, SPEAKER)  # still pending: finished by the next command that may write
