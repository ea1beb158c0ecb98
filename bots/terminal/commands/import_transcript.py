"""``awai import FILE --channel NAME``: store a transcript written by ``awai export``.

Importing is ingesting (idempotent: messages already stored with the same text cost nothing, and a
message deleted in the target channel is not brought back), named for its use: restoring a backup
or moving a channel into another data directory or deployment. Export, import into an empty data
directory, and export again gives the same bytes. Unlike ``ingest``, any line or message that could
not be stored makes the exit status non-zero: a restore that lost something must say so.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from awai_engine.settings import Settings
from bots.terminal.commands.common import (
    TRANSCRIPT_HELP,
    stderr,
    store_transcript,
    warn_unfit_model,
)
from bots.terminal.transcript import channel_name, stream_transcript
from bots.terminal.writing import writing_runtime


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "import", help="Store a transcript written by `awai export` as a channel."
    )
    parser.add_argument("file", type=Path, help=TRANSCRIPT_HELP)
    parser.add_argument("--channel", required=True, help="The channel name or key to store it as.")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    # A file that cannot be imported fails before the model loads: as a whole at once (a folder,
    # a device, over the size limit), or before its first message is stored (not JSON Lines).
    limits = settings.limits
    read = stream_transcript(
        args.file, args.channel, limits.max_transcript_bytes, limits.max_line_bytes
    )
    with writing_runtime(settings, "import") as runtime:
        done = store_transcript(runtime, args.file, read, verb="Importing")
    report = done.report
    stderr.print(
        f"{channel_name(done.transcript.channel)}: {report.added} added, {report.edited} replaced,"
        f" {report.unchanged} already there, {report.refused_deleted + len(report.problems)}"
        f" refused, {len(done.transcript.problems)} unreadable line(s)"
    )
    warn_unfit_model(settings.embedding, done.texts)
    return done.exit_code
