"""The transcript format: JSON Lines, one message per line.

Fields: ``id`` (string), ``speaker``, ``text``, optional ``ts`` (ISO 8601 or epoch seconds; a line
without one keeps the previous line's time, so file order decides), optional ``thread`` (id of the
thread's root message), optional ``speaker_id`` (the platform's id of the speaker, when it is not
the display name). Problems are reported with their line number and the other lines are kept.
:func:`transcript_line` writes the same format (``awai export``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from awai_engine.admission import text_problem, ts_problem
from awai_engine.errors import AwaiError
from awai_engine.text import without_honorific
from awai_engine.values import CHANNEL_SCOPE, Utterance

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
    """The file cannot be read as a transcript at all (missing, a folder, empty, too large, not
    JSON Lines)."""


class ChannelNameError(AwaiError, ValueError):
    """A channel name given on the command line that cannot name a channel."""


# Ids, not amounts, are what a transcript's integers are: more digits than this is a mistake (and
# Python refuses to read integers past 4,300 digits anyway). Snowflake ids have 19.
MAX_INTEGER_DIGITS = 100
# The width of the channel key column in the database.
MAX_CHANNEL_KEY = 512


def channel_key(name: str) -> str:
    """The channel key of a terminal channel: ``terminal:local:<name>``."""
    if not name.strip():
        raise ChannelNameError("The channel name is empty: give --channel NAME.")
    problem = text_problem("channel", name)
    if problem:
        raise ChannelNameError(f"The channel name {name!r} is not valid text: {problem}.")
    key = name if name.count(":") >= 2 else f"terminal:local:{name}"
    if len(key) > MAX_CHANNEL_KEY:
        raise ChannelNameError(
            f"The channel key is {len(key):,} characters; at most {MAX_CHANNEL_KEY} fit: give a"
            " shorter --channel."
        )
    return key


def parse_ts(value: object) -> float:
    """Seconds since the epoch from a number, a numeric string, or an ISO 8601 string.

    Refuses what cannot order a message: true/false, NaN, infinities and times outside
    1970–2100 (see :func:`awai_engine.admission.ts_problem`).
    """
    if isinstance(value, bool):
        raise ValueError("'ts' must be a time, not true/false")
    shown = None
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        try:
            seconds = float(value)
        except ValueError:
            shown = repr(value)
            try:
                moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                raise ValueError(
                    f"'ts' {value!r} is neither ISO 8601 nor seconds since the epoch"
                ) from None
            if moment.tzinfo is None:
                raise ValueError(f"'ts' {value!r} has no time zone") from None
            seconds = moment.timestamp()
    else:
        raise ValueError(f"'ts' must be ISO 8601 or epoch seconds, not {_kind(value)}")
    problem = ts_problem(seconds, shown)
    if problem:
        raise ValueError(problem)
    return seconds


def read_transcript(path: Path, channel: str, max_bytes: int) -> Transcript:
    """Parse a transcript file; malformed lines are reported, never fatal to the others.

    What makes the whole file unreadable (a folder, an empty file, one JSON array instead of
    lines) is one :class:`TranscriptError`, not an error per line.
    """
    if path.is_dir():
        raise TranscriptError(
            f"{path} is a folder; give one transcript file (JSON Lines, one message per line)."
        )
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
    blank = True
    for number, raw in _lines(path):
        if number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            transcript.problems.append(
                LineProblem(
                    number, f"not UTF-8 text (byte {error.start + 1} is 0x{raw[error.start]:02x})"
                )
            )
            blank = False
            continue
        if not line.strip():
            continue
        if blank and line.lstrip().startswith("["):
            raise TranscriptError(
                f"{path} is a JSON array; AWAI reads JSON Lines, one JSON object per line"
                f" (convert it with: jq -c '.[]' {path.name} > {path.stem}-lines.jsonl)."
            )
        blank = False
        try:
            record = _json(line)
        except ValueError as error:
            transcript.problems.append(LineProblem(number, str(error)))
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
    if blank:
        raise TranscriptError(
            f"{path} is empty: there is no message to read"
            + (" (only blank lines)." if size else ".")
        )
    return transcript


_BOM = b"\xef\xbb\xbf"


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as handle:
        yield from enumerate(handle, start=1)


def _json(line: str) -> object:
    """One line's JSON value, or a ``ValueError`` saying in words what is wrong with it."""
    try:
        return json.loads(
            line, parse_constant=_refuse_constant, parse_int=_integer, parse_float=_finite
        )
    except json.JSONDecodeError as error:
        raise ValueError(f"not valid JSON ({error.msg} at column {error.colno})") from None
    except RecursionError:
        raise ValueError(
            "JSON nested too deep to read (thousands of brackets); a message is a flat object"
        ) from None


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON value (JSON has no NaN or Infinity)")


