"""The digest as Markdown: per speaker, their preconceptions with examples and what changed.

Plain CommonMark (headings, lists, emphasis), which Discord shows as is and the Slack adapter can
convert. People read it, so it names preconceptions by their names and says "preconception"
(思い込み in a Japanese channel), never an internal id or "schema" (ids stay in the values, for
adapters and ``awai schemas``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from awai_engine.schemas.digest import DigestSchema, SchemaChange, SpeakerDigest
from awai_engine.schemas.wording import counted, words_for
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


def change_text(change: SchemaChange, words: dict[str, str]) -> str:
    said = words[f"change:{change.kind}"]
    if change.kind not in ("grown", "shrunk"):
        return said
    if change.previous_messages is not None:  # the digest's unit, as its picture's
        return words["was"].format(
            change=said, was=counted(words, "message", change.previous_messages)
        )
    if change.previous_size is not None:  # a snapshot from before messages were recorded
        return words["was"].format(change=said, was=counted(words, "thought", change.previous_size))
    return said


def schema_lines(schema: DigestSchema, words: dict[str, str], number: int) -> list[str]:
    """A preconception's lines; ``number`` is its place among its speaker's (numbering starts
    again under each speaker, as a reader counts a person's preconceptions)."""
    changes = ", ".join(change_text(change, words) for change in schema.changes)
    came_back = words["came_back"].format(
        messages=counted(words, "message", schema.messages),
        thoughts=counted(words, "thought", schema.size),
    )
    head = f"{number}. **{escape(schema.summary)}** — {came_back}"
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
    title: str,
    created_at: float,
    previous_at: float | None,
    speakers: Sequence[SpeakerDigest],
    other_speakers: int,
    language: str = "en",
) -> str:
    """The digest of the channel people know as ``title``, as Markdown in ``language`` (the
    channel's, see :mod:`.wording`)."""
    words = words_for(language)
    stamp = (
        words["stamp_since"].format(when=when(created_at), previous=when(previous_at))
        if previous_at is not None
        else words["stamp_first"].format(when=when(created_at))
    )
    lines = [f"# {words['title'].format(channel=escape(title))}", "", f"_{stamp}_", ""]
    if not speakers:
        lines.append(words["nobody"])
    for speaker in speakers:
        head = words["speaker_head"].format(
            name=escape(speaker.speaker_name),
            messages=counted(words, "message", speaker.messages),
            preconceptions=counted(words, "preconception", len(speaker.schemas)),
        )
        lines += [f"## {head}", ""]
        if not speaker.schemas:
            lines.append(words["no_preconception"])
        for number, schema in enumerate(speaker.schemas, start=1):
            lines.extend(schema_lines(schema, words, number))
        if speaker.schemas and speaker.unclustered:
            unclustered = counted(words, "message", speaker.unclustered)
            lines += ["", f"_{words['unclustered'].format(messages=unclustered)}_"]
        if speaker.dissolved:
            lines += ["", words["dissolved"]]
            lines.extend(
                f"- {escape(item.summary) if item.summary else words['a_preconception']}"
                f" ({counted(words, 'thought', item.size)})"
                for item in speaker.dissolved
            )
        lines.append("")
    if other_speakers:
        lines += [f"_{words['others'].format(n=other_speakers)}_", ""]
    lines.append(f"_{words['disclaimer']}_")
    return "\n".join(lines).rstrip() + "\n"
