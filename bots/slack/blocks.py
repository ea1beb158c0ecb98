"""Readings, digests and notices → Block Kit messages within Slack's limits.

Slack's rules that shape this: a section's text is at most 3,000 characters, a message at most 50
blocks, a header 150 characters of plain text; text is mrkdwn, not Markdown; and every message
needs a plain-text ``text`` for notifications and screen readers. A long reading is cut into
several sections at line breaks; if it would still pass 50 blocks, the end is left out and the
reading says so. Every earlier message the reading uses is cited with its permalink. What the
language model writes may be Markdown, so it is converted; what people wrote is only escaped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from awai_engine.schemas.digest import Digest, DigestSchema
from awai_engine.schemas.markdown import change_text
from awai_engine.schemas.wording import counted as counted_words
from awai_engine.schemas.wording import words_for
from awai_engine.text import shorten, shorten_keeping_lines
from awai_engine.values import MessageRef, Reading
from bots.labels import labels_for
from bots.layout import (
    Link,
    Moment,
    ReadingLayout,
    Section,
    layout,
    marked,
    moment_in_utc,
    plain_text,
    unbounded,
    wrapped,
)
from bots.slack import mrkdwn

MAX_BLOCKS = 50
MAX_SECTION_CHARS = 3000
MAX_HEADER_CHARS = 150
MAX_FALLBACK_CHARS = 3000
QUOTED_MESSAGE_CHARS = 1200
QUOTED_MESSAGE_LINES = 12
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


SHARE_ACTION = "awai_share_reading"
DETAILS_ACTION = "awai_reading_details"
SHARED_LINK_ACTION = "awai_shared_reading_link"
MAX_MODAL_BLOCKS = 100
MAX_MODAL_TITLE_CHARS = 24


@dataclass(frozen=True)
class ReadingTarget:
    """The message a reading's buttons act on, carried in each button's ``value``."""

    channel_id: str
    ts: str
    thread_ts: str | None = None

    def value(self) -> str:
        return json.dumps({"c": self.channel_id, "ts": self.ts, "t": self.thread_ts})

    @classmethod
    def from_value(cls, value: str) -> ReadingTarget:
        """The target a button named; ``ValueError`` for a value AWAI did not write."""
        try:
            data = json.loads(value)
            return cls(channel_id=str(data["c"]), ts=str(data["ts"]), thread_ts=data.get("t"))
        except (TypeError, KeyError, json.JSONDecodeError) as error:
            raise ValueError(f"not an AWAI reading button: {value!r}") from error


def reading_message(
    reading: Reading,
    permalink_of: PermalinkOf,
    details: bool = False,
    language: str | None = None,
    target: ReadingTarget | None = None,
    shared_by: str | None = None,
    shared_at: str | None = None,
) -> SlackMessage:
    """The Block Kit message of one reading, laid out by :mod:`bots.layout`, each earlier message
    cited by permalink. ``details`` adds the numbers (the Details modal shows them); ``target``
    adds the Share and Details buttons of a private reading; ``shared_by`` (a user id) says who
    shared a reading posted for the channel; ``shared_at`` (a permalink) replaces Share with a
    link to the message's one shared reading when someone already shared it."""
    shown = layout(reading, language=language, details=details)
    blocks = _reading_blocks(shown, permalink_of)
    if shared_by is not None:
        blocks.insert(1, _context(shown.words["shared_by"].format(who=f"<@{shared_by}>")))
    if target is not None:
        blocks = [*_fit(blocks, MAX_BLOCKS - 1), _actions(shown, target, shared_at)]
    return SlackMessage(text=shorten(shown.plain_summary, MAX_FALLBACK_CHARS), blocks=_fit(blocks))


def details_view(
    reading: Reading, permalink_of: PermalinkOf, language: str | None = None
) -> dict[str, Any]:
    """The Details modal: the whole reading with the numbers behind every connection."""
    shown = layout(reading, language=language, details=True)
    return _modal(shown.words["details"], _reading_blocks(shown, permalink_of))


def details_placeholder() -> dict[str, Any]:
    """The Details modal while its reading is made (a modal must open within three seconds)."""
    return _modal("Details", [_context("Reading… :hourglass_flowing_sand:")])