def _integer(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise ValueError(
            f"a number with {len(digits.lstrip('-')):,} digits is too long"
            f" (at most {MAX_INTEGER_DIGITS}); ids are strings: quote it"
        )
    return int(digits)


def _finite(digits: str) -> float:
    value = float(digits)
    if not math.isfinite(value):
        raise ValueError(f"the number {digits[:40]} is too large to be a number AWAI can use")
    return value


def _kind(value: object) -> str:
    """How a JSON value is called in a message about its type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"true/false ({json.dumps(value)})"
    if isinstance(value, int | float):
        return f"a number ({value!r})" if len(repr(value)) <= 40 else "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _string(record: dict[str, object], key: str, default: object = None) -> str:
    """The non-empty string field ``key``; its absence, emptiness and type are told apart."""
    value = record.get(key, default)
    if value is None:
        raise ValueError(f"missing {key!r} (a string)")
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string, not {_kind(value)}")
    if not value.strip():
        raise ValueError(f"{key!r} is empty")
    problem = text_problem(key, value)
    if problem:
        raise ValueError(problem)
    return value.strip()


def _utterance(record: object, channel: str, last_ts: float, speakers: set[str]) -> Utterance:
    if not isinstance(record, dict):
        raise ValueError(f"a line must be a JSON object, not {_kind(record)}")
    if type(record.get("id")) is int:  # a numeric id reads as its digits
        record = {**record, "id": str(record["id"])}
    message_id = _string(record, "id")
    speaker = _string(record, "speaker")
    speaker_id = _string(record, "speaker_id", speaker)
    text = record.get("text")
    if text is None:
        raise ValueError("missing 'text' (a string)")
    if not isinstance(text, str):
        raise ValueError(f"'text' must be a string, not {_kind(text)}")
    problem = text_problem("text", text)
    if problem:
        raise ValueError(problem)
    ts = parse_ts(record["ts"]) if record.get("ts") is not None else last_ts
    thread = record.get("thread")
    if type(thread) is int:
        thread = str(thread)
    if thread is not None and (not isinstance(thread, str) or text_problem("thread", thread)):
        raise ValueError("'thread' must be the id (a string) of the thread's root message")
    scope = _string(record, "scope", CHANNEL_SCOPE)  # who may see it; the channel by default
    return Utterance(
        channel=channel,
        message_id=message_id,
        speaker_id=speaker_id,
        speaker_name=speaker,
        text=text,
        ts=ts,
        thread_root=thread if thread is not None and thread != message_id else None,
        addressees=addressees(text, speakers),
        scope=scope.strip(),
    )


def transcript_line(utterance: Utterance) -> str:
    """One message as a transcript line that reads back as the same message.

    Keys always in one order, ``ts`` as epoch seconds (the shortest repr of a float reads back
    exactly), non-ASCII kept as is, ``speaker_id`` only when it is not the name, ``thread`` only
    on replies and ``scope`` only when narrower than the channel's: the same channel always
    exports to the same bytes.
    """
    speaker = utterance.speaker_name.strip() or utterance.speaker_id.strip()
    record: dict[str, object] = {"id": utterance.message_id, "speaker": speaker}
    if utterance.speaker_id.strip() != speaker:
        record["speaker_id"] = utterance.speaker_id.strip()
    record["text"] = utterance.text
    record["ts"] = utterance.ts
    if utterance.thread_root is not None:
        record["thread"] = utterance.thread_root
    if utterance.scope != CHANNEL_SCOPE:  # a private thread's words stay private when imported
        record["scope"] = utterance.scope
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
