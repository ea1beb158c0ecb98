"""What the transcript commands share: load a file, ingest it, report problems on stderr.

A file stored before is not read again while unchanged (size, modification time and inode as
recorded, or the same bytes), and one that grew by appending is read from where it ended (see
:mod:`storage.transcript_files`); any other change reads it whole. Either way what the channel
holds is what a read of the whole file would store.

Exit status of the commands that store a transcript: 0 when every line was stored (or already
was), 1 when something was refused and the rest stored (a bad line, a message over a limit, a
message deleted before; for a file read before, its lines refused then count too), 2 when nothing
could be done (see ``bots.terminal.cli``).
"""

from __future__ import annotations

import argparse
import difflib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rich.progress import Progress

from awai_engine.engine import IngestReport
from awai_engine.settings import EmbeddingSettings
from awai_engine.values import Utterance
from bots.records import StoredFile
from bots.runtime import Runtime
from bots.terminal.language_fit import TextSample, english_model_warning
from bots.terminal.say import stderr, warn
from bots.terminal.transcript import (
    FileState,
    Resume,
    Transcript,
    channel_key,
    channel_name,
    stream_transcript,
)
from bots.terminal.visible import one_line

TRANSCRIPT_HELP = (
    "The transcript: JSON Lines, one message per line with id, speaker, text and ts"
    " (optional: thread, speaker_id); see the README."
)

__all__ = [
    "TRANSCRIPT_HELP",
    "Ingested",
    "load_and_ingest",
    "message_id",
    "no_such_message",
    "report_problems",
    "speaker_name",
    "stderr",
    "store_transcript",
    "warn_unfit_model",
]


@dataclass(frozen=True)
class Ingested:
    """A transcript read and ingested: what its lines held, and what storing them did."""

    transcript: Transcript
    report: IngestReport
    refused_before: int = 0
    """Lines of the file refused when it was stored before (its unchanged part, read no more)."""
    texts: tuple[str, ...] = ()
    """An even spread of the texts stored (what the language check looks at)."""

    @property
    def refused(self) -> int:
        """Lines and messages that were not stored."""
        report = self.report
        return (
            len(self.transcript.problems)
            + len(report.problems)
            + report.refused_deleted
            + self.refused_before
        )

    @property
    def exit_code(self) -> int:
        return 1 if self.refused else 0


def message_id(value: str) -> str:
    """A message id given on the command line: an empty one is refused, since asked as it is it
    would name no message and, worse, read as if none was given."""
    if not value.strip():
        raise argparse.ArgumentTypeError("the message id is empty: give the id of a message")
    return value


def no_such_message(runtime: Runtime, done: Ingested, source: str, message_id: str) -> str:
    """Why ``--message`` names nothing to read, in the terminal's words: the ids the file gave
    (their range and count, and the closest to a mistyped one) and the lines refused, since a
    refused line is the usual reason an id written in the file was never stored. ``source``
    says where the ids came from ("was stored from FILE", "is in the English sample")."""
    ids = runtime.message_ids(done.transcript.channel)
    said = f"No message {message_id!r} {source}"
    if not ids:
        said += ": none of its messages was."
    elif len(ids) == 1:
        said += f" (the one stored is {ids[0]!r})."
    else:
        said += f" (the {len(ids):,} stored run from {ids[0]!r} to {ids[-1]!r})."
    near = difflib.get_close_matches(message_id, ids, n=3, cutoff=0.6)
    if near:
        said += " Did you mean " + " or ".join(repr(other) for other in near) + "?"
    if done.refused_before:
        said += f" {_of_its_lines(done.refused_before)} refused when it was stored."
    elif done.refused:
        said += f" {_of_its_lines(done.refused)} refused, as named above."
    return said


def _of_its_lines(count: int) -> str:
    return "One of its lines was" if count == 1 else f"{count:,} of its lines were"


def speaker_name(value: str) -> str:
    """A speaker given on the command line: an empty one is refused (it would mean everyone)."""
    if not value.strip():
        raise argparse.ArgumentTypeError("the speaker is empty: give a display name or an id")
    return value


