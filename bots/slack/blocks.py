"""Readings, digests and notices → Block Kit messages within Slack's limits.

Slack's rules that shape this: a section's text is at most 3,000 characters, a message at most 50
blocks, a header 150 characters of plain text; text is mrkdwn, not Markdown; and every message
needs a plain-text ``text`` for notifications and screen readers. A long reading is cut into
several sections at line breaks; if it would still pass 50 blocks, the end is left out and the
reading says so. Every earlier message the reading uses is cited with its permalink. What the
language model writes may be Markdown, so it is converted; what people wrote is only escaped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from awai_engine.schemas.digest import Digest, DigestSchema, counted
from awai_engine.text import shorten
from awai_engine.values import MessageRef, Reading
from bots.layout import Link, Moment, Piece, Plain, Quiet, Section, Strong, layout, plain_text
from bots.slack import mrkdwn

MAX_BLOCKS = 50
MAX_SECTION_CHARS = 3000
MAX_HEADER_CHARS = 150
MAX_FALLBACK_CHARS = 3000
QUOTED_MESSAGE_CHARS = 1200
CITED_TEXT_CHARS = 300
EXAMPLE_CHARS = 140

Block = dict[str, Any]
PermalinkOf = Callable[[str, str | None], str]
"""(message id, thread root or None) → the message's permalink."""


@dataclass(frozen=True)
class SlackMessage:
    """What ``chat.postMessage`` / ``chat.update`` send: fallback text and blocks."""

    text: str
    blocks: list[Block] = field(default_factory=list)


def notice(text: str) -> SlackMessage:
    """A short message of one section (an error, a progress line, a confirmation)."""
    return SlackMessage(text=text, blocks=_fit(_sections(text)))


def reading_message(
    reading: Reading,
    permalink_of: PermalinkOf,
    extra_notes: tuple[str, ...] = (),
    details: bool = False,
    language: str | None = None,
) -> SlackMessage:
    """The Block Kit message of one reading, laid out by :mod:`bots.layout`, each earlier message
    cited by permalink. ``details`` adds the numbers (the Details modal shows them)."""
    shown = layout(reading, language=language, details=details)
    cite = _Citer(permalink_of)
    ref = shown.message
    blocks: list[Block] = [
        _header(shown.title),
        _context(f"{cite.ref(ref)} · {_date(ref)} · {mrkdwn.escape(shown.line)}"),
    ]
    blocks += _sections(mrkdwn.quote(shorten(shown.text, QUOTED_MESSAGE_CHARS)))
    for section in shown.sections:
        blocks += _section_blocks(section, cite)
    blocks += [_context(mrkdwn.escape(note)) for note in extra_notes]
    blocks.append(_context(mrkdwn.escape(shown.footer)))
    return SlackMessage(text=shorten(shown.plain_summary, MAX_FALLBACK_CHARS), blocks=_fit(blocks))


def _section_blocks(section: Section, cite: _Citer) -> list[Block]:
    """A section as Slack shows it: the headline in bold, notes as small print, the rest as
    titled sections whose quotations are mrkdwn quotes."""
    if section.kind == "notes":
        return [_context(_pieces(line.pieces, cite)) for line in section.lines]
    if section.kind == "meaning":  # the model's words, which may be Markdown
        body = "\n".join(mrkdwn.markdown_to_mrkdwn(plain_text(line)) for line in section.lines)
        return _sections(f"*{mrkdwn.escape(section.title or '')}*\n{body}")
    lines = []
    for line in section.lines:
        text = _pieces(line.pieces, cite)
        if section.kind == "headline" and not all(isinstance(p, Quiet) for p in line.pieces):
            text = f"*{text}*"
        lines.append(text)
        if line.quote:
            lines.append(mrkdwn.quote(shorten(line.quote, CITED_TEXT_CHARS)))
    if section.title:
        lines.insert(0, f"*{mrkdwn.escape(section.title)}*")
    return _sections("\n".join(lines))


def _pieces(pieces: tuple[Piece, ...], cite: _Citer) -> str:
    out = []
    for piece in pieces:
        match piece:
            case Strong(text):
                out.append(f"*{mrkdwn.escape(text)}*")
            case Quiet(text):
                out.append(f"_{mrkdwn.escape(text)}_" if text.strip(" ·") else mrkdwn.escape(text))
            case Link(ref, _):
                out.append(cite.ref(ref))
            case Moment():
                out.append(_moment(piece))
            case Plain(text):
                out.append(mrkdwn.escape(text))
    return "".join(out)


