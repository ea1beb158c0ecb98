"""``awai export CHANNEL --out FILE``: a channel's messages as a transcript, for backups and moves.

The file holds the messages as they stand now (edits applied, deleted messages gone) in channel
order, in the transcript format ``awai import`` and ``awai ingest`` read, so moving a channel
between data directories (or from the embedded store to a server deployment) is export, then
import. It reads only SQL, the record of what exists, and is written to a temporary file that
replaces FILE at the end: an interrupted export never leaves half a backup under FILE's name.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from awai_engine.settings import Settings
from bots.records import Records
from bots.terminal.outputs import written_whole
from bots.terminal.say import stderr, warn
from bots.terminal.transcript import channel_key, channel_name, transcript_line
from storage.errors import StorageError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export", help="Write a channel's messages to a transcript file (JSON Lines)."
    )
    parser.add_argument("channel", help="The channel name or key (as given to ingest or read).")
    parser.add_argument("--out", type=Path, required=True, help="The file to write.")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    with Records.open(settings, read_only=True) as records:  # a backup on read-only media exports
        channel = channel_key(args.channel)
        if records.channel_info(channel) is None:
            known = ", ".join(channel_name(known) for known in records.channels()) or "none yet"
            raise StorageError(f'No channel "{channel_name(channel)}" is stored (known: {known}).')
        count, size = write_export(records, channel, args.out)
    stderr.print(f"{channel_name(channel)}: {count} messages written to {args.out}")
    limit = settings.limits.max_transcript_bytes
    if size > limit:
        warn(
            f"{args.out} is {size:,} bytes, over the {limit:,} that import accepts: raise"
            " AWAI_LIMITS__MAX_TRANSCRIPT_BYTES where you import it."
        )
    return 0


def write_export(records: Records, channel: str, path: Path) -> tuple[int, int]:
    """Write the channel to ``path`` whole or not at all; returns the messages and bytes written."""
    count = size = 0
    with written_whole(path, "w") as handle:
        for utterance in records.utterances(channel):
            line = transcript_line(utterance) + "\n"
            handle.write(line)
            count += 1
            size += len(line.encode("utf-8"))
    return count, size
