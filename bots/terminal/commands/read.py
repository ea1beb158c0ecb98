"""``awai read FILE --message ID [--json]`` and ``awai read FILE --all --json``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.progress import track

from awai_engine.engine import UnknownMessageError
from awai_engine.settings import Settings
from awai_engine.visibility import Scopes
from bots.terminal.commands.common import (
    load_and_ingest,
    message_id,
    no_such_message,
    stderr,
)
from bots.terminal.render import reading_json, render_reading
from bots.terminal.say import fail, stdout
from bots.terminal.writing import writing_runtime


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("read", help="Read a message of a transcript in its context.")
    parser.add_argument("file", type=Path, help="The transcript (ingested first; idempotent).")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--message", type=message_id, help="The id of the message to read.")
    which.add_argument("--all", action="store_true", help="Read every message, in order.")
    parser.add_argument(
        "--channel", help="Channel name (default: the file name without extension)."
    )
    parser.add_argument("--json", action="store_true", help="One JSON reading per line on stdout.")
    parser.add_argument(
        "--details", action="store_true", help="Also show the numbers behind each connection."
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    with writing_runtime(settings, "read") as runtime:
        done = load_and_ingest(runtime, args.file, args.channel or args.file.stem, quiet=args.json)
        transcript = done.transcript
        engine = runtime.engine
        if args.message is not None:
            try:
                reading = engine.read(transcript.channel, args.message, Scopes.everything())
            except UnknownMessageError:
                fail(no_such_message(runtime, done, f"was stored from {args.file}", args.message))
                return 2
            if args.json:
                print(reading_json(reading))
            else:
                render_reading(reading, stdout, details=args.details)
            return 0
        ids = runtime.message_ids(transcript.channel)
        if not args.json:  # every reading in turn, for a person: no progress bar over them
            for message_id in ids:
                reading = engine.read(transcript.channel, message_id, Scopes.everything())
                render_reading(reading, stdout, details=args.details)
            return 0
        for message_id in track(ids, description="Reading", console=stderr, transient=True):
            sys.stdout.write(
                reading_json(engine.read(transcript.channel, message_id, Scopes.everything()))
                + "\n"
            )
        return 0
