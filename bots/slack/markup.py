"""Slack message markup → plain text, the way the engine wants every utterance.

Slack encodes mentions, channel links, URLs and special words as ``<…>`` entities, escapes
``& < >``, and marks emphasis with ``* _ ~``. The engine reads words, so mentions become display
names (also returned as addressees), links keep their label and address, emphasis markers go,
and code (inline or fenced) is kept exactly as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Fenced code, inline code, or one ``<…>`` entity; everything between them is prose.
_TOKEN = re.compile(r"```.*?(?:```|$)|`[^`\n]+`|<[^<>\n]+>", re.DOTALL)
_EMPHASIS = (
    re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])"),
    re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])"),
    re.compile(r"(?<![\w~])~(?=\S)([^~\n]+?)(?<=\S)~(?![\w~])"),
)
_QUOTE_MARK = re.compile(r"^&gt;\s?", re.MULTILINE)
_SPECIAL = {"here": "@here", "channel": "@channel", "everyone": "@everyone"}


def unescape(text: str) -> str:
    """Slack's three escapes back to characters (``&amp;`` last, so ``&amp;lt;`` stays ``&lt;``)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def to_plain_text(text: str, name_of: Callable[[str], str]) -> tuple[str, tuple[str, ...]]:
    """Plain text of a Slack message and the display names it mentions, in order, once each.

    ``name_of`` turns a user id into a display name (the adapter's cached ``users.info``).
    """
    addressees: list[str] = []
    pieces: list[str] = []
    cursor = 0
    for match in _TOKEN.finditer(text):
        pieces.append(_prose(text[cursor : match.start()]))
        token = match.group(0)
        if token.startswith("<"):
            pieces.append(_entity(token[1:-1], name_of, addressees))
        else:
            pieces.append(unescape(token))
        cursor = match.end()
    pieces.append(_prose(text[cursor:]))
    return "".join(pieces).strip(), tuple(dict.fromkeys(addressees))


def _prose(text: str) -> str:
    text = _QUOTE_MARK.sub("", text)
    for pattern in _EMPHASIS:
        text = pattern.sub(r"\1", text)
    return unescape(text)


def _entity(body: str, name_of: Callable[[str], str], addressees: list[str]) -> str:
    target, _, label = body.partition("|")
    label = unescape(label)
    if target.startswith("@"):
        user_id = target[1:]
        name = name_of(user_id)
        if name == user_id and label:
            name = label.lstrip("@")
        addressees.append(name)
        return f"@{name}"
    if target.startswith("#"):
        return f"#{label or target[1:]}"
    if target.startswith("!"):
        command = target[1:]
        if command in _SPECIAL:
            return _SPECIAL[command]
        if command.startswith("subteam^"):
            return label or "@group"
        return label  # dates and other special forms carry their readable text as the label
    url = unescape(target)
    if not label:
        return url.removeprefix("mailto:")
    if label == url or url.removeprefix("mailto:") == label or url.endswith("//" + label):
        return label
    return f"{label} ({url})"
