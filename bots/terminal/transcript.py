"""The transcript format: JSON Lines, one message per line.

Fields: ``id`` (string), ``speaker``, ``text``, optional ``ts`` (ISO 8601 or epoch seconds; a line
without one keeps the previous line's time, so file order decides), optional ``thread`` (id of the
thread's root message), optional ``speaker_id`` (the platform's id of the speaker, when it is not
the display name). Problems are reported with their line number and the other lines are kept.
:func:`transcript_line` writes the same format (``awai export``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from awai_engine.errors import AwaiError
from awai_engine.text import without_honorific
from awai_engine.values import Utterance

_MENTION = re.compile(r"@([\w.\-]+)")
_ADDRESS = re.compile(r"^\s*([\w.\-]+)\s*[:,、，：]")


@dataclass(frozen=True)
class LineProblem:
    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass
class Transcript:
    channel: str
    utterances: list[Utterance] = field(default_factory=list)
    problems: list[LineProblem] = field(default_factory=list)


class TranscriptError(AwaiError, ValueError):
    """The file cannot be read as a transcript at all (missing, too large, not text)."""


def channel_key(name: str) -> str:
    """The channel key of a terminal channel: ``terminal:local:<name>``."""
    return name if name.count(":") >= 2 else f"terminal:local:{name}"


def parse_ts(value: object) -> float:
    """Seconds since the epoch from a number, a numeric string, or an ISO 8601 string."""
    if isinstance(value, bool):
        raise ValueError("ts must be a time, not true/false")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            if moment.tzinfo is None:
                raise ValueError(f"ts {value!r} has no time zone") from None
            return moment.timestamp()
    raise ValueError(f"ts must be ISO 8601 or epoch seconds, not {type(value).__name__}")


def read_transcript(path: Path, channel: str, max_bytes: int) -> Transcript:
    """Parse a transcript file; malformed lines are reported, never fatal to the others."""
    try:
        size = path.stat().st_size
    except OSError as error:
        raise TranscriptError(f"Cannot read {path}: {error.strerror or error}") from None
    if size > max_bytes:
        raise TranscriptError(
            f"{path} is {size:,} bytes; the limit is {max_bytes:,} (AWAI_LIMITS__MAX_TRANSCRIPT_BYTES)."
        )
    transcript = Transcript(channel=channel_key(channel))
    seen: dict[str, int] = {}
    speakers: set[str] = set()
    last_ts = 0.0
    for number, raw in _lines(path):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            transcript.problems.append(LineProblem(number, "not UTF-8 text"))
            continue
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            transcript.problems.append(LineProblem(number, f"not valid JSON ({error.msg})"))
            continue
        try:
            utterance = _utterance(record, transcript.channel, last_ts, speakers)
        except (ValueError, TypeError) as error:
            transcript.problems.append(LineProblem(number, str(error)))
            continue
        if utterance.message_id in seen:
            transcript.problems.append(
                LineProblem(
                    number,
                    f"duplicate id {utterance.message_id!r} (first on line"
                    f" {seen[utterance.message_id]}); this line is ignored",
                )
            )
            continue
        seen[utterance.message_id] = number
        speakers.add(utterance.speaker_name)
        last_ts = utterance.ts
        transcript.utterances.append(utterance)
    return transcript


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as handle:
        yield from enumerate(handle, start=1)


def _utterance(record: object, channel: str, last_ts: float, speakers: set[str]) -> Utterance:
    if not isinstance(record, dict):
        raise ValueError("a line must be a JSON object")
    message_id = record.get("id")
    if isinstance(message_id, int) and not isinstance(message_id, bool):
        message_id = str(message_id)
    if not isinstance(message_id, str) or not message_id.strip():
        raise ValueError("missing or empty 'id' (a string)")
    speaker = record.get("speaker")
    if not isinstance(speaker, str) or not speaker.strip():
        raise ValueError("missing or empty 'speaker'")
    speaker_id = record.get("speaker_id", speaker)
    if not isinstance(speaker_id, str) or not speaker_id.strip():
        raise ValueError("'speaker_id' must be a non-empty string")
    text = record.get("text")
    if not isinstance(text, str):
        raise ValueError("missing 'text' (a string)")
    ts = parse_ts(record["ts"]) if record.get("ts") is not None else last_ts
    thread = record.get("thread")
    if thread is not None and not isinstance(thread, str | int):
        raise ValueError("'thread' must be the id of the thread's root message")
    return Utterance(
        channel=channel,
        message_id=message_id.strip(),
        speaker_id=speaker_id.strip(),
        speaker_name=speaker.strip(),
        text=text,
        ts=ts,
        thread_root=str(thread) if thread is not None and str(thread) != message_id else None,
        addressees=addressees(text, speakers),
    )


def transcript_line(utterance: Utterance) -> str:
    """One message as a transcript line that reads back as the same message.

    Keys always in one order, ``ts`` as epoch seconds (the shortest repr of a float reads back
    exactly), non-ASCII kept as is, ``speaker_id`` only when it is not the name and ``thread`` only
    on replies: the same channel always exports to the same bytes.
    """
    speaker = utterance.speaker_name.strip() or utterance.speaker_id.strip()
    record: dict[str, object] = {"id": utterance.message_id, "speaker": speaker}
    if utterance.speaker_id.strip() != speaker:
        record["speaker_id"] = utterance.speaker_id.strip()
    record["text"] = utterance.text
    record["ts"] = utterance.ts
    if utterance.thread_root is not None:
        record["thread"] = utterance.thread_root
    return json.dumps(record, ensure_ascii=False)


def addressees(text: str, speakers: set[str]) -> tuple[str, ...]:
    """Known speakers the text addresses: ``@name`` anywhere, or ``name:`` at the start.

    Japanese forms count too: ``田中さん、…`` at the start, and an honorific after a name.
    """
    named = [match.group(1) for match in _MENTION.finditer(text)]
    leading = _ADDRESS.match(text)
    if leading:
        named.insert(0, leading.group(1))
    lowered = {speaker.lower(): speaker for speaker in speakers}
    found = dict.fromkeys(
        lowered.get(name.lower()) or lowered[without_honorific(name).lower()]
        for name in named
        if name.lower() in lowered or without_honorific(name).lower() in lowered
    )
    return tuple(found)
