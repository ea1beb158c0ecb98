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
from awai_engine.values import MessageRef, Reading, ReadingContext
from bots.labels import labels_for, recall_reason
from bots.slack import mrkdwn

MAX_BLOCKS = 50
MAX_SECTION_CHARS = 3000
MAX_HEADER_CHARS = 150
MAX_FALLBACK_CHARS = 3000
QUOTED_MESSAGE_CHARS = 1200
CITED_TEXT_CHARS = 300
EXAMPLE_CHARS = 140
OFFLINE_BACKEND = "offline"

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
    reading: Reading, permalink_of: PermalinkOf, extra_notes: tuple[str, ...] = ()
) -> SlackMessage:
    """The Block Kit message of one reading, citing each earlier message by permalink."""
    words = labels_for(reading.language)
    context = reading.context
    cite = _Citer(context, permalink_of)
    blocks: list[Block] = [_header(words["reading"])]
    blocks += _sections(_message_part(context, cite, words))
    if reading.interpretation:
        interpretation = reading.interpretation
        blocks += _sections(
            f"*{mrkdwn.escape(words['interpretation'])}*\n"
            + mrkdwn.markdown_to_mrkdwn(interpretation.meaning)
        )
        if interpretation.links:
            lines = [
                f"• {link.thought_index + 1}. _{mrkdwn.escape(link.relation)}_"
                f" {cite.link(link.message_id)}: {mrkdwn.markdown_to_mrkdwn(link.explanation)}"
                for link in interpretation.links
            ]
            blocks += _sections(_titled(words["links"], lines))
        if interpretation.schema_bearings:
            lines = [
                f"• {mrkdwn.escape(bearing.schema_id)} · {mrkdwn.escape(words.get(bearing.stance, bearing.stance))}:"
                f" {mrkdwn.markdown_to_mrkdwn(bearing.explanation)}"
                for bearing in interpretation.schema_bearings
            ]
            blocks += _sections(_titled(words["bearings"], lines))
    thoughts = [f"{t.index + 1}. {mrkdwn.escape(t.text)}" for t in context.thoughts]
    blocks += _sections(_titled(words["thoughts"], thoughts))
    blocks += _sections(_flow_part(context, cite, words))
    blocks += _sections(_association_part(context, cite, words))
    if context.schemas:
        lines = []
        for schema in context.schemas:
            stance = words.get(schema.stance, schema.stance)
            reason = f" — {mrkdwn.escape(schema.stance_reason)}" if schema.stance_reason else ""
            lines.append(
                f"• {mrkdwn.escape(schema.summary)} ({schema.size}, v{schema.version}) ·"
                f" _{mrkdwn.escape(stance)}_{reason}"
            )
        blocks += _sections(_titled(words["schemas"], lines))
    # The engine's English "no language model" note is shown as the label in the reading's own
    # language; a model that failed explains itself in its own note.
    notes = [*context.notes, *(n for n in reading.notes if not n.startswith("Offline reading"))]
    if reading.offline and reading.backend == OFFLINE_BACKEND:
        notes.insert(0, words["offline"])
    notes += extra_notes
    blocks += [_context(mrkdwn.escape(note)) for note in notes]
    blocks.append(_context(mrkdwn.escape(words["limits"])))
    return SlackMessage(text=_fallback(reading), blocks=_fit(blocks))


