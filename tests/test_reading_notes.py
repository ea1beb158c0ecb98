"""A reading's notes reach the reader in their own language, on every surface, with no internals.

The engine and the model backend write notes as values (:class:`ReadingNote`); the terminal,
Slack and Discord word them through one table. These tests drive the real engine (and the real
``anthropic`` SDK against the local fake Messages API) and read what each surface shows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import get_args

import pytest
from rich.console import Console

from awai_engine.backends.anthropic.answers import READING_TASK
from awai_engine.embedding import Embedder
from awai_engine.values import ModelFailure, NoteKind, Reading, ReadingNote, Trimmed, TrimmedPart
from awai_engine.visibility import EVERYTHING
from bots.discord.embeds import reading_embed
from bots.labels import labels_for
from bots.note_words import note_text
from bots.runtime import language_backend
from bots.slack.blocks import reading_message
from bots.terminal.render import reading_json, render_reading
from tests.factories import utterance
from tests.fake_anthropic import AnthropicRuntimes, hang

INTERNALS = re.compile(r"AWAI_|HTTP|\b[45]\d\d\b|\{|\}|note:|part:|failure:")
CHANNEL = "discord:10:20"  # a Discord key, so the embed can link its messages


@pytest.fixture
def llm(tmp_path: Path, embedder: Embedder) -> Iterator[AnthropicRuntimes]:
    with AnthropicRuntimes(tmp_path, embedder) as runtimes:
        yield runtimes


def _every_note() -> list[ReadingNote]:
    """One note of every kind, each failure and each part that can be trimmed, singular and plural."""
    notes = []
    for kind in get_args(NoteKind):
        if kind == "model-failed":
            notes += [ReadingNote(kind=kind, failure=f) for f in get_args(ModelFailure)]
        elif kind == "context-trimmed":
            parts: Sequence[TrimmedPart] = get_args(TrimmedPart)
            notes.append(
                ReadingNote(kind=kind, trimmed=tuple(Trimmed(part=p, count=1) for p in parts))
            )
            notes.append(
                ReadingNote(kind=kind, trimmed=tuple(Trimmed(part=p, count=3) for p in parts))
            )
        else:
            notes += [
                ReadingNote(kind=kind, count=1, thoughts=(2,)),
                ReadingNote(kind=kind, count=1200, thoughts=(2, 5)),
            ]
    return notes


@pytest.mark.parametrize("language", ["en", "ja"])
def test_every_note_kind_is_worded_without_setting_names_codes_or_placeholders(language: str):
    words = labels_for(language)
    for note in _every_note():
        said = note_text(note, words)
        assert said and not INTERNALS.search(said), (note, said)


def test_japanese_notes_are_japanese_and_english_ones_use_plurals():
    note = ReadingNote(kind="links-dropped", count=1)
    assert note_text(note, labels_for("en")).startswith("1 connection the model wrote was")
    assert note_text(note.model_copy(update={"count": 3}), labels_for("en")).startswith(
        "3 connections the model wrote were"
    )
    trimmed = ReadingNote(
        kind="context-trimmed",
        trimmed=(Trimmed(part="preconception-example", count=2), Trimmed(part="text", count=1)),
    )
    assert note_text(trimmed, labels_for("en")) == (
        "This reading's context was too large to send whole, so the language model was not shown"
        " 2 examples of preconceptions. The message's text was shortened for the language model"
        " (its thoughts were sent)."
    )
    japanese = note_text(trimmed, labels_for("ja"))
    assert "思い込みの例2件" in japanese and not re.search(r"[A-Za-z]{3,}", japanese)


def _long_one_thought_message() -> str:
    """One sentence too long to send even trimmed to the smallest request the budget allows."""
    return (
        "移行計画では"
        + "、".join(f"第{n}リージョンのシャードを順に止めて確認する" for n in range(60))
        + "。"
    )


def _surfaces(reading: Reading) -> dict[str, str]:
    """What the terminal, Slack and Discord show of ``reading``, as plain text."""
    console = Console(record=True, width=200)
    render_reading(reading, console)
    embed = reading_embed(reading).to_dict()
    discord_text = json.dumps(embed, ensure_ascii=False)
    slack = reading_message(reading, lambda message_id, root: f"https://example.test/{message_id}")
    return {
        "terminal": " ".join(console.export_text().split()),
        "slack": json.dumps(slack.blocks, ensure_ascii=False),
        "discord": discord_text,
    }


def test_a_context_too_large_even_trimmed_is_an_over_budget_offline_reading_in_the_readers_words(
    llm: AnthropicRuntimes,
):
    minimum = language_backend(llm.settings()).prefix_tokens + 300
    runtime = llm(reading_token_budget=minimum, limits={"max_thought_chars": 4000})
    runtime.engine.ingest(
        [
            utterance("101", "移行の計画を確認しましょう。", "ann", channel=CHANNEL),
            utterance("102", _long_one_thought_message(), "bob", channel=CHANNEL),
        ]
    )
    llm.fake.requests.clear()

    reading = runtime.engine.read(CHANNEL, "102", EVERYTHING)

    assert llm.fake.calls(READING_TASK) == []
    assert reading.offline and reading.offline_reason == "over-budget"
    assert json.loads(reading_json(reading))["offline_reason"] == "over-budget"
    for surface, shown in _surfaces(reading).items():
        assert "言語モデルには長すぎたため" in shown, surface
        assert "too long for the language model" not in shown, surface
        assert "AWAI_" not in shown, surface


def test_a_failed_model_reading_of_a_japanese_message_says_why_in_japanese_on_every_surface(
    llm: AnthropicRuntimes,
):
    runtime = llm(timeout_seconds=0.5, max_retries=0)
    runtime.engine.ingest(
        [
            utterance("201", "明日のリリースは延期しますか?", "ann", channel=CHANNEL),
            utterance("202", "はい、金曜に延期します。", "bob", channel=CHANNEL),
        ]
    )
    llm.fake.script(hang(5))

    reading = runtime.engine.read(CHANNEL, "202", EVERYTHING)

    assert reading.offline_reason == "failed"
    assert ReadingNote(kind="model-failed", failure="unreachable") in reading.notes
    for surface, shown in _surfaces(reading).items():
        assert "言語モデルに接続できませんでした" in shown, surface
        assert "could not be reached" not in shown, surface
        assert "HTTP" not in shown, surface
