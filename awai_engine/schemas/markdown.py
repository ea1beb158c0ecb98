"""The digest as Markdown: per speaker, their schemas with examples and what changed.

Plain CommonMark (headings, lists, emphasis, code spans), which Discord shows as is and the Slack
adapter can convert; schema numbers match the labels on the PNG.
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
    if change.kind in ("grown", "shrunk", "members changed") and change.previous_size is not None:
        return f"{change.kind} (was {change.previous_size})"
    return change.kind


def schema_lines(schema: DigestSchema) -> list[str]:
    changes = ", ".join(change_text(change) for change in schema.changes)
    head = (
        f"{schema.number}. **{escape(schema.summary)}** — {counted(schema.size, 'thought')}"
        f" · `{schema.schema_id}` v{schema.version}"
    )
    lines = [f"{head} · _{changes}_" if changes else head]
    lines.extend(
        f"    - “{escape(shorten(example.text, EXAMPLE_WIDTH))}” ({example.message_id})"
        for example in schema.examples
    )
    return lines


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
    lines = [f"# Schema digest: {escape(channel)}", "", f"_{when(created_at)}. {since}_", ""]
    if not speakers:
        lines.append("Nobody has said anything here yet.")
    for speaker in speakers:
        lines.append(
            f"## {escape(speaker.speaker_name)}: {counted(speaker.thoughts, 'thought')},"
            f" {counted(len(speaker.schemas), 'schema')}"
        )
        lines.append("")
        if not speaker.schemas:
            lines.append("No schema yet: no group of similar thoughts has formed.")
        for schema in speaker.schemas:
            lines.extend(schema_lines(schema))
        if speaker.schemas and speaker.unclustered:
            lines.append("")
            lines.append(f"_{counted(speaker.unclustered, 'thought')} in no schema._")
        if speaker.dissolved:
            lines.append("")
            lines.append("Dissolved since the previous digest:")
            lines.extend(
                f"- `{item.schema_id}` v{item.version} ({counted(item.size, 'thought')})"
                + (f": {escape(item.summary)}" if item.summary else "")
                for item in speaker.dissolved
            )
        lines.append("")
    if other_speakers:
        lines.append(f"_{other_speakers} less active speakers are not shown._")
        lines.append("")
    lines.append(
        "_Schemas are groups of what each person said in this channel, and only here: they are"
        " not a judgement of anyone beyond these words._"
    )
    return "\n".join(lines).rstrip() + "\n"
