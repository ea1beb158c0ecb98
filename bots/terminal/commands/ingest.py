"""``awai ingest FILE --channel NAME``: store a transcript (idempotent).

Exits 1 when any line or message was refused (each is told with its line number or id; the rest
is stored), 0 when everything was stored.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from awai_engine.settings import Settings
from bots.terminal.commands.common import TRANSCRIPT_HELP, load_and_ingest
from bots.terminal.writing import writing_runtime


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ingest", help="Store a JSON Lines transcript as a channel.")
    parser.add_argument("file", type=Path, help=TRANSCRIPT_HELP)
    parser.add_argument(
        "--channel", help="Channel name (default: the file name without extension)."
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    with writing_runtime(settings, "ingest") as runtime:
        done = load_and_ingest(runtime, args.file, args.channel or args.file.stem)
    return done.exit_code
