"""Readings and digests → Discord embeds within Discord's limits, citing messages by jump link.

Layout: the title links to the message read; the description quotes it and says what it meant
(or that the reading is offline); fields hold its thoughts, the flow, recalled thoughts, the
speaker's preconceptions, the connections the model drew, and notes; the footer says what AWAI
cannot see. Parts share the 6,000-character budget of a message by water-filling, so a very long
message or reading shortens every part a little rather than dropping one, and jump links are kept
whole while texts around them shrink.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import discord
from discord.utils import escape_markdown

from awai_engine.schemas.digest import Digest
from awai_engine.values import MessageRef, Reading
from bots.commands import OTHERS, listed, who_may_backfill
from bots.discord import messages
from bots.discord.limits import (
    DESCRIPTION_LIMIT,
    FIELD_COUNT_LIMIT,
    FIELD_NAME_LIMIT,
    FIELD_VALUE_LIMIT,
    FOOTER_LIMIT,
    MESSAGE_LIMIT,
    TITLE_LIMIT,
    Entry,
    cut,
    fit_entries,
    shares,
    size,
)
from bots.discord.links import jump_url_of
from bots.labels import labels_for
from bots.layout import (
    Line,
    Link,
    Moment,
    Section,
    layout,
    marked,
    moment_in_utc,
    plain_text,
)

QUOTE_LIMIT = 1000
"""The quoted message gets at most this much of the description: the reading matters more."""

EMBED_COLOUR = discord.Colour(0x5865F2)


@dataclass(frozen=True)
class _Field:
    name: str
    entries: tuple[Entry, ...]


def reading_embed(
    reading: Reading, language: str | None = None, details: bool = False
) -> discord.Embed:
    """The embed of a reading, laid out by :mod:`bots.layout`, within Discord's limits.

    The description quotes the message and says first what it does (the headline), then what a
    model wrote it meant; each other section is a field, continued in further fields rather than cut when its lines pass 1,024
    characters. Only when the whole passes 6,000 do the quoted texts shrink, evenly.
    """
    shown = layout(reading, language=language, details=details)
    channel = shown.channel
    title = cut(shown.title, TITLE_LIMIT)
    notes = shown.section("notes")
    said = [plain_text(line) for line in notes.lines] if notes else []
    # Which model wrote it, when one did, in words; an offline reading already says so.
    footer = cut("\n".join([*said, shown.footer, shown.written_by]).strip(), FOOTER_LIMIT)
    lead = "\n\n".join(
        "\n".join(
            _markdown(line, channel, bold=section.kind == "headline" and i == 0)
            for i, line in enumerate(section.lines)
        )
        for section in shown.sections
        if section.kind in ("headline", "meaning")
    )
    fields = [
        field
        for section in shown.sections
        if section.kind not in ("headline", "meaning", "notes")
        for field in _fields(section, channel)
    ][:FIELD_COUNT_LIMIT]
    quote = _quote(shown.text)
    fixed = size(title) + size(footer) + sum(size(field.name) for field in fields)
    wanted = [
        min(size(quote), QUOTE_LIMIT),
        min(size(lead), DESCRIPTION_LIMIT - QUOTE_LIMIT - 2),
        *(min(size(_full(field)), FIELD_VALUE_LIMIT) for field in fields),
    ]
    quote_room, lead_room, *field_rooms = shares(wanted, MESSAGE_LIMIT - fixed - 2)
    embed = discord.Embed(
        title=title,
        url=jump_url_of(channel, shown.message),
        # The headline right under the quote: Discord ends a quote at its line's end, so a
        # blank line between them would show as a gap.
        description="\n".join(
            piece for piece in (cut(quote, quote_room), cut(lead, lead_room)) if piece
        ),
        colour=EMBED_COLOUR,
        timestamp=_moment(shown.message),
    )
    for field, room in zip(fields, field_rooms, strict=True):
        value = fit_entries(field.entries, room)
        if value:
            embed.add_field(name=cut(field.name, FIELD_NAME_LIMIT), value=value, inline=False)
    embed.set_footer(text=footer)
    return embed


CONTINUED = "\u200b"
"""The name of a field that continues the one before it (Discord needs a non-empty name)."""


def _fields(section: Section, channel: str) -> list[_Field]:
    """A section as one field, or several when its lines pass a field's 1,024 characters."""
    entries = [
        Entry(_markdown(line, channel), _quoted(line.quote) if line.quote else "")
        for line in section.lines
    ]
    groups: list[list[Entry]] = []
    used = 0
    for entry in entries:
        width = size(entry.render()) + 1
        if not groups or used + width > FIELD_VALUE_LIMIT:
            groups.append([])
            used = 0
        groups[-1].append(entry)
        used += width
    first = section.title or "·"
    return [_Field(first if i == 0 else CONTINUED, tuple(group)) for i, group in enumerate(groups)]


