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

_SLACK_MESSAGE = (
    'select(.type == "message" and (.subtype | not)) | {id: .ts,'
    ' speaker: ((.user_profile.display_name | select(. != "")) // .user_profile.real_name // .user),'
    " speaker_id: .user, text, ts: (.ts | tonumber)}"
    " + (if .thread_ts and .thread_ts != .ts then {thread: .thread_ts} else {} end)"
)
"""One Slack export message object as a transcript line (nothing for a join or a bot's post)."""
_SLACK = f".[] | {_SLACK_MESSAGE}"
_DISCORD = (
    ".messages[] | {id, speaker: (.author.nickname // .author.name), speaker_id: .author.id,"
    " text: .content, ts: .timestamp}"
)
_ARRAY = ".[]"
_DISCORD_KEYS = re.compile(r'"messages"\s*:\s*\[')
HEAD_BYTES = 1 << 20
"""How much of a document is read to tell its shape: the first messages show it, and an error
path must not hold a file of hundreds of megabytes in memory."""


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

    Only the file's first :data:`HEAD_BYTES` are read, on the way to an error."""
    kind, program = _kind(path)
    out = f"{path.stem}-lines.jsonl"
    command = f"jq -c {shlex.quote(program)} {shlex.quote(path.name)} > {shlex.quote(out)}"
    return (
        f"{path} is {kind}; AWAI reads JSON Lines, one message object per line with id,"
        f" speaker, text and ts. Convert it with:\n    {command}"
    )


def line_advice(record: object, path: Path) -> str | None:
    """For one parsed line that is a Slack export's message object (it has ``user`` and ``ts``
    but no ``id`` or ``speaker``), the command that converts the file of such lines at ``path``;
    ``None`` for any other line."""
    if not isinstance(record, dict) or "id" in record or "speaker" in record:
        return None
    if not {"user", "ts"} <= record.keys():
        return None
    out = f"{path.stem}-lines.jsonl"
    command = f"jq -c {shlex.quote(_SLACK_MESSAGE)} {shlex.quote(path.name)} > {shlex.quote(out)}"
    return (
        "this is a Slack export's message (user, ts, text), not a transcript line (id, speaker,"
        f" text, ts). Convert the file with:\n    {command}"
    )


def _kind(path: Path) -> tuple[str, str]:
    """A name for the document's shape and the ``jq`` program that turns it into lines, told
    from the file's first :data:`HEAD_BYTES` (its first message object, or the export's keys)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return "one JSON document spread over many lines", _ARRAY
    opening = head.lstrip()
    if opening.startswith("{"):
        if _DISCORD_KEYS.search(head) and '"author"' in head and '"content"' in head:
            return "a DiscordChatExporter JSON export", _DISCORD
        return "one JSON object spread over many lines", _ARRAY
    first = _first_element(opening)
    if isinstance(first, dict) and {"user", "ts"} <= first.keys() and "id" not in first:
        return "a Slack export's day file (a JSON array of messages)", _SLACK
    return "a JSON array", _ARRAY


def _first_element(array: str) -> object:
    """The first value of the JSON array that ``array`` opens, if it can be read from it."""
    rest = array[1:].lstrip()
    try:
        value, _ = json.JSONDecoder().raw_decode(rest)
    except (ValueError, RecursionError):
        return None
    return value