def digest_message(digest: Digest, permalink_of: PermalinkOf) -> SlackMessage:
    """The digest as Block Kit: per speaker their schemas, what changed, and linked examples.

    Built from the digest's values rather than its Markdown, so every example links to its
    message; the schema numbers match the labels of the digest's picture.
    """
    if digest.previous_at is None:
        since = "First digest of this channel."
    else:
        since = f"Changes since <!date^{int(digest.previous_at)}^{{date_short_pretty}}|the last digest>."
    blocks: list[Block] = [_header("Schema digest"), _context(since)]
    if not digest.speakers:
        blocks += _sections("Nobody has said anything here yet.")
    for speaker in digest.speakers:
        head = (
            f"*{mrkdwn.escape(speaker.speaker_name)}*: {counted(speaker.thoughts, 'thought')},"
            f" {counted(len(speaker.schemas), 'schema')}"
        )
        lines = [head]
        if not speaker.schemas:
            lines.append("_No schema yet: no group of similar thoughts has formed._")
        for schema in speaker.schemas:
            lines += _schema_lines(schema, permalink_of)
        if speaker.schemas and speaker.unclustered:
            lines.append(f"_{counted(speaker.unclustered, 'thought')} in no schema._")
        for gone in speaker.dissolved:
            summary = mrkdwn.escape(gone.summary) if gone.summary else f"`{gone.schema_id}`"
            lines.append(f"~{summary}~ _dissolved (was {gone.size})_")
        blocks.append({"type": "divider"})
        blocks += _sections("\n".join(lines))
    if digest.other_speakers:
        blocks.append(
            _context(f"{counted(digest.other_speakers, 'less active speaker')} not shown.")
        )
    names = ", ".join(speaker.speaker_name for speaker in digest.speakers) or "nobody yet"
    text = shorten(f"Schema digest of this channel: {names}.", MAX_FALLBACK_CHARS)
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
    """Links to the messages a reading may cite, with the speaker's name as the label."""

    def __init__(self, context: ReadingContext, permalink_of: PermalinkOf) -> None:
        self._permalink_of = permalink_of
        refs = [context.message, *(item.message for item in context.flow.earlier)]
        if context.flow.previous:
            refs.append(context.flow.previous.message)
        refs += [item.source for item in context.associations]
        self._refs = {ref.message_id: ref for ref in refs}

    def url(self, ref: MessageRef) -> str:
        return self._permalink_of(ref.message_id, ref.thread_root)

    def ref(self, ref: MessageRef) -> str:
        return mrkdwn.link(self.url(ref), ref.speaker_name)

    def link(self, message_id: str) -> str:
        ref = self._refs.get(message_id)
        if ref is None:
            return mrkdwn.link(self._permalink_of(message_id, None), "message")
        return self.ref(ref)


def _message_part(context: ReadingContext, cite: _Citer, words: dict[str, str]) -> str:
    ref = context.message
    when = _date(ref)
    line = words[context.flow.line]
    quoted = mrkdwn.quote(shorten(context.text, QUOTED_MESSAGE_CHARS))
    return f"*{cite.ref(ref)}* · {when} · {mrkdwn.escape(line)}\n{quoted}"


def _flow_part(context: ReadingContext, cite: _Citer, words: dict[str, str]) -> str:
    flow = context.flow
    title = f"{words['flow']} · {words[flow.line]}"
    if not flow.previous and not flow.earlier:
        return _titled(title, [f"_{mrkdwn.escape(words['nothing_before'])}_"])
    lines = [
        f"• {cite.ref(item.message)} ({words['earlier']}):"
        f" {mrkdwn.escape(shorten(item.summary, CITED_TEXT_CHARS))}"
        for item in flow.earlier
    ]
    if flow.previous:
        said = " / ".join(thought.text for thought in flow.previous.thoughts)
        lines.append(
            f"• {cite.ref(flow.previous.message)} (*{mrkdwn.escape(words['previous'])}*):"
            f" {mrkdwn.escape(shorten(said, CITED_TEXT_CHARS))}"
        )
    return _titled(title, lines)


def _association_part(context: ReadingContext, cite: _Citer, words: dict[str, str]) -> str:
    if not context.associations:
        return _titled(words["associations"], [f"_{mrkdwn.escape(words['no_associations'])}_"])
    lines = []
    for item in context.associations:
        mark = f" ★ _{mrkdwn.escape(words['important'])}_" if item.important else ""
        reason = recall_reason(item, words)
        why = (
            f"{words['similarity']} {item.similarity:.2f} ({words['threshold']} {item.threshold:.2f})"
            if reason is None
            else f"_{mrkdwn.escape(reason)}_ · {words['similarity']} {item.similarity:.2f}"
        )
        lines.append(
            f"• {cite.ref(item.source)}{mark} · {item.distance + 1} {words['distance']} · {why}"
            f" · {words['activation']} {item.activation:.2f}\n"
            f"   {mrkdwn.escape(shorten(item.thought.text, CITED_TEXT_CHARS))}"
        )
    return _titled(words["associations"], lines)


def _date(ref: MessageRef) -> str:
    """A Slack date token: each reader sees the time in their own time zone."""
    seconds = int(ref.ts)
    return f"<!date^{seconds}^{{date_short_pretty}} {{time}}|{ref.message_id}>"


def _titled(title: str, lines: list[str]) -> str:
    return "\n".join([f"*{mrkdwn.escape(title)}*", *lines])


def _fallback(reading: Reading) -> str:
    context = reading.context
    name = context.message.speaker_name
    if reading.interpretation:
        body = reading.interpretation.meaning
    else:
        body = " · ".join(thought.text for thought in context.thoughts)
    return shorten(f"Reading of {name}'s message: {body}", MAX_FALLBACK_CHARS)


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
