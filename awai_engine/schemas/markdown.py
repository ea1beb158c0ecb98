"""The digest as Markdown: per speaker, their preconceptions with examples and what changed.

Plain CommonMark (headings, lists, emphasis), which Discord shows as is and the Slack adapter can
convert. People read it, so it names preconceptions by their names and says "preconception",
never an internal id or "schema" (ids stay in the values, for adapters and ``awai schemas``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from awai_engine.schemas.digest import DigestSchema, SchemaChange, SpeakerDigest, counted
from awai_engine.text import shorten

EXAMPLE_WIDTH = 140


def when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")


def escape(text: str) -> str:
    """Text on one line with Markdown's active characters escaped."""
    text = " ".join(text.split())
    for char in "\\`*_[]<>#|~":
        text = text.replace(char, "\\" + char)
    return text


def change_text(change: SchemaChange) -> str:
    if change.kind in ("grown", "shrunk") and change.previous_size is not None:
        return f"{change.kind} (was {counted(change.previous_size, 'thought')})"
    if change.kind == "members changed":
        return "reshaped"
    if change.kind == "summary rewritten":
        return "renamed"
    return change.kind


def schema_lines(schema: DigestSchema) -> list[str]:
    changes = ", ".join(change_text(change) for change in schema.changes)
    head = (
        f"{schema.number}. **{escape(schema.summary)}** — came back in"
        f" {counted(schema.messages, 'message')} ({counted(schema.size, 'thought')})"
    )
    lines = [f"{head} · _{changes}_" if changes else head]
    lines.extend(
        f"    - “{escape(shorten(example.text, EXAMPLE_WIDTH))}” ({example.message_id})"
        for example in schema.examples
    )
    return lines


def channel_title(channel: str) -> str:
    """The channel's own name from its key (``platform:workspace:channel``)."""
    return channel.rsplit(":", 1)[-1]


def render_markdown(
    channel: str,
    created_at: float,
    previous_at: float | None,
    speakers: Sequence[SpeakerDigest],
    other_speakers: int,
) -> str:
    since = (
        f"Changes since the previous digest of {when(previous_at)}."
        if previous_at is not None
        else "First digest of this channel."
    )
    title = f"# Preconceptions in {escape(channel_title(channel))}"
    lines = [title, "", f"_{when(created_at)}. {since}_", ""]
    if not speakers:
        lines.append("Nobody has said anything here yet.")
    for speaker in speakers:
        lines.append(
            f"## {escape(speaker.speaker_name)}: {counted(speaker.thoughts, 'thought')},"
            f" {counted(len(speaker.schemas), 'preconception')}"
        )
        lines.append("")
        if not speaker.schemas:
            lines.append("No preconception yet: nothing they said keeps coming back.")
        for schema in speaker.schemas:
            lines.extend(schema_lines(schema))
        if speaker.schemas and speaker.unclustered:
            lines.append("")
            lines.append(f"_{counted(speaker.unclustered, 'thought')} in no preconception._")
        if speaker.dissolved:
            lines.append("")
            lines.append("No longer coming back since the previous digest:")
            lines.extend(
                f"- {escape(item.summary) if item.summary else 'a preconception'}"
                f" ({counted(item.size, 'thought')})"
                for item in speaker.dissolved
            )
        lines.append("")
    if other_speakers:
        lines.append(f"_{other_speakers} less active speakers are not shown._")
        lines.append("")
    lines.append(
        "_Preconceptions are groups of what each person said in this channel, and only here:"
        " they are not a judgement of anyone beyond these words._"
    )
    return "\n".join(lines).rstrip() + "\n"
