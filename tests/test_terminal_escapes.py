"""No escape or control character from chat reaches the terminal raw, through any command.

A chat participant chooses their name and their words, and whoever ingests a channel chooses its
name: each kind of control below is put into speaker names, message ids, texts and the channel
name, then every command that prints them runs, and its stdout and stderr hold none of them raw.
Each is shown as an escape instead (``\\x1b``), and a newline inside a name cannot start a line of
its own. Rich markup in a name prints literally.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from awai_engine.engine import IngestProblem, IngestReport
from awai_engine.reconcile import rebuilt_notice
from bots.terminal.cli import main
from bots.terminal.commands.common import report_problems
from bots.terminal.visible import one_line, terminal_json, visible
from tests import fake_anthropic

KINDS = {
    "csi-colour": "\x1b[31m",
    "osc-title": "\x1b]0;owned\x07",
    "c1-csi": "\x9b2J",
    "carriage-return": "\rFORGED",
    "backspace": "\x08\x08",
    "bidi-override": "\u202e",
    "newline": "\nFORGED",
}
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
CHANNEL = "room" + "".join(KINDS.values())
CHANNEL_KEY = f"terminal:local:{CHANNEL}"
TOPICS = (
    "the battery drains overnight since the update",
    "battery drain again after the overnight sync",
    "overnight battery drain is the top complaint",
)


def _transcript(path: Path) -> Path:
    lines = []
    ts = 1772442000
    for kind, control in KINDS.items():
        for number, topic in enumerate(TOPICS):
            words = topic.split()
            # inside the words keyphrases are made from; "FORGED" marks only names and ids, as
            # a message's own lines may start thoughts and table rows of their own
            words.insert(1 + number, control.replace("FORGED", ""))
            lines.append(
                {
                    "id": f"{kind}{control}{number}",
                    "speaker": f"Ann{control}{kind}",
                    "text": " ".join(words),
                    "ts": ts,
                }
            )
            ts += 60
    lines.append({"id": "markup", "speaker": "[red]Cy[/red]", "text": "[bold]hi[/bold]", "ts": ts})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder holding one channel with every kind in its name, speakers, ids and texts."""
    folder = tmp_path_factory.mktemp("escapes")
    transcript = _transcript(folder / "chat.jsonl")
    assert (
        main(["--data-dir", str(folder / "data"), "ingest", str(transcript), "--channel", CHANNEL])
        == 0
    )
    assert main(["--data-dir", str(folder / "data"), "recluster", CHANNEL]) == 0
    return folder


