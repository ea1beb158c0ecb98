"""What the transcript commands share: load a file, ingest it, report problems on stderr.

Exit status of the commands that store a transcript: 0 when every line was stored (or already
was), 1 when something was refused and the rest stored (a bad line, a message over a limit, a
message deleted before), 2 when nothing could be done (see ``bots.terminal.cli``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.progress import Progress

from awai_engine.engine import IngestReport
from bots.runtime import Runtime
from bots.terminal.say import stderr, warn
from bots.terminal.transcript import Transcript, read_transcript
from bots.terminal.visible import one_line

__all__ = [
    "Ingested",
    "load_and_ingest",
    "read_reporting",
    "report_problems",
    "stderr",
    "store_transcript",
]


@dataclass(frozen=True)
class Ingested:
    """A transcript read and ingested: what its lines held, and what storing them did."""

    transcript: Transcript
    report: IngestReport

    @property
    def refused(self) -> int:
        """Lines and messages that were not stored."""
        report = self.report
        return len(self.transcript.problems) + len(report.problems) + report.refused_deleted

    @property
    def exit_code(self) -> int:
        return 1 if self.refused else 0


def read_reporting(path: Path, channel: str, max_bytes: int) -> Transcript:
    """Read a transcript, telling each line that was skipped and why."""
    transcript = read_transcript(path, channel, max_bytes)
    for problem in transcript.problems:
        warn(f"{path}: {problem}")
    return transcript


def store_transcript(
    runtime: Runtime, transcript: Transcript, quiet: bool = False, verb: str = "Ingesting"
) -> Ingested:
    """Ingest what a transcript's lines held (idempotent), telling each message refused. The
    runtime is opened under the writer lock (``bots/terminal/writing.py``)."""
    with Progress(console=stderr, transient=True, disable=quiet) as progress:
        task = progress.add_task(verb, total=len(transcript.utterances))
        report = runtime.engine.ingest(
            transcript.utterances, progress=lambda n: progress.advance(task, n)
        )
    report_problems(report)
    return Ingested(transcript, report)


def load_and_ingest(runtime: Runtime, path: Path, channel: str, quiet: bool = False) -> Ingested:
    """Read and store a transcript, then one line of what it did (unless ``quiet``)."""
    transcript = read_reporting(path, channel, runtime.settings.limits.max_transcript_bytes)
    done = store_transcript(runtime, transcript, quiet)
    if not quiet:
        report = done.report
        stderr.print(
            f"{one_line(done.transcript.channel)}: {report.added} added, {report.edited} edited,"
            f" {report.unchanged} unchanged, {done.refused} refused"
        )
    return done


def report_problems(report: IngestReport) -> None:
    """One line per message refused and per note; the engine builds them with channel names
    and stored errors in them, whose newlines are shown as escapes."""
    for problem in report.problems:
        warn(f"message {one_line(problem.message_id)}: {one_line(problem.reason)}")
    for note in report.notes:
        warn(one_line(note))
    if report.refused_deleted:
        warn(f"{report.refused_deleted} deleted message(s) were not stored again.")
