"""The terminal adapter end to end: `awai demo`, `awai ingest`, `awai read` (text and JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from awai_engine.samples import SAMPLES
from bots.terminal.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.slow
def test_demo_prints_an_offline_reading_of_the_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--data-dir", str(tmp_path), "demo")
    assert code == 0
    assert "m048" in out and "Offline reading" in out
    assert "m003" in out  # the battery drain raised 45 messages earlier is recalled


@pytest.mark.slow
def test_a_reading_in_a_narrow_terminal_folds_its_lines_and_loses_no_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = run(capsys, "--data-dir", str(tmp_path), "demo")
    assert code == 0
    panel = [line for line in out.splitlines() if line.startswith(("│", "╭", "╰"))]
    assert panel and all(len(line) <= 60 for line in panel)
    shown = " ".join(line.strip("│╭╮╰╯─ ") for line in panel)
    sample = SAMPLES["en"]
    featured = next(
        json.loads(line)
        for line in sample.path.read_text(encoding="utf-8").splitlines()
        if json.loads(line).get("id") == sample.featured_message
    )
    for word in featured["text"].split():
        assert word in shown, word
    assert "interpretation." in shown  # the footer's last word, not cut at the border


@pytest.mark.slow
def test_read_json_names_every_part_of_the_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = SAMPLES["en"]
    code, out, _ = run(
        capsys, "--data-dir", str(tmp_path), "read", str(sample.path), "--message", "m016", "--json"
    )
    assert code == 0
    reading = json.loads(out)
    context = reading["context"]
    assert reading["offline"] is True and reading["interpretation"] is None
    assert context["message"]["message_id"] == "m016"
    assert context["thoughts"] and context["co_thoughts"]
    assert context["flow"]["line"] == "thread"
    assert context["flow"]["previous"]["message"]["message_id"] == "m015"
    assert all({"message", "summary"} <= set(item) for item in context["flow"]["earlier"])
    for item in context["associations"]:
        assert {"source", "thought", "distance", "similarity", "threshold", "activation"} <= set(
            item
        )
        assert item["source"]["speaker_name"]


@pytest.mark.slow
def test_read_all_prints_one_json_reading_per_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = SAMPLES["en"]
    code, out, _ = run(
        capsys, "--data-dir", str(tmp_path), "read", str(sample.path), "--all", "--json"
    )
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    expected = sum(
        1 for line in sample.path.read_text(encoding="utf-8").splitlines() if line.strip()
    )
    assert len(lines) == expected
    assert [r["context"]["message"]["position"] for r in lines] == list(range(expected))


@pytest.mark.slow
def test_read_all_without_json_shows_every_reading_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "chat.jsonl"
    said = ["Is the nightly build green?", "No, the importer test fails.", "I'll look at it."]
    path.write_text(
        "".join(
            json.dumps({"id": f"m{n}", "speaker": who, "text": text}) + "\n"
            for n, (who, text) in enumerate(zip(["Ann", "Bo", "Ann"], said, strict=True))
        ),
        encoding="utf-8",
    )
    code, out, _ = run(capsys, "--data-dir", str(tmp_path / "d"), "read", str(path), "--all")
    assert code == 0
    titles = [line for line in out.splitlines() if "Reading:" in line]
    assert [title.split("Reading: ")[1].split(" ·")[0] for title in titles] == ["Ann", "Bo", "Ann"]
    assert [out.index(text) for text in said] == sorted(out.index(text) for text in said)


def test_ingest_reports_malformed_lines_and_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text('{"id": "a", "speaker": "Ann", "text": "Hi."}\nnot json\n', encoding="utf-8")
    code, _, err = run(
        capsys, "--data-dir", str(tmp_path / "d"), "ingest", str(path), "--channel", "c"
    )
    said = " ".join(err.split())  # the console wraps long lines
    assert code == 1
    assert "line 2: not valid JSON" in said
    assert "1 added" in said


@pytest.mark.slow
def test_reading_an_unknown_message_is_one_clear_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = SAMPLES["en"]
    code, _, err = run(
        capsys, "--data-dir", str(tmp_path), "read", str(sample.path), "--message", "m999"
    )
    assert code == 2
    assert "m999" in err and "Traceback" not in err


def test_a_missing_transcript_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "--data-dir", str(tmp_path), "ingest", str(tmp_path / "none.jsonl"))
    assert code == 2 and "Cannot read" in err


def test_every_expected_error_reaches_the_cli_through_the_one_base() -> None:
    """The CLI catches :class:`AwaiError` only; each expected error must derive from it (and
    keep the built-in base code elsewhere catches), or it would print a traceback."""
    from awai_engine.backends.anthropic.client import LanguageModelError
    from awai_engine.embedding_backends import EmbeddingModelError
    from awai_engine.engine import UnknownMessageError
    from awai_engine.errors import AwaiError
    from awai_engine.schemas.service import UnknownChannelError
    from awai_engine.settings import SettingsError
    from bots.terminal.transcript import TranscriptError
    from storage.sql import DatabaseBusyError
    from storage.store import EmbeddingMismatchError, StorageError

    expected = {
        SettingsError: Exception,
        StorageError: RuntimeError,
        EmbeddingMismatchError: RuntimeError,
        DatabaseBusyError: RuntimeError,
        EmbeddingModelError: RuntimeError,
        LanguageModelError: RuntimeError,
        TranscriptError: ValueError,
        UnknownMessageError: LookupError,
        UnknownChannelError: LookupError,
    }
    for error, builtin in expected.items():
        assert issubclass(error, AwaiError) and issubclass(error, builtin), error.__name__


def test_an_invalid_setting_stops_the_cli_with_one_line_naming_the_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWAI_FLOW__CAPACITY", "99")
    code, _, err = run(capsys, "--data-dir", str(tmp_path), "demo")
    assert code == 2
    assert "AWAI_FLOW__CAPACITY" in err and "Traceback" not in err


def test_chroma_scrub_removes_the_index_folders_of_dropped_collections_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What an operator runs on a Chroma server's folder: Chroma deletes a dropped collection's
    rows but leaves its index folder (its vectors) on disk; the kept collection still reads."""
    import chromadb

    folder = tmp_path / "chroma"
    client = chromadb.PersistentClient(path=str(folder))
    for name in ("kept", "dropped"):
        client.create_collection(name).add(
            ids=[f"{name}{i}" for i in range(3)],
            embeddings=[[float(i), 1.0, 0.5] for i in range(3)],
        )
    del client  # as a server would, the folder stays
    client = chromadb.PersistentClient(path=str(folder))
    client.delete_collection("dropped")
    before = {path.name for path in folder.iterdir() if path.is_dir()}

    code, out, _ = run(capsys, "chroma-scrub", str(folder))
    after = {path.name for path in folder.iterdir() if path.is_dir()}
    assert code == 0 and len(before - after) == 1 and "removed 1 index folder" in out
    assert client.get_collection("kept").count() == 3

    code, out, err = run(capsys, "chroma-scrub", str(tmp_path))
    assert code == 2 and f"{tmp_path} is not a Chroma data folder" in err
