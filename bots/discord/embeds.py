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
from awai_engine.values import Association, MessageRef, Reading
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
from bots.labels import labels_for, recall_reason

QUOTE_LIMIT = 1000
"""The quoted message gets at most this much of the description: the reading matters more."""

EMBED_COLOUR = discord.Colour(0x5865F2)


@dataclass(frozen=True)
class _Part:
    name: str
    entries: tuple[Entry, ...]


def reading_embed(reading: Reading) -> discord.Embed:
    """The embed of a reading, at most 6,000 characters, 25 fields and each part's own limit."""
    context = reading.context
    words = labels_for(reading.language)

    title = cut(f"{words['reading']}: {context.message.speaker_name}", TITLE_LIMIT)
    footer = cut(f"{words['limits']} · {reading.backend}", FOOTER_LIMIT)
    parts = [part for part in _parts(reading, words) if part.entries]
    parts = parts[:FIELD_COUNT_LIMIT]
    names = [cut(part.name, FIELD_NAME_LIMIT) for part in parts]

    quote = _quote(context.text)
    if reading.interpretation:
        meaning = escape_markdown(reading.interpretation.meaning)
    else:
        meaning = f"*{words['offline']}*" if reading.offline else ""
    fixed = size(title) + size(footer) + sum(size(name) for name in names)
    wanted = [
        min(size(quote), QUOTE_LIMIT),
        min(size(meaning), DESCRIPTION_LIMIT - QUOTE_LIMIT - 2),
        *(min(size(_full(part)), FIELD_VALUE_LIMIT) for part in parts),
    ]
    quote_room, meaning_room, *field_rooms = shares(wanted, MESSAGE_LIMIT - fixed - 2)

    embed = discord.Embed(
        title=title,
        url=jump_url_of(context.channel, context.message),
        description="\n\n".join(
            piece for piece in (cut(quote, quote_room), cut(meaning, meaning_room)) if piece
        ),
        colour=EMBED_COLOUR,
        timestamp=_moment(context.message),
    )
    for name, part, room in zip(names, parts, field_rooms, strict=True):
        value = fit_entries(part.entries, room)
        if value:
            embed.add_field(name=name, value=value, inline=False)
    embed.set_footer(text=footer)
    return embed


def _parts(reading: Reading, words: dict[str, str]) -> list[_Part]:
    context = reading.context
    refs = _refs(reading)

    def link(ref: MessageRef) -> str:
        return f"[{_label(ref.speaker_name)}]({jump_url_of(context.channel, ref)})"

    flow = context.flow
    parts = [
        _Part(
            words["thoughts"],
            tuple(
                Entry(f"{thought.index + 1}.", escape_markdown(thought.text))
                for thought in context.thoughts
            ),
        )
    ]
    flow_entries = [
        Entry(link(item.message), escape_markdown(item.summary)) for item in flow.earlier
    ]
    if flow.previous:
        said = " / ".join(thought.text for thought in flow.previous.thoughts)
        flow_entries.append(
            Entry(f"{words['previous']}: {link(flow.previous.message)}", escape_markdown(said))
        )
    parts.append(
        _Part(
            f"{words['flow']} · {words[flow.line]}",
            tuple(flow_entries) or (Entry(words["nothing_before"]),),
        )
    )
    parts.append(
        _Part(
            words["associations"],
            tuple(
                Entry(
                    f"{'★ ' if item.important else ''}{link(item.source)}"
                    f" ({item.distance + 1} {words['distance']} · {_why(item, words)}"
                    f" · {words['activation']} {item.activation:.2f})",
                    escape_markdown(item.thought.text),
                )
                for item in context.associations
            )
            or (Entry(words["no_associations"]),),
        )
    )
    parts.append(
        _Part(
            words["schemas"],
            tuple(
                Entry(
                    f"`{schema.schema_id} v{schema.version}` ({schema.size}) ·"
                    f" {words.get(schema.stance, schema.stance)}",
                    escape_markdown(
                        schema.summary
                        + (f" — {schema.stance_reason}" if schema.stance_reason else "")
                    ),
                )
                for schema in context.schemas
            ),
        )
    )
    interpretation = reading.interpretation
    if interpretation:
        parts.append(
            _Part(
                words["links"],
                tuple(
                    Entry(
                        f"{item.thought_index + 1}. {item.relation}"
                        f" {link(refs[item.message_id]) if item.message_id in refs else ''}".rstrip(),
                        escape_markdown(item.explanation),
                    )
                    for item in interpretation.links
                ),
            )
        )
        parts.append(
            _Part(
                words["bearings"],
                tuple(
                    Entry(
                        f"`{item.schema_id}` · {words.get(item.stance, item.stance)}",
                        escape_markdown(item.explanation),
                    )
                    for item in interpretation.schema_bearings
                ),
            )
        )
    notes = (*context.notes, *(note for note in reading.notes if not note.startswith("Offline")))
    parts.append(_Part("Notes", tuple(Entry("·", escape_markdown(note)) for note in notes)))
    return parts


def _why(item: Association, words: dict[str, str]) -> str:
    """The numbers that recalled a thought; one recalled by addressing says so, not "≥"."""
    similarity = f"{words['similarity']} {item.similarity:.2f}"
    reason = recall_reason(item, words)
    if reason is None:
        return f"{similarity} ≥ {item.threshold:.2f}"
    return f"{reason} · {similarity}"


def _refs(reading: Reading) -> dict[str, MessageRef]:
    """Every message the reading may cite, by id, so connections can link to them."""
    context = reading.context
    refs = {item.message.message_id: item.message for item in context.flow.earlier}
    if context.flow.previous:
        refs[context.flow.previous.message.message_id] = context.flow.previous.message
    refs.update((item.source.message_id, item.source) for item in context.associations)
    refs[context.message.message_id] = context.message
    return refs


def _full(part: _Part) -> str:
    return "\n".join(entry.render() for entry in part.entries)


def _quote(text: str) -> str:
    lines = escape_markdown(text).splitlines() or [""]
    return "\n".join(f"> {line}" for line in lines)


def _label(name: str) -> str:
    """A speaker's name as link text: brackets would end the link early."""
    return escape_markdown(name).replace("[", "(").replace("]", ")") or "?"


def _moment(ref: MessageRef) -> datetime | None:
    return datetime.fromtimestamp(ref.ts, UTC) if ref.ts > 0 else None


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
            " `/awai read message:<link or id>`."
        ),
        inline=False,
    )
    embed.add_field(
        name="Other commands",
        value=(
            "`/awai digest`: each speaker's preconceptions in this channel, with a map.\n"
            "`/awai forget-me`: remove what you said in this channel from AWAI.\n"
            "`/awai backfill`: read this channel's earlier messages (people who manage messages)."
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
    digest: Digest, title: str, refs: Mapping[str, MessageRef]
) -> tuple[discord.Embed, list[discord.File]]:
    """The digest as one embed with its picture attached, and the full Markdown when it is cut.

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
    title = cut(title, TITLE_LIMIT)
    room = min(DESCRIPTION_LIMIT, MESSAGE_LIMIT - size(title))
    if size(text) > room:
        note = f"\n\n*Cut to fit: the whole digest is attached as {DIGEST_MARKDOWN}.*"
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
