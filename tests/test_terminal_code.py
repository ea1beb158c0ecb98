"""The terminal shows a message's fenced code block as code, as a chat client does: its lines,
indented, without the fences and their language tag."""

from __future__ import annotations

from rich.console import Console

from awai_engine.text import shorten
from awai_engine.values import Flow, Headline, Reading, ReadingContext, Thought
from bots.labels import LABELS
from bots.layout import code_as_a_line
from bots.terminal.render import render_reading
from tests.factories import message_ref

TEXT = "Sure, here is the change:\n```python\ndelay = base * 2 ** attempt\n```\nOK?"


def test_a_fenced_code_block_shows_its_lines_without_the_fences() -> None:
    context = ReadingContext(
        channel="terminal:local:ops",
        message=message_ref("m3", "Sam", 3),
        text=TEXT,
        thoughts=(Thought(index=0, text=TEXT),),
        flow=Flow(line="top-level"),
    )
    reading = Reading(
        context=context,
        backend="offline",
        offline=True,
        language="en",
        headline=Headline(connection=None),
        connections=(),
    )
    console = Console(record=True, width=100, color_system=None)
    render_reading(reading, console)
    shown = [line.strip("│ ") for line in console.export_text().splitlines()]
    assert "```" not in "\n".join(shown) and "python" not in "\n".join(shown)
    code = shown.index("delay = base * 2 ** attempt")
    assert shown[code - 1] == "Sure, here is the change:" and shown[code + 1] == "OK?"


def test_a_summary_on_one_line_shows_the_code_without_its_language_tag() -> None:
    said = code_as_a_line(shorten(TEXT, 200), LABELS["en"])
    assert said == "Sure, here is the change: (code) delay = base * 2 ** attempt OK?"
    assert "python" not in code_as_a_line(shorten(TEXT, 40), LABELS["en"])