def digest_message(digest: Digest, permalink_of: PermalinkOf) -> SlackMessage:
    """The digest as Block Kit: per speaker their schemas, what changed, and linked examples.

    Built from the digest's values rather than its Markdown, so every example links to its
    message; the schema numbers match the labels of the digest's picture.
    """
    if digest.previous_at is None:
        since = "First digest of this channel."
    else:
        since = f"Changes since <!date^{int(digest.previous_at)}^{{date_short_pretty}}|the last digest>."
    blocks: list[Block] = [_header("Preconceptions digest"), _context(since)]
    if not digest.speakers:
        blocks += _sections("Nobody has said anything here yet.")
    for speaker in digest.speakers:
        head = (
            f"*{mrkdwn.escape(speaker.speaker_name)}*: {counted(speaker.thoughts, 'thought')},"
            f" {counted(len(speaker.schemas), 'preconception')}"
        )
        lines = [head]
        if not speaker.schemas:
            lines.append("_No preconception yet: nothing they said keeps coming back._")
        for schema in speaker.schemas:
            lines += _schema_lines(schema, permalink_of)
        if speaker.schemas and speaker.unclustered:
            lines.append(f"_{counted(speaker.unclustered, 'thought')} in no preconception._")
        for gone in speaker.dissolved:
            summary = mrkdwn.escape(gone.summary) if gone.summary else "a preconception"
            lines.append(f"~{summary}~ _no longer coming back (was {gone.size})_")
        blocks.append({"type": "divider"})
        blocks += _sections("\n".join(lines))
    if digest.other_speakers:
        blocks.append(
            _context(f"{counted(digest.other_speakers, 'less active speaker')} not shown.")
        )
    names = ", ".join(speaker.speaker_name for speaker in digest.speakers) or "nobody yet"
    text = shorten(f"Preconceptions digest of this channel: {names}.", MAX_FALLBACK_CHARS)
    return SlackMessage(text=text, blocks=_fit(blocks))


def _schema_lines(schema: DigestSchema, permalink_of: PermalinkOf) -> list[str]:
    changes = ", ".join(
        f"{change.kind} (was {change.previous_size})"
        if change.previous_size is not None and change.kind != "summary rewritten"
        else change.kind
        for change in schema.changes
    )
    head = f"{schema.number}. *{mrkdwn.escape(schema.summary)}* — {counted(schema.size, 'thought')}"
    lines = [f"{head} · _{changes}_" if changes else head]
    lines += [
        f"    • {mrkdwn.link(permalink_of(example.message_id, None), shorten(example.text, EXAMPLE_CHARS))}"
        for example in schema.examples
    ]
    return lines


class _Citer:
    """Links to earlier messages, with the speaker's name as the label."""

    def __init__(self, permalink_of: PermalinkOf) -> None:
        self._permalink_of = permalink_of

    def ref(self, ref: MessageRef) -> str:
        return mrkdwn.link(self._permalink_of(ref.message_id, ref.thread_root), ref.speaker_name)


def _date(ref: MessageRef) -> str:
    """A Slack date token: each reader sees the time in their own time zone."""
    seconds = int(ref.ts)
    return f"<!date^{seconds}^{{date_short_pretty}} {{time}}|{ref.message_id}>"


def _moment(moment: Moment) -> str:
    """An earlier message's day, in the reader's time zone ("yesterday", "Mar 3")."""
    when = moment.utc()
    if when is None:
        return ""
    return f"<!date^{int(moment.ts)}^{{date_short_pretty}}|{when:%Y-%m-%d}>"


def _header(text: str) -> Block:
    return {
        "type": "header",
        "text": {"type": "plain_text", "text": shorten(text, MAX_HEADER_CHARS), "emoji": True},
    }


def _section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _sections(text: str) -> list[Block]:
    return [_section(piece) for piece in mrkdwn.split(text, MAX_SECTION_CHARS)]


def _context(text: str) -> Block:
    piece = mrkdwn.split(text, MAX_SECTION_CHARS)[0] if text.strip() else "·"
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": piece}]}


def _fit(blocks: list[Block]) -> list[Block]:
    """At most 50 blocks: the tail is left out, and the last block says how much."""
    if len(blocks) <= MAX_BLOCKS:
        return blocks
    kept = blocks[: MAX_BLOCKS - 1]
    left_out = len(blocks) - len(kept)
    kept.append(
        _context(
            f"Slack shows at most {MAX_BLOCKS} blocks in a message; {left_out} more parts of"
            " this reading were left out."
        )
    )
    return kept
