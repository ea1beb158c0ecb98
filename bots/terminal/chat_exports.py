"""Saying what a file is when it is a whole JSON document rather than a transcript's lines.

Why: people reach for the export they already have: a Slack export's day file (a JSON array of
message objects with ``user``, ``ts`` and ``text``), DiscordChatExporter's JSON (one object whose
``messages`` each have an ``author`` and ``content``), or any array pretty-printed over many
lines. AWAI reads JSON Lines with ``id``, ``speaker``, ``text`` and ``ts``; telling such a file by
its shape, and giving the one command that converts it, saves the user a round of errors on every
line. Only the opening of the file decides that it is one document: a chat log whose lines start
with ``[09:00]`` is not an array.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

_OPENS_DOCUMENT = re.compile(r"\s*(?:\{\s*$|\[\s*(?:$|[\[{\"\]]))")
"""A line that can only open a JSON document spread over lines: ``{`` alone, or ``[`` alone or
followed by an object, array, string or ``]`` (``[12:00] Ana: hi`` is a log line, not JSON)."""

_SLACK = (
    '.[] | select(.type == "message" and (.subtype | not)) | {id: .ts,'
    ' speaker: ((.user_profile.display_name | select(. != "")) // .user_profile.real_name // .user),'
    " speaker_id: .user, text, ts: (.ts | tonumber)}"
    " + (if .thread_ts and .thread_ts != .ts then {thread: .thread_ts} else {} end)"
)
_DISCORD = (
    ".messages[] | {id, speaker: (.author.nickname // .author.name), speaker_id: .author.id,"
    " text: .content, ts: .timestamp}"
)
_ARRAY = ".[]"


def opens_document(line: str) -> bool:
    """Whether the first non-blank line of a file opens one JSON document over many lines, or
    is a whole JSON array on one line."""
    if _OPENS_DOCUMENT.match(line):
        return True
    stripped = line.strip()
    if not stripped.startswith("["):
        return False
    try:
        return isinstance(json.loads(stripped), list)
    except ValueError:
        return False


def document_advice(path: Path) -> str:
    """What the JSON document at ``path`` is and the ``jq`` command that makes it a transcript.

    The file is read whole only here, on the way to an error, and only when it is within the
    transcript size limit the caller already checked."""
    kind, program = _kind(path)
    out = f"{path.stem}-lines.jsonl"
    command = f"jq -c {shlex.quote(program)} {shlex.quote(path.name)} > {shlex.quote(out)}"
    return (
        f"{path} is {kind}; AWAI reads JSON Lines, one message object per line with id,"
        f" speaker, text and ts (convert it with: {command})."
    )


def line_advice(record: object) -> str | None:
    """For one parsed line that is a Slack export's message object (it has ``user`` and ``ts``
    but no ``id`` or ``speaker``), how to convert the export; ``None`` for any other line."""
    if (
        not isinstance(record, dict)
        or "id" in record
        or "speaker" in record
        or not {"user", "ts"} <= record.keys()
    ):
        return None
    return (
        "this is a Slack export's message (user, ts, text), not a transcript line (id, speaker,"
        f" text, ts); convert the export's day files with: jq -c {shlex.quote(_SLACK)} DAY.json"
    )


def _kind(path: Path) -> tuple[str, str]:
    """A name for the document's shape and the ``jq`` program that turns it into lines."""
    try:
        with path.open("rb") as handle:
            document = json.load(handle)
    except (OSError, ValueError, RecursionError):
        return "one JSON document spread over many lines (and not valid JSON as a whole)", _ARRAY
    if isinstance(document, dict):
        messages = document.get("messages")
        if isinstance(messages, list) and _all_have(messages, "author", "content"):
            return "a DiscordChatExporter JSON export", _DISCORD
        return "one JSON object spread over many lines", _ARRAY
    slack = isinstance(document, list) and _all_have(document, "user", "ts")
    if slack and not _all_have(document, "id"):
        return "a Slack export's day file (a JSON array of messages)", _SLACK
    return "a JSON array", _ARRAY


def _all_have(items: list[object], *keys: str) -> bool:
    """Whether the first items (a few suffice to tell a shape) are objects with ``keys``."""
    head = items[:5]
    return bool(head) and all(isinstance(item, dict) and set(keys) <= item.keys() for item in head)