def store_transcript(
    runtime: Runtime,
    path: Path,
    read: tuple[Transcript, Iterator[Utterance]],
    quiet: bool = False,
    verb: str = "Ingesting",
) -> Ingested:
    """Store a transcript's messages as they are parsed from ``path`` (idempotent; ``read`` is
    :func:`stream_transcript`'s), then tell each line and message refused. The runtime is
    opened under the writer lock (``bots/terminal/writing.py``)."""
    transcript, messages = read
    sample = TextSample()
    with Progress(console=stderr, transient=True, disable=quiet) as progress:
        # by the file's bytes read: what is left is known without reading the file twice
        task = progress.add_task(verb, total=_size(path))
        report = runtime.engine.ingest(
            sample.taking(messages),
            progress=lambda _: progress.update(task, completed=transcript.read_to),
        )
    for problem in transcript.problems:  # told once the file was read through
        warn(f"{path}: {problem}")
    report_problems(report)
    return Ingested(transcript, report, texts=tuple(sample.texts))


def load_and_ingest(runtime: Runtime, path: Path, channel: str, quiet: bool = False) -> Ingested:
    """Read and store a transcript, then one line of what it did (unless ``quiet``).

    What of the file is stored already is not read again; the record of the file is dropped
    before its new lines are stored and written again only once all of them were, so a crash or a
    refused message in between makes the next read a whole one.
    """
    key = channel_key(channel)
    where = str(path.absolute())
    known = runtime.stored_file(key, where)
    if known is not None and _unchanged(path, known):
        transcript = Transcript(channel=key, resumed_lines=known.lines, lines=known.lines)
        done = Ingested(transcript, IngestReport(), refused_before=known.refused_lines)
        if not quiet:
            refused = (
                f"{known.refused_lines:,} refused then" if known.refused_lines else "none refused"
            )
            stderr.print(
                f"{channel_name(key)}: {path} is unchanged since it was stored ({known.lines:,} lines,"
                f" {refused})"
            )
        return done
    limits = runtime.settings.limits
    resume = _resume(runtime, key, known)
    read = stream_transcript(
        path, channel, limits.max_transcript_bytes, limits.max_line_bytes, resume
    )
    if known is not None:
        runtime.forget_file(key, where)
    done = store_transcript(runtime, path, read, quiet)
    transcript = done.transcript
    if transcript.resumed_lines and known is not None:
        done = replace(done, refused_before=known.refused_lines)
    source = transcript.source
    if source is not None and not done.report.problems:  # a refused message is tried again
        runtime.record_file(
            key,
            where,
            StoredFile(
                source.size,
                source.mtime_ns,
                source.ctime_ns,
                source.inode,
                source.digest,
                transcript.lines,
                transcript.last_ts,
                transcript.ends_whole,
                done.refused_before + len(transcript.problems),
            ),
        )
    if not quiet:
        report = done.report
        grown = (
            f" ({transcript.resumed_lines:,} lines stored before, not read again)"
            if transcript.resumed_lines
            else ""
        )
        stderr.print(
            f"{channel_name(done.transcript.channel)}: {report.added} added, {report.edited} edited,"
            f" {report.unchanged} unchanged, {done.refused} refused{grown}"
        )
        warn_unfit_model(runtime.settings.embedding, done.texts)
    return done


def warn_unfit_model(embedding: EmbeddingSettings, texts: Sequence[str]) -> None:
    """Warn when the texts' language is one the configured embedding model reads badly."""
    advice = english_model_warning(embedding, texts)
    if advice is not None:
        warn(advice)


def _unchanged(path: Path, known: StoredFile) -> bool:
    """Whether the file is as stored by what its status says (no byte read)."""
    try:
        status = os.stat(path)
    except OSError:
        return False  # let the read say what is wrong
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino) == (
        known.size,
        known.mtime_ns,
        known.ctime_ns,
        known.inode,
    )


def _size(path: Path) -> int | None:
    """The file's size for the progress bar; ``None`` if it cannot be had (the read says why)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def _resume(runtime: Runtime, channel: str, known: StoredFile | None) -> Resume | None:
    """What a read of a stored file that may have grown goes on from; ``None``: read it whole."""
    if known is None or not known.ends_whole:
        return None
    speakers, message_ids = runtime.speakers_and_ids(channel)
    return Resume(
        stored=FileState(known.size, known.mtime_ns, known.ctime_ns, known.inode, known.digest),
        lines=known.lines,
        last_ts=known.last_ts,
        speakers=speakers,
        message_ids=message_ids,
    )


def report_problems(report: IngestReport) -> None:
    """One line per message refused and per note; the engine builds them with channel names
    and stored errors in them, whose newlines are shown as escapes."""
    for problem in report.problems:
        warn(f"message {one_line(problem.message_id)}: {one_line(problem.reason)}")
    for note in report.notes:
        warn(one_line(note))
    if report.refused_deleted:
        warn(f"{report.refused_deleted} deleted message(s) were not stored again.")