def details_notice(text: str) -> dict[str, Any]:
    """The Details modal when the reading cannot be shown: why, in one sentence."""
    return _modal("Details", _sections(mrkdwn.escape(text)))


def _modal(title: str, blocks: list[Block]) -> dict[str, Any]:
    return {
        "type": "modal",
        "title": {"type": "plain_text", "text": shorten(title, MAX_MODAL_TITLE_CHARS)},
        "close": {"type": "plain_text", "text": "OK"},
        "blocks": _fit(blocks, MAX_MODAL_BLOCKS),
    }


def _reading_blocks(shown: ReadingLayout, permalink_of: PermalinkOf) -> list[Block]:
    cite = _Citer(permalink_of)
    ref = shown.message
    blocks: list[Block] = [
        _header(shown.title),
        _context(
            " · ".join(
                part for part in (cite.ref(ref), _date(ref), mrkdwn.escape(shown.line)) if part
            )
        ),
    ]
    blocks += _sections(
        mrkdwn.quote(shorten_keeping_lines(shown.text, QUOTED_MESSAGE_CHARS, QUOTED_MESSAGE_LINES))
    )
    for section in shown.sections:
        blocks += _section_blocks(section, cite)
    blocks.append(_context(mrkdwn.escape(shown.footer)))
    return blocks


def _actions(shown: ReadingLayout, target: ReadingTarget, shared_at: str | None) -> Block:
    """Share (or, once shared, a link to the shared reading) and Details."""
    words = shown.words
    value = target.value()
    share: Block = {
        "type": "button",
        "action_id": SHARE_ACTION,
        "text": {"type": "plain_text", "text": words["share"]},
        "value": value,
        "style": "primary",
    }
    if shared_at is not None:
        share = {
            "type": "button",
            "action_id": SHARED_LINK_ACTION,
            "text": {"type": "plain_text", "text": words["see_shared"]},
            "url": shared_at,
        }
    return {
        "type": "actions",
        "elements": [
            share,
            {
                "type": "button",
                "action_id": DETAILS_ACTION,
                "text": {"type": "plain_text", "text": words["details"]},
                "value": value,
            },
        ],
    }


def _section_blocks(section: Section, cite: _Citer) -> list[Block]:
    """A section as Slack shows it: the headline in bold, notes as small print, the rest as
    titled sections whose quotations are mrkdwn quotes."""
    if section.kind == "notes":
        return [_context(marked(line.pieces, cite)) for line in section.lines]
    if section.kind == "meaning":  # the model's words, which may be Markdown
        body = "\n".join(mrkdwn.markdown_to_mrkdwn(plain_text(line)) for line in section.lines)
        return _sections(f"*{mrkdwn.escape(section.title or '')}*\n{body}")
    lines = []
    for line in section.lines:
        lines.append(marked(line.pieces, cite, bold=section.kind == "headline"))
        if line.quote:
            lines.append(mrkdwn.quote(shorten(line.quote, CITED_TEXT_CHARS)))
    if section.title:
        lines.insert(0, f"*{mrkdwn.escape(section.title)}*")
    return _sections("\n".join(lines))


def _wrapped(text: str, mark: str) -> str:
    return unbounded(wrapped(text, mark, mrkdwn.escape, mrkdwn.BOUNDARY), mrkdwn.BOUNDARY)


