"""How the terminal tells a person things: every message printed as text, never obeyed.

File names, channel and speaker names, message text and AWAI's own hints can all hold square
brackets (``[/red]``, ``http(s)://host[:port][/database]``); read as markup they would be styled,
swallowed or crash the command. So the consoles here have markup and emoji codes off, and a
style is given as a :class:`~rich.text.Text` style, never inside the string. They can also hold
escape sequences and other control characters (a participant's name can recolour or rewrite the
screen): every string these consoles print, and every styled piece, goes through
:func:`bots.terminal.visible.visible` first. Names and other one-line fields put into a message
go through :func:`~bots.terminal.visible.one_line` where the message is composed.
"""

from __future__ import annotations

import logging
from typing import Any

from rich.console import Console
from rich.text import Text

from bots.terminal.line_breaking import WrappedText
from bots.terminal.visible import one_line, visible


class TerminalConsole(Console):
    """A Rich console whose strings are shown, not obeyed: no markup, no emoji codes, no
    highlighting or re-wrapping, and control characters written as escapes."""

    def __init__(self, stderr: bool = False) -> None:
        super().__init__(stderr=stderr, markup=False, emoji=False, highlight=False, soft_wrap=True)
        # These consoles live as long as the process, so their size is read at each print (the
        # terminal's, else COLUMNS and LINES), not fixed at import: Rich keeps a COLUMNS set then
        # for good (pytest-xdist's workers start with COLUMNS=80, and a resized terminal too).
        self._width = self._height = None

    def print(self, *objects: Any, soft_wrap: bool | None = None, **options: Any) -> None:
        """Strings and texts are left for the terminal to wrap (a path or a command stays one
        line to copy), but a panel or a table is laid out to the width: soft wrapping would crop
        each of its lines at the border instead of folding the words onto the next one."""
        if soft_wrap is None:
            soft_wrap = all(isinstance(item, str | Text) for item in objects)
        super().print(*objects, soft_wrap=soft_wrap, **options)

    def render_str(self, text: str, **options: Any) -> Text:
        """Every string Rich prints (``print``, table cells and titles) is rendered here."""
        return super().render_str(visible(text), **options)


class VisibleFormatter(logging.Formatter):
    """Log lines (``-v``, and the bots' own logging) with their control characters escaped: a
    logged channel or user name reaches the same terminal. A record is one line; a traceback
    after it keeps its lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return one_line(super().formatMessage(record))

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record))


def plain_console(stderr: bool = False) -> Console:
    """A console that prints strings as they are (no markup, no highlighting, no re-wrapping)."""
    return TerminalConsole(stderr=stderr)


stdout = plain_console()
stderr = plain_console(stderr=True)


def warn(message: str) -> None:
    """Something was skipped or refused; the rest went on."""
    tell(stderr, styled(message, "yellow"))


def fail(message: str) -> None:
    """The command could not do what was asked (it exits non-zero)."""
    tell(stderr, Text.assemble(("awai: ", "bold red"), styled(message, "")))


def tell(console: Console, said: Text) -> None:
    """A message to a person: on a terminal, its sentences broken between words at the width
    (the terminal's own wrapping would split "refu|sed"); a line indented by a space or more is
    a command to copy and is left whole. Piped or logged, each line stays one line."""
    if not console.is_terminal:
        console.print(said, soft_wrap=True)
        return
    for line in said.split("\n", allow_blank=True):
        if line.plain.startswith(" "):
            console.print(line, soft_wrap=True)
        else:
            wrapped = WrappedText(overflow="fold")
            wrapped.append_text(line)
            console.print(wrapped, soft_wrap=False)


def styled(message: str, style: str) -> Text:
    """``message`` in ``style``, for tables and consoles that print user text."""
    return Text(visible(message), style=style)
