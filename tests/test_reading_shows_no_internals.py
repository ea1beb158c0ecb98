"""What a person sees names no internals: no backend key, no channel key, no "asker", and no
bare "channel" where the channel's name belongs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from awai_engine.values import Flow, Headline, MessageRef, Reading, ReadingContext, Thought
from bots.discord.embeds import reading_embed
from bots.slack.blocks import reading_message
from bots.terminal.cli import main
from bots.terminal.render import render_reading
from tests.factories import message_ref


def _reading(
    offline: bool = True,
    ts: float | None = None,
    line: str = "top-level",
    channel: str = "terminal:local:ops",
) -> Reading:
    ref = message_ref("m7", "Maya", 7)
    if ts is None:  # a transcript without times: only the order is known
        ref = MessageRef(**{**ref.model_dump(), "ts": 7.0})
    context = ReadingContext(
        channel=channel,
        message=ref,
        text="Is the gateway error rate down?",
        thoughts=(Thought(index=0, text="Is the gateway error rate down?"),),
        flow=Flow(line=line),  # type: ignore[arg-type]
    )
    return Reading(
        context=context,
        backend="offline" if offline else "anthropic:claude-test-model",
        offline=offline,
        language="en",
        headline=Headline(connection=None),
        connections=(),
    )


def test_the_discord_footer_names_the_model_in_words_not_the_backend_key() -> None:
    channel = "discord:1:2"
    footer = reading_embed(_reading(offline=False, channel=channel)).footer.text or ""
    assert "anthropic:" not in footer
    assert "Read by the language model claude-test-model" in footer
    assert "language model" not in (reading_embed(_reading(channel=channel)).footer.text or "")


def _header(reading: Reading) -> str:
    console = Console(record=True, width=120, color_system=None)
    render_reading(reading, console)
    return console.export_text().splitlines()[0]


def test_the_terminal_header_names_the_channel_as_typed_and_a_thread_only_when_one() -> None:
    header = _header(_reading(ts=1_770_000_000))
    assert "· ops " in header and "channel" not in header and "terminal:local" not in header
    assert "· ops · thread" in _header(_reading(ts=1_770_000_000, line="thread"))


def test_a_message_without_a_time_is_named_by_its_id_in_the_header() -> None:
    header = _header(_reading())
    assert "[m7]" in header and "#7" not in header


@pytest.mark.slow
def test_the_demo_says_a_missing_message_as_read_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data-dir", str(tmp_path), "demo", "--message", "zzz"]) == 2
    said = capsys.readouterr().err
    assert "No message 'zzz' is in the sample" in said and "'m001' to 'm055'" in said
    assert "terminal:local" not in said and "asker" not in said
    assert main(["--data-dir", str(tmp_path), "demo"]) == 0
    assert "read with" not in capsys.readouterr().out


def test_slacks_header_line_says_thread_only_for_a_thread() -> None:
    def context_line(line: str) -> str:
        reading = _reading(ts=1_770_000_000, line=line, channel="slack:T1:C1")
        blocks = reading_message(reading, lambda message_id, _: f"https://s.test/{message_id}")
        return json.dumps(blocks.blocks[1], ensure_ascii=False)

    assert "channel" not in context_line("top-level")
    assert "thread" in context_line("thread")
