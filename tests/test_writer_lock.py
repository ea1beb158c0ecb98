"""Every process that writes an embedded data folder takes its writer lock first: a command waits
for a command and names it; a bot holds the folder for as long as it runs, so a command that
writes (``doctor --repair``, ``db upgrade``, ``ingest``) or a second bot is refused at once with
the bot named and what to do, before it opens anything that could damage an index."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from awai_engine.settings import Settings
from bots.terminal.cli import main
from bots.terminal.writing import writer_lock

pytestmark = pytest.mark.slow  # each waits on a lock or loads the model

LINES = '{"id": "m1", "speaker": "Ann", "text": "The battery drains overnight.", "ts": 60}\n'


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no stray .env
    return tmp_path / "data"


@contextlib.contextmanager
def held_by(data: Path, command: str, until_stopped: bool, seconds: float = 60) -> Iterator[None]:
    """Another process's writer lock (a thread's own open of the lock file conflicts with every
    other open, as another process's does), released after ``seconds`` or at the end."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        settings = Settings(data_dir=data, _env_file=None)  # type: ignore[call-arg]
        with writer_lock(settings, command, until_stopped=until_stopped):
            held.set()
            release.wait(timeout=seconds)

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait(timeout=60)
    try:
        yield
    finally:
        release.set()
        thread.join()


def stored(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A channel stored in ``data`` (what was said doing it, read and dropped)."""
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text(LINES, encoding="utf-8")
    assert main(["--data-dir", str(data), "ingest", str(transcript), "--channel", "team"]) == 0
    capsys.readouterr()


def _refused_for_the_bot(code: int, said: str, data: Path, bot: str) -> None:
    assert code == 2, said
    assert f"awai {bot} (process {os.getpid()}, running since" in said
    assert f"writes into {data} for as long as it runs" in said
    assert "Stop it" in said and "Traceback" not in said


def test_a_command_waits_for_the_command_writing_and_says_which_it_is(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text(LINES, encoding="utf-8")
    with held_by(data, "ingest", until_stopped=False, seconds=1.5):
        started = time.monotonic()
        code = main(["--data-dir", str(data), "import", str(transcript), "--channel", "team"])
    said = capsys.readouterr().err
    assert code == 0, said
    assert time.monotonic() - started >= 1.5
    assert f"awai ingest (process {os.getpid()}, running since" in said
    assert f"is writing into {data}: waiting for it to finish" in said


def test_doctor_repair_is_refused_while_a_bot_runs_on_the_folder(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored(data, tmp_path, capsys)
    chroma_before = sorted((p.name, p.stat().st_mtime_ns) for p in (data / "chroma").rglob("*"))
    with held_by(data, "slack", until_stopped=True):
        code = main(["--data-dir", str(data), "doctor", "--repair"])
    _refused_for_the_bot(code, capsys.readouterr().err, data, "slack")
    assert sorted((p.name, p.stat().st_mtime_ns) for p in (data / "chroma").rglob("*")) == (
        chroma_before
    )


def test_doctor_without_repair_runs_beside_a_writer_and_names_it(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored(data, tmp_path, capsys)
    with held_by(data, "discord", until_stopped=True):
        code = main(["--data-dir", str(data), "doctor"])
    said = capsys.readouterr().out
    assert code == 0, said
    assert f"awai discord (process {os.getpid()}, running since" in said
    assert f"is writing into {data}" in said


def test_db_upgrade_waits_for_a_command_and_is_refused_while_a_bot_runs(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with held_by(data, "discord", until_stopped=True):
        code = main(["--data-dir", str(data), "db", "upgrade"])
    _refused_for_the_bot(code, capsys.readouterr().err, data, "discord")
    assert not (data / "awai.sqlite3").exists()

    with held_by(data, "recluster", until_stopped=False, seconds=1.0):
        code = main(["--data-dir", str(data), "db", "upgrade"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert f"awai recluster (process {os.getpid()}, running since" in captured.err
    assert "upgraded from empty" in captured.out


def test_db_current_only_looks_and_runs_beside_a_bot(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data-dir", str(data), "db", "upgrade"]) == 0
    with held_by(data, "slack", until_stopped=True):
        code = main(["--data-dir", str(data), "db", "current"])
    assert code == 0
    assert "up to date" in capsys.readouterr().out


def test_a_second_bot_on_the_folder_is_refused_before_it_opens_anything(
    data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the refused bot opened the data folder")

    monkeypatch.setattr("bots.terminal.commands.discord.open_runtime", never)
    monkeypatch.setattr("bots.terminal.commands.slack.open_runtime", never)
    monkeypatch.setenv("AWAI_DISCORD__TOKEN", "fake-token")
    monkeypatch.setenv("AWAI_SLACK__BOT_TOKEN", "xoxb-awai-test")
    monkeypatch.setenv("AWAI_SLACK__APP_TOKEN", "xapp-awai-test")
    with held_by(data, "slack", until_stopped=True):
        discord_code = main(["--data-dir", str(data), "discord"])
        discord_said = capsys.readouterr().err
        slack_code = main(["--data-dir", str(data), "slack"])
        slack_said = capsys.readouterr().err
    _refused_for_the_bot(discord_code, discord_said, data, "slack")
    _refused_for_the_bot(slack_code, slack_said, data, "slack")


def test_a_bot_waits_for_a_command_then_holds_the_folder_until_it_stops(
    data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bots.runtime import Runtime
    from bots.terminal.writing import writer

    settings = Settings(data_dir=data, _env_file=None)  # type: ignore[call-arg]
    seen: list[object] = []

    class Opened:
        def __enter__(self) -> Opened:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    async def serve(runtime: Runtime, token: str) -> None:
        seen.append(writer(settings))  # asked as another process would, while the bot runs

    monkeypatch.setattr("bots.terminal.commands.discord.open_runtime", lambda settings: Opened())
    monkeypatch.setattr("bots.discord.bot.serve", serve)
    monkeypatch.setenv("AWAI_DISCORD__TOKEN", "fake-token")
    with held_by(data, "forget", until_stopped=False, seconds=1.0):
        code = main(["--data-dir", str(data), "discord"])
    said = capsys.readouterr().err
    assert code == 0, said
    assert f"awai forget (process {os.getpid()}, running since" in said
    (during,) = seen
    assert during is not None and during.command == "awai discord" and during.until_stopped  # type: ignore[attr-defined]
    assert writer(settings) is None  # released when it stopped
