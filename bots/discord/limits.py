"""Discord's size limits for embeds, and fitting text into them without losing the links.

Discord counts characters as JavaScript does (UTF-16 code units: an emoji outside the basic plane
counts two), so everything here measures that way; Python's ``len`` never exceeds it, so what fits
here fits discord.py's own checks too.

Cited messages are rendered as lines that start with a jump link. When lines must be shortened,
their texts give way first and the links stay, so a shortened reading still lets the reader click
through to every message it cites.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FIELD_NAME_LIMIT = 256
FIELD_VALUE_LIMIT = 1024
FIELD_COUNT_LIMIT = 25
FOOTER_LIMIT = 2048
MESSAGE_LIMIT = 6000
"""All embeds of one message together: titles, descriptions, field names and values, footers."""

ELLIPSIS = "…"


def size(text: str) -> int:
    """Length as Discord counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` units, ending with an ellipsis on a word boundary if cut."""
    if size(text) <= limit:
        return text
    if limit <= 0:
        return ""
    kept = []
    used = 0
    budget = limit - size(ELLIPSIS)
    for char in text:
        width = size(char)
        if used + width > budget:
            break
        kept.append(char)
        used += width
    shortened = "".join(kept)
    space = shortened.rfind(" ")
    if space >= len(shortened) * 2 // 3:  # cut on a word boundary when that loses little
        shortened = shortened[:space]
    return shortened.rstrip(" \\") + ELLIPSIS


def shares(wanted: Sequence[int], total: int) -> list[int]:
    """Split ``total`` among parts wanting ``wanted`` each: small parts get all they want, the
    largest share the rest equally (water-filling), so no part is cut more than it must be."""
    result = [0] * len(wanted)
    remaining = max(total, 0)
    order = sorted(range(len(wanted)), key=lambda index: wanted[index])
    for rank, index in enumerate(order):
        share = remaining // (len(wanted) - rank)
        result[index] = min(wanted[index], share)
        remaining -= result[index]
    return result


@dataclass(frozen=True)
class Entry:
    """One line: a lead that must stay whole (a jump link, a number) and text that may shrink."""

    lead: str
    text: str = ""

    def render(self, text_limit: int | None = None) -> str:
        text = self.text if text_limit is None else cut(self.text, text_limit)
        return f"{self.lead} {text}".strip() if text else self.lead


def fit_entries(entries: Sequence[Entry], limit: int) -> str:
    """Entries one per line within ``limit``: texts shrink first, then trailing entries go."""
    if not entries or limit <= 0:
        return ""
    full = "\n".join(entry.render() for entry in entries)
    if size(full) <= limit:
        return full
    for count in range(len(entries), 0, -1):
        shown = entries[:count]
        more = f"\n{ELLIPSIS} +{len(entries) - count}" if count < len(entries) else ""
        fixed = sum(size(entry.lead) + 1 for entry in shown) + (len(shown) - 1) + size(more)
        room = limit - fixed
        if room < 0:
            continue
        texts = shares([size(entry.text) for entry in shown], room)
        lines = [
            entry.render(text_limit=share) if share >= 8 else entry.lead
            for entry, share in zip(shown, texts, strict=True)
        ]
        rendered = "\n".join(lines) + more
        if size(rendered) <= limit:
            return rendered
    return cut(entries[0].lead, limit)
