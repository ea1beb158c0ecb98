"""Discord message markup → the plain text AWAI reads.

Why: the engine reads words, not markup. Mentions become the names people see (``@Ann``,
``#general``), emphasis, spoilers, headings and quotes lose their markers, masked links keep
both their text and their address, timestamps become dates. Code stays as written: fenced blocks
keep their fences (the engine keeps a code block as one thought) and inline code keeps its text.
Text that must survive untouched (code, names, addresses, escaped characters) is set aside under a
placeholder while the markup is stripped, then put back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

_FENCED = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_INLINE_CODE = re.compile(r"(`{1,2})(?P<code>[^`]+?)\1")
_ESCAPED = re.compile(r"\\(?P<char>[*_~`|>#\-\[\]()\\:<@])")
_URL = re.compile(r"https?://[^\s<>]+[^\s<>.,;:!?)\]'\"]")
_TOKEN = re.compile(
    r"<@!?(?P<user>\d+)>"
    r"|<@&(?P<role>\d+)>"
    r"|<#(?P<channel>\d+)>"
    r"|</(?P<command>[\w -]+):\d+>"
    r"|<a?:(?P<emoji>\w+):\d+>"
    r"|<t:(?P<time>-?\d+)(?::[tTdDfFsSR])?>"
    r"|<(?P<url>https?://[^\s>]+)>"
)
_MASKED_LINK = re.compile(r"\[(?P<text>[^\]\n]+)\]\(\s*<?(?P<url>https?://[^)\s>]+)>?\s*\)")
_LINE_MARKERS = re.compile(r"^(?:>>> ?|> ?|#{1,3} +|-# +)", re.MULTILINE)
_SPANS = (
    re.compile(r"\|\|(.+?)\|\|", re.DOTALL),
    re.compile(r"~~(.+?)~~", re.DOTALL),
    re.compile(r"\*\*\*(.+?)\*\*\*", re.DOTALL),
    re.compile(r"\*\*(.+?)\*\*", re.DOTALL),
    re.compile(r"__(.+?)__", re.DOTALL),
    re.compile(r"\*(?=\S)(.+?)(?<=\S)\*", re.DOTALL),
    re.compile(r"(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)", re.DOTALL),
)
_PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")


@dataclass(frozen=True)
class MentionNames:
    """Names to show for the ids a message mentions; unknown ids get Discord's own wording."""

    users: Mapping[int, str] = field(default_factory=dict)
    roles: Mapping[int, str] = field(default_factory=dict)
    channels: Mapping[int, str] = field(default_factory=dict)


class _Kept:
    """Text set aside under placeholders so the markup pass cannot touch it."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def keep(self, text: str) -> str:
        self.items.append(text)
        return f"\ue000{len(self.items) - 1}\ue001"

    def restore(self, text: str) -> str:
        while _PLACEHOLDER.search(text):  # a kept item may itself hold placeholders
            text = _PLACEHOLDER.sub(lambda match: self.items[int(match[1])], text)
        return text


def plain_text(content: str, names: MentionNames) -> str:
    """The words of a Discord message, markup removed, mentions as names, code as written."""
    kept = _Kept()
    text = _FENCED.sub(lambda match: kept.keep(match.group(0)), content)
    text = _INLINE_CODE.sub(lambda match: kept.keep(match["code"]), text)
    text = _ESCAPED.sub(lambda match: kept.keep(match["char"]), text)
    text = _TOKEN.sub(lambda match: kept.keep(_token(match, names)), text)
    text = _MASKED_LINK.sub(
        lambda match: (
            f"{match['text']} ({kept.keep(match['url'])})"
            if match["text"].strip() != match["url"]
            else kept.keep(match["url"])
        ),
        text,
    )
    text = _URL.sub(lambda match: kept.keep(match.group(0)), text)
    text = _LINE_MARKERS.sub("", text)
    for span in _SPANS:
        text = span.sub(r"\1", text)
    return kept.restore(text).strip()


def _token(match: re.Match[str], names: MentionNames) -> str:
    if user := match["user"]:
        return "@" + names.users.get(int(user), "Unknown User")
    if role := match["role"]:
        return "@" + names.roles.get(int(role), "Unknown Role")
    if channel := match["channel"]:
        return "#" + names.channels.get(int(channel), "unknown-channel")
    if command := match["command"]:
        return "/" + command
    if emoji := match["emoji"]:
        return f":{emoji}:"
    if moment := match["time"]:
        return _date(int(moment))
    return match["url"]


def _date(seconds: int) -> str:
    try:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError):
        return str(seconds)
