"""The details view says each number in words a person follows, on every surface.

No "5 ←", "activation -0.80", "said ×1", "version 28" or "backend: offline": how far back, why
recalled, how close in meaning against the bar, how fresh in mind, how often said, and what
read the message. Checked on the layout and on Slack's blocks, Discord's embed and the
terminal's panel made from it, in English and Japanese.
"""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from awai_engine.values import (
    Association,
    Flow,
    Reading,
    ReadingContext,
    RecalledSchema,
    Thought,
    TokenUsage,
)
from bots.discord.embeds import reading_embed
from bots.layout import layout, plain_text
from bots.slack.blocks import reading_message
from bots.terminal.render import render_reading
from tests.factories import message_ref

JARGON = ("←", "activation", "×", "version", "backend", "活性", "バックエンド", "類似度", "第")


def _recalled(
    position: int, distance: int, activation: float, occurrences: int, reason: str
) -> Association:
    return Association(
        source=message_ref(f"m{position}", "Ben", position),
        thought=Thought(index=0, text=f"The payment tests time out ({position})."),
        cue_index=0,
        distance=distance,
        similarity=0.28,
        threshold=0.17,
        activation=activation,
        occurrences=occurrences,
        reason=reason,  # type: ignore[arg-type]
    )


def _reading(offline: bool, language: str) -> Reading:
    said = (
        "決済のテストがまたタイムアウトしました。" if language == "ja" else "The tests timed out."
    )
    context = ReadingContext(
        channel="discord:1:2",
        message=message_ref("m40", "Ann", 40),
        text=said,
        thoughts=(Thought(index=0, text=said),),
        flow=Flow(line="top-level"),
        associations=(
            _recalled(39, 0, 0.0, 1, "meaning"),
            _recalled(35, 4, -0.80, 3, "meaning"),
            _recalled(10, 29, -1.73, 1, "addressed"),
        ),
        schemas=(
            RecalledSchema(
                schema_id="s1", version=28, summary="Flaky CI", size=5, similarity=0.55, as_of=9
            ),
        ),
    )
    if offline:
        return Reading(context=context, backend="offline", offline=True, language=language)
    return Reading(
        context=context,
        backend="anthropic:claude-test",
        offline=False,
        language=language,
        usage=TokenUsage(input_tokens=1200, output_tokens=300),
    )


def _surfaces(reading: Reading) -> dict[str, str]:
    """The details as each surface shows them: the layout's words, Slack, Discord, terminal."""
    details = layout(reading, details=True).section("details")
    assert details is not None
    slack = reading_message(reading, lambda message_id, _: f"https://s.test/{message_id}", True)
    console = Console(record=True, width=400, color_system=None)
    render_reading(reading, console, details=True)
    return {
        "layout": "\n".join(plain_text(line) for line in details.lines),
        "slack": json.dumps(slack.blocks, ensure_ascii=False),
        "discord": json.dumps(reading_embed(reading, details=True).to_dict(), ensure_ascii=False),
        "terminal": console.export_text(),
    }


@pytest.mark.parametrize("surface", ["layout", "slack", "discord", "terminal"])
def test_details_say_each_number_in_words_on_every_surface(surface: str) -> None:
    shown = _surfaces(_reading(offline=True, language="en"))[surface]

    assert "just before · close in meaning (0.28; 0.17 needed) · fresh in mind · said once" in shown
    assert "5 messages earlier · close in meaning (0.28; 0.17 needed) · still in mind" in shown
    assert "said 3 times, counting lines that say the same" in shown
    assert (
        "30 messages earlier · the person it addresses · closeness in meaning 0.28"
        " (recall by meaning needs 0.17) · fading from mind" in shown
    )
    assert "closeness in meaning to this message 0.55" in shown
    assert "Read offline: from who replies to whom and word cues" in shown
    assert not [word for word in JARGON if word in shown], shown


@pytest.mark.parametrize("surface", ["layout", "slack", "discord", "terminal"])
def test_japanese_details_say_each_number_in_japanese_words(surface: str) -> None:
    shown = _surfaces(_reading(offline=False, language="ja"))[surface]

    assert (
        "直前・意味が近い（0.28、必要なのは0.17）・記憶に新しい・一度だけ言われた"
        in shown.replace(" · ", "・")
    )
    assert "同じ趣旨で3回言われた" in shown and "記憶から薄れつつある" in shown
    assert (
        "言語モデル claude-test による読み" in shown
        and "送信1200トークン・生成300トークン" in shown
    )
    assert not [word for word in JARGON if word in shown], shown


def test_a_model_reading_names_its_model_and_what_it_cost() -> None:
    shown = _surfaces(_reading(offline=False, language="en"))["layout"]

    assert "Read by the language model claude-test · 1200 tokens sent, 300 written" in shown
