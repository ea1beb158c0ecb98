"""The transcript format: JSON Lines, one message per line.

Fields: ``id`` (string), ``speaker``, ``text``, optional ``ts`` (ISO 8601 or epoch seconds; a line
without one keeps the previous line's time, so file order decides), optional ``thread`` (id of the
thread's root message), optional ``speaker_id`` (the platform's id of the speaker, when it is not
the display name). Problems are reported with their line number and the other lines are kept.
:func:`transcript_line` writes the same format (``awai export``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from awai_engine.admission import text_problem, ts_problem
from awai_engine.errors import AwaiError
from awai_engine.settings import LimitsSettings
from awai_engine.text import shorten, without_honorific
from awai_engine.values import CHANNEL_SCOPE, Utterance
from bots.terminal.chat_exports import document_advice, line_advice, opens_document
from bots.terminal.transcript_lines import (
    CHUNK_BYTES,
    NotAFileError,
    RawLine,
    open_regular,
    read_lines,
)
from bots.terminal.visible import one_line

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
    """What a file's lines held. ``resumed_lines``: lines before them, stored from the file
    before it grew (0: the file was read whole). ``source``, ``lines``, ``last_ts`` and
    ``ends_whole`` (the last line had its line end) describe the file as read, for the next read
    to go on from."""

    channel: str
    utterances: list[Utterance] = field(default_factory=list)
    problems: list[LineProblem] = field(default_factory=list)
    resumed_lines: int = 0
    source: FileState | None = None
    lines: int = 0
    last_ts: float = 0.0
    ends_whole: bool = True
    read_to: int = 0  # the file's offset after the last line read so far (a read's progress)


class TranscriptError(AwaiError, ValueError):
    """The file cannot be read as a transcript at all (missing, a folder, empty, too large, not
    JSON Lines)."""


class ChannelNameError(AwaiError, ValueError):
    """A channel name given on the command line that cannot name a channel."""


# Ids, not amounts, are what a transcript's integers are: more digits than this is a mistake (and
# Python refuses to read integers past 4,300 digits anyway). Snowflake ids have 19.
MAX_INTEGER_DIGITS = 100
DEFAULT_MAX_LINE_BYTES = LimitsSettings().max_line_bytes
# The width of the channel key column in the database.
MAX_CHANNEL_KEY = 512


TERMINAL_PREFIX = "terminal:local:"


def channel_name(key: str) -> str:
    """A channel as the person typed it, fit for one line: the name of a terminal channel
    (``terminal:local:`` is AWAI's bookkeeping, never typed), else the full key, escaped."""
    return one_line(key.removeprefix(TERMINAL_PREFIX))


def channel_key(name: str) -> str:
    """The channel key of a terminal channel: ``terminal:local:<name>``."""
    if not name.strip():
        raise ChannelNameError("The channel name is empty: give --channel NAME.")
    problem = text_problem("channel", name)
    if problem:
        raise ChannelNameError(f"The channel name {name!r} is not valid text: {problem}.")
    key = name if name.count(":") >= 2 else f"{TERMINAL_PREFIX}{name}"
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
                    f"'ts' is {value!r}: neither an ISO 8601 time (such as"
                    " 2026-03-02T09:15:00Z) nor seconds since the epoch"
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


@dataclass(frozen=True)
class FileState:
    """What a transcript file was when it was read: its size, modification and change times and
    inode (all equal on the next read: unchanged, without reading it) and the BLAKE2b digest of
    its bytes."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    digest: str


@dataclass(frozen=True)
class Resume:
    """What a read of a file that may have grown by appending goes on from: the file as it was
    stored (``stored``), the number of lines it had, the time of its last line, and the speakers
    and message ids already stored from it (addresses and repeated ids are judged against them)."""

    stored: FileState
    lines: int
    last_ts: float
    speakers: tuple[str, ...] = ()
    message_ids: frozenset[str] = frozenset()


def read_transcript(
    path: Path,
    channel: str,
    max_bytes: int,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    resume: Resume | None = None,
) -> Transcript:
    """Parse a transcript file whole; see :func:`stream_transcript`."""
    transcript, utterances = stream_transcript(path, channel, max_bytes, max_line_bytes, resume)
    transcript.utterances.extend(utterances)
    return transcript


def stream_transcript(
    path: Path,
    channel: str,
    max_bytes: int,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    resume: Resume | None = None,
) -> tuple[Transcript, Iterator[Utterance]]:
    """A transcript file's messages, parsed as they are taken; malformed lines are reported,
    never fatal to the others.

    Why one at a time: a store takes them a chunk at a time, and 100,000 lines held parsed at
    once were 120 MiB of an ingest's memory. The :class:`Transcript` returned holds no
    utterances; its problems fill as lines are taken, and what describes the file (``source``,
    ``lines``, ``last_ts``, ``ends_whole``) once the last is. What makes the whole file
    unreadable is one :class:`TranscriptError`: a folder, a FIFO or device, or one over the size
    limit at once; a JSON array or chat export instead of lines at its first line; an empty
    file, or one none of whose lines is JSON, when its end is reached (no message was taken
    then). With ``resume``, a file whose first bytes are still those stored is read from where
    it ended: only the appended lines are parsed; any other change is read whole.
    """
    if path.is_dir():
        raise TranscriptError(
            f"{path} is a folder; give one transcript file (JSON Lines, one message per line)."
        )
    try:
        handle = open_regular(path)
    except NotAFileError as error:
        raise TranscriptError(
            f"{error}: give a transcript file (JSON Lines); a pipe or device has no end to read"
            " to (save it to a file first)."
        ) from None
    except OSError as error:
        raise TranscriptError(f"Cannot read {path}: {error.strerror or error}") from None
    status = os.fstat(handle.fileno())
    if status.st_size > max_bytes:
        handle.close()
        raise TranscriptError(
            f"{path} is {status.st_size:,} bytes; the limit is {max_bytes:,}"
            " (AWAI_LIMITS__MAX_TRANSCRIPT_BYTES)."
        )
    transcript = Transcript(channel=channel_key(channel))
    return transcript, _parsed(path, handle, status, transcript, max_line_bytes, resume)


def _parsed(
    path: Path,
    handle: BinaryIO,
    status: os.stat_result,
    transcript: Transcript,
    max_line_bytes: int,
    resume: Resume | None,
) -> Iterator[Utterance]:
    """The messages of an open transcript file in order (see :func:`stream_transcript`)."""
    with handle:
        digest = hashlib.blake2b(digest_size=DIGEST_BYTES)
        if resume is not None and not _same_start(handle, digest, resume.stored):
            handle.seek(0)
            digest = hashlib.blake2b(digest_size=DIGEST_BYTES)
            resume = None
        transcript.resumed_lines = resume.lines if resume else 0
        reader = _Reader(path, transcript, resume, max_line_bytes)
        for line in read_lines(
            _Hashing(handle, digest),
            max_line_bytes,
            reader.number + 1,
            resume.stored.size if resume else 0,
        ):
            transcript.read_to = line.end
            utterance = reader.take(line)
            if utterance is not None:
                yield utterance
    if reader.blank:
        raise TranscriptError(
            f"{path} is empty: there is no message to read"
            + (" (only blank lines)." if status.st_size else ".")
        )
    if resume is None and reader.json_lines == 0 and reader.first_line is not None:
        number, first = reader.first_line
        problem = transcript.problems[0]
        reason = problem.reason
        if reason.startswith("not valid JSON (") and reason.endswith(")"):
            reason = reason[len("not valid JSON (") : -1]
        begins = "it" if problem.line == number else f"line {number}"
        raise TranscriptError(
            f"{path} is not JSON Lines: none of its lines is JSON (line {problem.line}: {reason};"
            f" {begins} begins {shorten(first, 40)!r}). AWAI reads one JSON object per line, such as"
            ' {"id": "m1", "speaker": "Ana", "text": "Hello", "ts": "2026-03-02T09:15:00Z"}.'
        )
    transcript.source = FileState(
        status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, digest.hexdigest()
    )
    transcript.last_ts = reader.last_ts
    transcript.lines = reader.number
    transcript.ends_whole = reader.ends_whole


DIGEST_BYTES = 32


def _same_start(handle: BinaryIO, digest: hashlib.blake2b, stored: FileState) -> bool:
    """Whether the file's first ``stored.size`` bytes are the stored file (read into ``digest``)."""
    left = stored.size
    while left > 0:
        chunk = handle.read(min(left, CHUNK_BYTES))
        if not chunk:
            return False
        digest.update(chunk)
        left -= len(chunk)
    return digest.copy().hexdigest() == stored.digest


class _Hashing:
    """A file whose bytes go through a digest as they are read."""

    def __init__(self, handle: BinaryIO, digest: hashlib.blake2b) -> None:
        self._handle, self._digest = handle, digest

    def read(self, size: int) -> bytes:
        chunk = self._handle.read(size)
        self._digest.update(chunk)
        return chunk


class _Reader:
    """The parse of one file, line by line: what a line may depend on (the time of the line
    before it, the speakers before it, the ids before it) is kept as it goes, so each line costs
    the same however many came before."""

    def __init__(
        self, path: Path, transcript: Transcript, resume: Resume | None, max_line_bytes: int
    ) -> None:
        self.path = path
        self.transcript = transcript
        self.max_line_bytes = max_line_bytes
        self.speakers = SpeakerIndex(resume.speakers if resume else ())
        self.seen: dict[str, int] = dict.fromkeys(resume.message_ids, 0) if resume else {}
        self.last_ts = resume.last_ts if resume else 0.0
        self.number = resume.lines if resume else 0
        self.blank = resume is None
        self.ends_whole = True
        self.json_lines = 0
        self.first_line: tuple[int, str] | None = None  # the first line that is not blank

    def take(self, line: RawLine) -> Utterance | None:
        """The line's message, or ``None`` (a problem told, a blank line, a duplicate id)."""
        self.number = line.number
        self.ends_whole = line.terminated
        problems = self.transcript.problems
        raw = line.data
        if raw is None:
            problems.append(
                LineProblem(
                    line.number,
                    f"{line.length:,} bytes long; a line may have at most"
                    f" {self.max_line_bytes:,} (AWAI_LIMITS__MAX_LINE_BYTES); skipped unread",
                )
            )
            self.blank = False
            return None
        if line.number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            problems.append(
                LineProblem(
                    line.number,
                    f"not UTF-8 text (byte {error.start + 1} is 0x{raw[error.start]:02x})",
                )
            )
            self.blank = False
            return None
        if not text.strip():
            return None
        if self.blank and opens_document(text):
            raise TranscriptError(document_advice(self.path))
        opening = self.blank  # the file's first line that is not blank
        self.blank = False
        if self.first_line is None:
            self.first_line = (line.number, text.strip())
        record: object = None
        try:
            record = _json(text)
            self.json_lines += 1
            utterance = _utterance(record, self.transcript.channel, self.last_ts, self.speakers)
        except (ValueError, TypeError) as error:
            advice = line_advice(record, self.path) if opening else None
            if advice is not None:  # every line would fail alike: one message for the file
                raise TranscriptError(f"{self.path}: line {line.number}: {advice}") from None
            problems.append(LineProblem(line.number, str(error)))
            return None
        first = self.seen.get(utterance.message_id)
        if first is not None:
            where = f"first on line {first}" if first else "stored from an earlier line"
            problems.append(
                LineProblem(
                    line.number,
                    f"duplicate id {utterance.message_id!r} ({where}); this line is ignored",
                )
            )
            return None
        self.seen[utterance.message_id] = line.number
        self.speakers.add(utterance.speaker_name)
        self.last_ts = utterance.ts
        return utterance


_BOM = b"\xef\xbb\xbf"


def _json(line: str) -> object:
    """One line's JSON value, or a ``ValueError`` saying in words what is wrong with it."""
    try:
        return json.loads(
            line, parse_constant=_refuse_constant, parse_int=_integer, parse_float=_finite
        )
    except json.JSONDecodeError as error:
        # Some of json's messages end in "at" ("Unterminated string starting at"): the column
        # completes them instead of following a second "at".
        where = "" if error.msg.endswith(" at") else " at"
        raise ValueError(f"not valid JSON ({error.msg}{where} column {error.colno})") from None
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


def _utterance(record: object, channel: str, last_ts: float, speakers: SpeakerIndex) -> Utterance:
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


class SpeakerIndex:
    """The speakers seen so far, found by name without regard to case; kept as lines are read, so
    looking up a name costs the same with 5 speakers or 5,000. When speakers differ only in case
    (``dabar`` and ``dabaR``), a name written exactly as one of them finds that one, else the
    first seen."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names: set[str] = set()
        self._by_lowered: dict[str, str] = {}
        for name in names:
            self.add(name)

    def add(self, name: str) -> None:
        self._names.add(name)
        self._by_lowered.setdefault(name.lower(), name)

    def find(self, name: str) -> str | None:
        """The speaker ``name`` names, as is or without a Japanese honorific; ``None``: nobody."""
        for form in (name, without_honorific(name)):
            if form in self._names:
                return form
            if (found := self._by_lowered.get(form.lower())) is not None:
                return found
        return None


def addressees(text: str, speakers: SpeakerIndex | Iterable[str]) -> tuple[str, ...]:
    """Known speakers the text addresses: ``@name`` anywhere, or ``name:`` at the start.

    Japanese forms count too: ``田中さん、…`` at the start, and an honorific after a name. Give a
    :class:`SpeakerIndex` when asking line after line (a collection of names is indexed anew).
    """
    index = speakers if isinstance(speakers, SpeakerIndex) else SpeakerIndex(speakers)
    named = [match.group(1) for match in _MENTION.finditer(text)]
    leading = _ADDRESS.match(text)
    if leading:
        named.insert(0, leading.group(1))
    found = dict.fromkeys(speaker for name in named if (speaker := index.find(name)) is not None)
    return tuple(found)
