"""``awai recluster [CHANNEL]``: re-cluster the speakers' schemas now (what the scheduler does).

Without a channel, every channel with new thoughts since its last re-clustering; ``--force`` also
re-checks channels with nothing new. One failing channel is reported and the others go on.
"""

from __future__ import annotations

import argparse

from rich.text import Text

from awai_engine.settings import Settings
from bots.runtime import open_runtime
from bots.terminal.lookup import find_channel
from bots.terminal.say import plain_console, styled, warn


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "recluster",
        help="Find speakers' preconceptions again (channels with new thoughts, or one).",
    )
    parser.add_argument("channel", nargs="?", help="One channel name or key (default: all).")
    parser.add_argument(
        "--force", action="store_true", help="Also channels with nothing new since last time."
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    runtime = open_runtime(settings, notify=warn)
    try:
        if args.channel:
            channel = find_channel(runtime, args.channel)
            if channel is None:
                return 2
            reports = [runtime.schemas.recluster(channel, force=args.force)]
        else:
            reports = runtime.schemas.recluster_all(only_pending=not args.force)
    finally:
        runtime.close()
    console = plain_console()
    if not reports:
        console.print("No channel has new thoughts since its last re-clustering.")
    for report in reports:
        if report.error:
            console.print(
                Text.assemble(f"{report.channel}: ", styled(f"failed: {report.error}", "red"))
            )
        elif report.skipped:
            console.print(f"{report.channel}: nothing new since the last re-clustering.")
        else:
            console.print(
                f"{report.channel}: {report.speakers} speakers, {report.runs_stored} runs stored,"
                f" {report.new_versions} new preconception versions, {report.removed_versions} removed"
                " (deleted messages)."
            )
    return 1 if any(report.error for report in reports) else 0