def digest_message(digest: Digest, permalink_of: PermalinkOf) -> SlackMessage:
    """The digest as Block Kit, in the channel's language: per speaker their preconceptions,
    what changed, and linked examples.

    Built from the digest's values rather than its Markdown, so every example links to its
    message; the numbers match the labels of the digest's picture, and the words are the
    Markdown's own (:mod:`awai_engine.schemas.wording`), so the two never disagree.
    """
    words, labels = words_for(digest.language), labels_for(digest.language)
    if digest.previous_at is None:
        since = labels["digest:first"]
    else:
        last = (
            f"<!date^{int(digest.previous_at)}^{{date_short_pretty}}|{labels['digest:the_last']}>"
        )
        since = labels["digest:since"].format(since=last)
    blocks: list[Block] = [_header(labels["digest:header"]), _context(since)]
    if not digest.speakers:
        blocks += _sections(mrkdwn.escape(words["nobody"]))
    for speaker in digest.speakers:
        head = words["speaker_head"].format(
            name=f"*{mrkdwn.escape(speaker.speaker_name)}*",
            messages=counted_words(words, "message", speaker.messages),
            preconceptions=counted_words(words, "preconception", len(speaker.schemas)),
        )
        lines = [head]
        if not speaker.schemas:
            lines.append(_wrapped(words["no_preconception"], "_"))
        for number, schema in enumerate(speaker.schemas, start=1):  # counted again per speaker
            lines += _schema_lines(schema, number, words, labels, permalink_of)
        if speaker.schemas and speaker.unclustered:
            unclustered = counted_words(words, "message", speaker.unclustered)
            lines.append(_wrapped(words["unclustered"].format(messages=unclustered), "_"))
        for gone in speaker.dissolved:
            summary = mrkdwn.escape(gone.summary or words["a_preconception"])
            was = counted_words(words, "thought", gone.size)
            lines.append(f"~{summary}~ {_wrapped(labels['digest:no_longer'].format(was=was), '_')}")
        blocks.append({"type": "divider"})
        blocks += _sections("\n".join(lines))
    if digest.other_speakers:
        blocks.append(_context(mrkdwn.escape(words["others"].format(n=digest.other_speakers))))
    names = labels["list_comma"].join(speaker.speaker_name for speaker in digest.speakers)
    fallback = labels["digest:fallback"].format(names=names or labels["digest:nobody"])
    return SlackMessage(text=shorten(fallback, MAX_FALLBACK_CHARS), blocks=_fit(blocks))


def _schema_lines(
    schema: DigestSchema,
    number: int,
    words: dict[str, str],
    labels: dict[str, str],
    permalink_of: PermalinkOf,
) -> list[str]:
    changes = labels["list_comma"].join(change_text(change, words) for change in schema.changes)
    came_back = words["came_back"].format(
        messages=counted_words(words, "message", schema.messages),
        thoughts=counted_words(words, "thought", schema.size),
    )
    head = f"{number}. *{mrkdwn.escape(schema.summary)}* — {mrkdwn.escape(came_back)}"
    lines = [f"{head} · {_wrapped(changes, '_')}" if changes else head]
    lines += [
        f"    • {mrkdwn.link(permalink_of(example.message_id, None), shorten(example.text, EXAMPLE_CHARS))}"
        for example in schema.examples
    ]
    return lines


class _Citer:
    """Slack's mrkdwn for a reading's lines (:func:`bots.layout.marked`), each earlier message
    linked by its permalink with the speaker's name as the label."""

    strong, quiet, boundary = "*", "_", mrkdwn.BOUNDARY

    def __init__(self, permalink_of: PermalinkOf) -> None:
        self._permalink_of = permalink_of

    def escape(self, text: str) -> str:
        return mrkdwn.escape(text)

    def ref(self, ref: MessageRef) -> str:
        return mrkdwn.link(self._permalink_of(ref.message_id, ref.thread_root), ref.speaker_name)

    def link(self, link: Link) -> str:
        ref = link.ref
        return mrkdwn.link(self._permalink_of(ref.message_id, ref.thread_root), link.text)

    def moment(self, moment: Moment) -> str:
        return _moment(moment)


def _date(ref: MessageRef) -> str:
    """A Slack date token: each reader sees the time in their own time zone; a client that
    cannot show the token shows its fallback, the time in UTC. Nothing for a transcript
    without times."""
    when = moment_in_utc(ref.ts)
    if when is None:
        return ""
    return f"<!date^{int(ref.ts)}^{{date_short_pretty}} {{time}}|{when:%Y-%m-%d %H:%M} UTC>"


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


def _fit(blocks: list[Block], limit: int = MAX_BLOCKS) -> list[Block]:
    """At most ``limit`` blocks (50 in a message, 100 in a modal): the tail is left out, and the
    last block says how much."""
    if len(blocks) <= limit:
        return blocks
    kept = blocks[: limit - 1]
    left_out = len(blocks) - len(kept)
    kept.append(
        _context(
            f"Slack shows at most {limit} blocks here; {left_out} more parts of this reading"
            " were left out."
        )
    )
    return kept