def _run(capsys: pytest.CaptureFixture[str], data: Path, *argv: str) -> tuple[int, str]:
    code = main(["--data-dir", str(data / "data"), *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _assert_shown_not_obeyed(said: str) -> None:
    assert "Traceback" not in said
    raw = sorted({f"U+{ord(found):04X}" for found in RAW.findall(said)})
    assert raw == [], f"raw control characters reached the terminal: {raw}"
    forged = [line for line in said.splitlines() if line.lstrip(" │┃║|").startswith("FORGED")]
    assert forged == [], "a newline or carriage return in a name started a line of its own"


COMMANDS = {
    "ingest": ("ingest", "{transcript}", "--channel", CHANNEL),
    "read": ("read", "{transcript}", "--channel", CHANNEL, "--message", "newline\nFORGED2"),
    "read-details": (
        "read",
        "{transcript}",
        "--channel",
        CHANNEL,
        "--message",
        "csi-colour\x1b[31m2",
        "--details",
    ),
    "read-json": (
        "read",
        "{transcript}",
        "--channel",
        CHANNEL,
        "--message",
        "osc-title2",
        "--json",
    ),
    "schemas": ("schemas", CHANNEL),
    "schemas-json": ("schemas", CHANNEL, "--json"),
    "recluster": ("recluster", CHANNEL, "--force"),
    "doctor": ("doctor",),
    "export": ("export", CHANNEL, "--out", "{folder}/out.jsonl"),
    "digest": ("digest", CHANNEL, "--out", "{folder}/digests", "--preview"),
    "unknown-speaker": ("schemas", CHANNEL, "--speaker", "nobody"),
    "unknown-channel": ("export", "nowhere", "--out", "{folder}/x.jsonl"),
    "unknown-message": ("read", "{transcript}", "--channel", CHANNEL, "--message", "m\x1b[2J"),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_no_control_character_from_chat_reaches_the_terminal_raw(
    data: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    capsys.readouterr()
    argv = [part.format(transcript=data / "chat.jsonl", folder=data) for part in COMMANDS[command]]
    code, said = _run(capsys, data, *argv)
    assert code in (0, 2), said
    _assert_shown_not_obeyed(said)
    if command.startswith("unknown"):
        assert code == 2
    if command == "unknown-speaker":  # the speakers it lists carry every kind, each escaped
        for control in KINDS.values():
            assert one_line(f"Ann{control}") in said
        assert "[red]Cy[/red]" in said


def test_a_reading_shows_each_control_as_its_escape(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = str(data / "chat.jsonl")
    code, said = _run(
        capsys, data, "read", transcript, "--channel", CHANNEL, "--message", "bidi-override\u202e2"
    )
    assert code == 0, said
    assert "Ann\\u202ebidi-override" in " ".join(said.split())


def test_json_output_keeps_every_value_and_escapes_what_a_terminal_would_obey(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    code, said = _run(capsys, data, "schemas", CHANNEL, "--json")
    assert code == 0, said
    names = {item["speaker_name"] for item in json.loads(said)}
    assert {f"Ann{control}{kind}" for kind, control in KINDS.items()} <= names


def test_forget_names_the_speaker_and_channel_escaped(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(data / "data", tmp_path / "data")
    capsys.readouterr()
    speaker = "Ann\nFORGEDnewline"
    code, said = _run(capsys, tmp_path, "forget", CHANNEL, "--speaker", speaker, "--yes")
    assert code == 0, said
    _assert_shown_not_obeyed(said)
    assert "forgot Ann\\nFORGEDnewline" in said


def test_log_lines_show_controls_as_escapes(data: Path) -> None:
    # Its own process: logging is set up once per process, and pytest's own handlers are set.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bots.terminal.cli",
            "-v",
            "--data-dir",
            str(data / "data"),
            "recluster",
            CHANNEL,
            "--force",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert f"INFO awai_engine.schemas.service: re-clustered {one_line(CHANNEL_KEY)}" in done.stderr
    _assert_shown_not_obeyed(done.stdout + done.stderr)


@pytest.mark.parametrize(
    ("category", "sample"),
    [
        ("C0 and DEL", [chr(code) for code in [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F]]),
        ("C1", [chr(code) for code in range(0x80, 0xA0)]),
        ("bidi", list("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")),
        ("line and paragraph separators", ["\u2028", "\u2029"]),
        ("lone surrogates", ["\ud83d", "\udc00"]),
    ],
)
def test_every_character_a_terminal_obeys_is_escaped(category: str, sample: list[str]) -> None:
    for character in sample:
        shown = visible(f"a{character}b")
        assert character not in shown and shown.startswith("a\\") and shown.endswith("b")
        assert json.loads(terminal_json({"k": character})) == {"k": character}
        assert character not in terminal_json({"k": character})


def test_text_keeps_its_lines_emoji_and_japanese_and_a_name_keeps_one_line() -> None:
    text = "一行目\n\tsecond line 👨‍👩‍👧 🏴󠁧󠁢󠁳󠁣󠁴󠁿 é"
    assert visible(text) == text
    assert one_line("Ann\nBo\tCy\rDee") == "Ann\\nBo\\tCy\\rDee"


def test_what_the_models_api_answers_is_shown_escaped_by_the_doctor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    catalogue = fake_anthropic.MODELS
    named = dataclasses.replace(catalogue["claude-sonnet-5-5"], display_name="Claude\x1b[2J\u202e")
    monkeypatch.setitem(catalogue, "claude-sonnet-5-5", named)
    with fake_anthropic.FakeAnthropic() as fake:
        monkeypatch.setenv("AWAI_LLM__API_KEY", fake_anthropic.API_KEY)
        monkeypatch.setenv("AWAI_LLM__BASE_URL", fake.base_url)
        code, said = _run(capsys, tmp_path, "doctor")
    assert code == 0, said
    _assert_shown_not_obeyed(said)
    assert "Claude\\x1b[2J\\u202e (claude-sonnet-5-5)" in said


def test_notes_and_refusals_built_from_a_channel_name_keep_to_one_line_each(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = IngestReport(
        problems=(IngestProblem(message_id="m1", reason=f"could not be stored ({CHANNEL_KEY})"),),
        notes=(rebuilt_notice(CHANNEL_KEY, 3),),
    )
    report_problems(report)
    said = capsys.readouterr().err
    _assert_shown_not_obeyed(said)
    assert len(said.splitlines()) == 2, said
    assert one_line(CHANNEL_KEY) in said