def _markdown(line: Line, channel: str, bold: bool = False) -> str:
    return marked(line.pieces, _Markdown(channel), bold)


class _Markdown:
    """Discord's Markdown for a reading's lines (:func:`bots.layout.marked`), each earlier
    message linked by its jump URL."""

    strong, quiet, boundary = "**", "*", ""

    def __init__(self, channel: str) -> None:
        self.channel = channel

    def escape(self, text: str) -> str:
        return escape_markdown(text)

    def link(self, link: Link) -> str:
        return f"[{_label(link.text)}]({jump_url_of(self.channel, link.ref)})"

    def moment(self, moment: Moment) -> str:
        return f"<t:{int(moment.ts)}:d>" if moment.utc() else ""


def _quoted(text: str) -> str:
    return f"\n> {escape_markdown(text)}"


def _full(field: _Field) -> str:
    return "\n".join(entry.render() for entry in field.entries)


def _quote(text: str) -> str:
    lines = escape_markdown(text).splitlines() or [""]
    return "\n".join(f"> {line}" for line in lines)


def _label(name: str) -> str:
    """A speaker's name as link text: brackets would end the link early."""
    return escape_markdown(name).replace("[", "(").replace("]", ")") or "?"


def _moment(ref: MessageRef) -> datetime | None:
    return moment_in_utc(ref.ts)


def help_embed(menu_name: str) -> discord.Embed:
    """What AWAI does and how to use it, for ``/awai help``."""
    words = labels_for("en")
    embed = discord.Embed(
        title="AWAI",
        description=(
            "AWAI reads one message in the context of what was said before it, and only before"
            " it: the message's own thoughts, the flow of its thread or channel, earlier thoughts"
            " it recalls by meaning, and the speaker's preconceptions in this channel."
        ),
        colour=EMBED_COLOUR,
    )
    embed.add_field(
        name="Read a message",
        value=(
            f"Right-click (or long-press) a message → Apps → **{menu_name}**, or"
            " `/awai read message:<link or id>`, or reply to it with `@AWAI read` (that reading"
            " comes as a direct message)."
        ),
        inline=False,
    )
    embed.add_field(
        name="Other commands",
        value="\n".join(
            [
                *(listed(name) for name in OTHERS),
                who_may_backfill(messages.BACKFILL_MANAGERS),
            ]
        ),
        inline=False,
    )
    embed.set_footer(text=words["limits"])
    return embed


DIGEST_PICTURE = "digest.png"
DIGEST_MARKDOWN = "digest.md"
_HEADING = re.compile(r"^#{1,6} +(.+)$", re.MULTILINE)
_EXAMPLE_ID = re.compile(r"\((\d{15,21})\)$", re.MULTILINE)


def digest_message(
    digest: Digest, channel_title: str, refs: Mapping[str, MessageRef]
) -> tuple[discord.Embed, list[discord.File]]:
    """The digest of the channel people know as ``channel_title`` as one embed, in the
    channel's language, with its picture attached, and the full Markdown when it is cut.

    Headings become bold lines (embeds show Markdown headings unevenly), and each example's
    message id becomes a jump link when ``refs`` knows the message.
    """

    def link(match: re.Match[str]) -> str:
        ref = refs.get(match[1])
        return f"([↗]({jump_url_of(digest.channel, ref)}))" if ref else match[0]

    markdown = digest.markdown
    if markdown.startswith("# "):  # the title says it, with the channel's name, not its key
        markdown = markdown.partition("\n")[2]
    text = _EXAMPLE_ID.sub(link, _HEADING.sub(r"**\1**", markdown)).strip()
    files = [discord.File(io.BytesIO(digest.png), filename=DIGEST_PICTURE)]
    labels = labels_for(digest.language)
    title = cut(labels["digest:title"].format(channel=channel_title), TITLE_LIMIT)
    room = min(DESCRIPTION_LIMIT, MESSAGE_LIMIT - size(title))
    if size(text) > room:
        note = f"\n\n*{labels['digest:cut'].format(file=DIGEST_MARKDOWN)}*"
        text = cut(text, room - size(note)) + note
        files.append(
            discord.File(io.BytesIO(digest.markdown.encode("utf-8")), filename=DIGEST_MARKDOWN)
        )
    embed = discord.Embed(
        title=title,
        description=text,
        colour=EMBED_COLOUR,
        timestamp=datetime.fromtimestamp(digest.created_at, UTC),
    )
    embed.set_image(url=f"attachment://{DIGEST_PICTURE}")
    return embed, files
