"""Writing Slack mrkdwn: escaping, links, Markdown conversion and cutting within Slack's limits.

Slack's mrkdwn is not Markdown: bold is ``*x*``, italic ``_x_``, links ``<url|label>``, and
``& < >`` must be escaped or Slack reads them as markup. Text from users and from the language
model passes through :func:`escape` before it is placed in a block.
"""

from __future__ import annotations

import re

from bots.layout import FENCE

_MD_TOKEN = re.compile(r"```.*?(?:```|$)|`[^`\n]+`|\[([^\]\n]+)\]\(([^)\s]+)\)", re.DOTALL)
_MD_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_MD_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_MD_ITALIC = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_MD_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_MD_BULLET = re.compile(r"^(\s*)[-*+]\s+", re.MULTILINE)
_BOLD_MARK = "\x00"  # stands for a bold ``*`` while italics are converted

BOUNDARY = "\u200b"
"""A zero-width space, put between an emphasis mark and a character that is not a space. Slack
formats ``*x*`` and ``_x_`` only when the marks stand at word boundaries (after a space or
punctuation, before one), so ``…|Carla>*の「…」に返信している*`` — Japanese has no spaces, and a
link ends in ``>`` — shows its asterisks; a zero-width space gives the marks their boundary
and shows nothing."""


def escape(text: str) -> str:
    """Text shown as-is inside mrkdwn: ``& < >`` escaped so Slack does not read them as markup."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link(url: str, label: str) -> str:
    """A mrkdwn link; the label loses the characters that would end it early."""
    clean = escape(label.replace("|", "¦").replace("\n", " "))
    return f"<{url}|{clean}>"


def quote(text: str) -> str:
    """Text as a mrkdwn block quote, every line marked; a fenced code block's lines each as
    inline code. Why: Slack has no code block inside a quote (a multi-line ``` span over ``>``
    lines shows its fences, its language tag and the quote marks as text), and an inline code
    span stays code on its own quoted line, its line breaks and indentation kept."""
    lines, in_code = [], False
    for line in escape(text).split("\n"):
        if FENCE.match(line):  # a fence, with or without its language tag: code starts or ends
            in_code = not in_code
            continue
        if in_code and line.strip() and "`" not in line:  # a backtick would end the span early
            lines.append(f">`{line.rstrip()}`")
        else:
            lines.append(f">{line}")
    return "\n".join(lines)


def markdown_to_mrkdwn(markdown: str) -> str:
    """Markdown (headings, bold, italic, strike, links, bullets, code) rewritten as Slack mrkdwn."""
    pieces: list[str] = []
    cursor = 0
    for match in _MD_TOKEN.finditer(markdown):
        pieces.append(_md_prose(markdown[cursor : match.start()]))
        if match.group(1) is not None:
            pieces.append(link(match.group(2), match.group(1)))
        else:
            pieces.append(escape(match.group(0)))
        cursor = match.end()
    pieces.append(_md_prose(markdown[cursor:]))
    return "".join(pieces)


def _md_prose(text: str) -> str:
    text = escape(text)
    text = _MD_HEADING.sub(lambda m: f"{_BOLD_MARK}{m.group(1)}{_BOLD_MARK}", text)
    text = _MD_BOLD.sub(lambda m: f"{_BOLD_MARK}{m.group(1) or m.group(2)}{_BOLD_MARK}", text)
    text = _MD_ITALIC.sub(r"_\1_", text)
    text = _MD_STRIKE.sub(r"~\1~", text)
    text = _MD_BULLET.sub(r"\1• ", text)
    return text.replace(_BOLD_MARK, "*")


def split(text: str, limit: int) -> list[str]:
    """Cut mrkdwn into pieces of at most ``limit`` characters, never inside a link or an escape.

    Cuts fall on line breaks where possible, then on spaces, and only then mid-word.
    """
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = _cut_point(rest, limit)
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip("\n")
    if rest.strip():
        pieces.append(rest)
    return [piece for piece in pieces if piece.strip()]


def _cut_point(text: str, limit: int) -> int:
    window = text[:limit]
    for separator in ("\n", " "):
        position = window.rfind(separator)
        if position > limit // 2:
            return _outside_markup(text, position + 1)
    return _outside_markup(text, limit)


def _outside_markup(text: str, cut: int) -> int:
    """Move a cut back so it does not split ``<…>`` or ``&…;``."""
    opening, closing = text.rfind("<", 0, cut), text.rfind(">", 0, cut)
    if opening > closing and opening > 0:
        cut = opening
    ampersand = text.rfind("&", max(0, cut - 5), cut)
    if ampersand != -1 and ";" not in text[ampersand:cut]:
        cut = ampersand
    return max(cut, 1)
