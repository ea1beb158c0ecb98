"""How the terminal tells a person things: every message printed as text, never as Rich markup.

File names, channel and speaker names, message text and AWAI's own hints can all hold square
brackets (``[/red]``, ``http(s)://host[:port][/database]``); read as markup they would be styled,
swallowed or crash the command. So the consoles here have markup off, and a style is given as a
:class:`~rich.text.Text` style, never inside the string.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text


def plain_console(stderr: bool = False) -> Console:
    """A console that prints strings as they are (no markup, no highlighting, no re-wrapping)."""
    return Console(stderr=stderr, markup=False, highlight=False, soft_wrap=True)


stderr = plain_console(stderr=True)


def warn(message: str) -> None:
    """Something was skipped or refused; the rest went on."""
    stderr.print(Text(message, style="yellow"))


def fail(message: str) -> None:
    """The command could not do what was asked (it exits non-zero)."""
    stderr.print(Text.assemble(("awai: ", "bold red"), message))


def styled(message: str, style: str) -> Text:
    """``message`` in ``style``, for tables and consoles that print user text."""
    return Text(message, style=style)
