"""Rendering a reading in the terminal with rich, and as JSON for scripts.

The order and words come from :mod:`bots.layout`; this module only formats its pieces. An earlier
message is named ``[id] Speaker`` so it can be read in turn with ``awai read --message id``.
Everything in a reading came from chat, so every piece is shown through
:mod:`bots.terminal.visible`: the message keeps its lines, and every other piece is one line.
"""

from __future__ import annotations

from datetime import datetime

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.text import Text

from awai_engine.text import shorten_keeping_lines
from awai_engine.values import MessageRef, Reading
from bots.layout import (
    FENCE,
    Line,
    Link,
    Moment,
    Plain,
    Quiet,
    Section,
    Strong,
    layout,
    moment_in_utc,
)
from bots.terminal.line_breaking import WrappedText
from bots.terminal.transcript import channel_name
from bots.terminal.visible import one_line, terminal_json, visible

MAX_SHOWN_CHARS = 2000
MAX_SHOWN_LINES = 20
"""A message is shown with its own line breaks, up to this many lines (a pasted log is cut)."""


def reading_json(reading: Reading) -> str:
    """One reading as one line of JSON (the ``--json`` output), safe to print."""
    return terminal_json(reading.model_dump(mode="json"))


def render_reading(reading: Reading, console: Console, details: bool = False) -> None:
    """The reading as a panel: headline, connections, preconceptions, flow (and details)."""
    shown = layout(reading, details=details)
    reference = _Clock(shown.message.ts, shown.language)
    parts: list[RenderableType] = [
        _as_written(shorten_keeping_lines(shown.text, MAX_SHOWN_CHARS, MAX_SHOWN_LINES))
    ]
    for section in shown.sections:
        parts.append(_section(section, reference))
    parts.append(WrappedText(one_line(shown.footer), style="dim"))
    # Where: the channel as it was typed, and "thread" only for a thread (a channel's own flow
    # is no news; the word "channel" alone read as a missing name).
    where = channel_name(shown.channel)
    if shown.line:
        where = f"{where} · {shown.line}"
    header = Text(one_line(f"{shown.title} · {reference.full(shown.message)} · {where}"))
    console.print(Panel(Group(*parts), title=header, title_align="left"))


def _as_written(text: str) -> WrappedText:
    """The message as its writer meant it to look: a fenced code block's lines shown as code
    (indented, in the code colour), without the fences and their language tag, which a chat
    client never shows either."""
    shown = WrappedText(overflow="fold")
    in_code = False
    lines = text.split("\n")
    for n, line in enumerate(lines):
        if FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            shown.append("  " + visible(line), style="cyan")
        else:
            shown.append(visible(line))
        if n < len(lines) - 1:
            shown.append("\n")
    shown.rstrip()
    return shown


def _section(section: Section, reference: _Clock) -> RenderableType:
    body = Group(*(_line(line, reference, section.kind) for line in section.lines))
    if section.kind == "headline":
        return Panel(body, border_style="green")
    if section.title is None:
        return body
    return Panel(body, title=Text(one_line(section.title)), title_align="left")


def _line(line: Line, reference: _Clock, kind: str) -> RenderableType:
    text = WrappedText(overflow="fold")
    for piece in line.pieces:
        match piece:
            case Strong(words):
                text.append(one_line(words), style="bold")
            case Quiet(words):
                text.append(one_line(words), style="dim")
            case Link(ref, words):
                text.append(one_line(f"[{ref.message_id}] {words}"), style="bold cyan")
            case Moment(ts):
                text.append(reference.moment(ts), style="dim")
            case Plain(words):
                text.append(one_line(words), style="bold" if kind == "headline" else "")
    if line.quote is None:
        return text
    # Indented as a block, so a quote folded over several lines still reads as one quote.
    quote = WrappedText(f"“{one_line(line.quote)}”", style="italic", overflow="fold")
    return Group(text, Padding(quote, (0, 0, 0, 3)))


WEEKDAYS_JA = "月火水木金土日"


class _Clock:
    """Times in the terminal's zone, worded relative to the message being read."""

    def __init__(self, reference: float, language: str) -> None:
        when = moment_in_utc(reference)
        self.reference = when.astimezone() if when else None
        self.japanese = language.startswith("ja")

    def full(self, ref: MessageRef) -> str:
        when = moment_in_utc(ref.ts)
        if when is None:  # a message without a time: named by its id, as links are
            return f"[{ref.message_id}]"
        return self._date(when.astimezone(), year=True, hour=True)

    def moment(self, ts: float) -> str:
        """The hour the same day, else the weekday and date (with the year if another)."""
        utc = moment_in_utc(ts)
        if utc is None:
            return ""
        when = utc.astimezone()
        if self.reference is not None and when.date() == self.reference.date():
            return when.strftime("%H:%M")
        other_year = self.reference is None or when.year != self.reference.year
        return self._date(when, year=other_year, hour=False)

    def _date(self, when: datetime, year: bool, hour: bool) -> str:
        if self.japanese:
            text = f"{when.month}月{when.day}日({WEEKDAYS_JA[when.weekday()]})"
            text = f"{when.year}年{text}" if year else text
        else:
            text = when.strftime("%a %d %b %Y" if year else "%a %d %b")
        return f"{text} {when.strftime('%H:%M %Z')}" if hour else text
