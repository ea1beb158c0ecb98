"""`awai export` and `awai import`: backups and moves that lose nothing and change no byte."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from awai_engine.samples import SAMPLES
from awai_engine.values import Utterance
from bots.runtime import Runtime
from bots.terminal.cli import main
from bots.terminal.transcript import read_transcript
from tests.store_state import assert_same, stored_state

NAME = "launch"
CHANNEL = f"terminal:local:{NAME}"


def _message(message_id: str, text: str, ts: float, **fields: object) -> Utterance:
    values = {"speaker_id": "U024BE7LH", "speaker_name": "Ann Lee", "thread_root": None}
    values.update(fields)
    return Utterance(channel=CHANNEL, message_id=message_id, text=text, ts=ts, **values)  # type: ignore[arg-type]


def _channel_with_history(runtime: Runtime) -> None:
    """The sample, then what a live channel adds: edits, deletes, platform ids, odd text."""
    transcript = read_transcript(SAMPLES["en"].path, NAME, 10**9)
    runtime.engine.ingest(transcript.utterances)
    edited = transcript.utterances[2].model_copy(update={"text": "Battery drain: fixed in 2.3."})
    assert runtime.engine.edit(edited)
    runtime.engine.delete(CHANNEL, "m005")
    last = transcript.utterances[-1].ts
    runtime.engine.ingest(
        [
            # Slack-like: a platform speaker id, a microsecond timestamp, a thread reply.
            _message(
                "1712345678.123456", 'Kicking off the retro 🎉 "quotes" and \\ too', last + 0.1
            ),
            _message(
                "1712345679.000001",
                "返信です。\nリリースは来週？",
                last + 0.1,  # the same time as the one before: arrival order decides
                speaker_id="U0G9QF9C6",
                speaker_name="田中",
                thread_root="1712345678.123456",
            ),
        ]
    )


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


@pytest.mark.slow
def test_export_import_into_a_fresh_directory_and_export_again_gives_the_same_bytes(
    make_runtime: Callable[..., Runtime],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = make_runtime("source")
    _channel_with_history(source)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    fresh = str(tmp_path / "fresh")

    code, err = _run(
        capsys, "--data-dir", str(source.settings.data_dir), "export", NAME, "--out", str(first)
    )
    assert code == 0 and "56 messages" in err
    assert _run(capsys, "--data-dir", fresh, "import", str(first), "--channel", NAME)[0] == 0
    assert _run(capsys, "--data-dir", fresh, "export", NAME, "--out", str(second))[0] == 0

    assert first.read_bytes() == second.read_bytes()
    lines = [json.loads(line) for line in first.read_text(encoding="utf-8").splitlines()]
    by_id = {line["id"]: line for line in lines}
    assert "m005" not in by_id and by_id["m003"]["text"] == "Battery drain: fixed in 2.3."
    assert list(by_id["1712345679.000001"]) == [
        "id",
        "speaker",
        "speaker_id",
        "text",
        "ts",
        "thread",
    ]
    assert by_id["1712345679.000001"]["ts"] == by_id["1712345678.123456"]["ts"]
    assert [line["id"] for line in lines][-2:] == ["1712345678.123456", "1712345679.000001"]
    assert "田中" in first.read_text(encoding="utf-8")  # not \\u escapes

    imported = make_runtime("fresh")
    assert_same(
        stored_state(imported.store, imported.engine, CHANNEL)["readings"],
        stored_state(source.store, source.engine, CHANNEL)["readings"],
    )


def test_export_of_an_unknown_channel_names_the_known_ones(
    runtime: Runtime, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime.engine.ingest([_message("a1", "Hello there.", 1.0)])
    data_dir = str(runtime.settings.data_dir)
    out = tmp_path / "out.jsonl"
    code = main(["--data-dir", data_dir, "export", "nope", "--out", str(out)])
    assert code == 2 and f"(known: {NAME})" in capsys.readouterr().err and not out.exists()


def test_import_over_the_limits_refuses_loudly_and_stores_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "backup.jsonl"
    path.write_text(
        '{"id": "a", "speaker": "Ann", "text": "Short and fine.", "ts": 1.0}\n'
        f'{{"id": "b", "speaker": "Ann", "text": "{"x" * 80}", "ts": 2.0}}\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("AWAI_LIMITS__MAX_MESSAGE_CHARS", "60")
    code, err = _run(
        capsys, "--data-dir", str(tmp_path / "d"), "import", str(path), "--channel", "c"
    )
    assert code == 1 and "AWAI_LIMITS__MAX_MESSAGE_CHARS" in err and "1 added" in err

    monkeypatch.setenv("AWAI_LIMITS__MAX_TRANSCRIPT_BYTES", "100")
    code, err = _run(
        capsys, "--data-dir", str(tmp_path / "e"), "import", str(path), "--channel", "c"
    )
    assert code == 2 and "AWAI_LIMITS__MAX_TRANSCRIPT_BYTES" in err
