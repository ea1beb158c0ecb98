"""What the transcript commands share: load a file, ingest it, report problems on stderr."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from awai_engine.engine import IngestReport
from bots.runtime import Runtime
from bots.terminal.transcript import Transcript, read_transcript

stderr = Console(stderr=True)


def load_and_ingest(runtime: Runtime, path: Path, channel: str, quiet: bool = False) -> Transcript:
    """Ingest a transcript (idempotent: unchanged messages cost nothing) and report problems."""
    transcript = read_transcript(path, channel, runtime.settings.limits.max_transcript_bytes)
    for problem in transcript.problems:
        stderr.print(f"[yellow]{path}: {problem}[/yellow]", highlight=False)
    with Progress(console=stderr, transient=True, disable=quiet) as progress:
        task = progress.add_task("Ingesting", total=len(transcript.utterances))
        report = runtime.engine.ingest(
            transcript.utterances, progress=lambda n: progress.advance(task, n)
        )
    report_problems(report)
    if not quiet:
        stderr.print(
            f"{transcript.channel}: {report.added} added, {report.edited} edited,"
            f" {report.unchanged} unchanged, {len(report.problems)} refused",
            highlight=False,
        )
    return transcript


def report_problems(report: IngestReport) -> None:
    for problem in report.problems:
        stderr.print(
            f"[yellow]message {problem.message_id}: {problem.reason}[/yellow]", highlight=False
        )
    for note in report.notes:
        stderr.print(f"[yellow]{note}[/yellow]", highlight=False)
    if report.refused_deleted:
        stderr.print(
            f"[yellow]{report.refused_deleted} deleted message(s) were not stored again.[/yellow]"
        )
