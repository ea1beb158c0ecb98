"""``awai recluster [CHANNEL]``: re-cluster the speakers' schemas now (what the scheduler does).

Without a channel, every channel with new thoughts since its last re-clustering; ``--force`` also
re-checks channels with nothing new. One failing channel is reported and the others go on. On
a terminal, a bar shows each channel's runs as they are made: catching up over an imported
channel clusters every speaker at each fixed point of their history.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

from awai_engine.settings import Settings
from bots.records import refuse_missing_data
from bots.terminal.lookup import find_channel
from bots.terminal.say import plain_console, stderr, styled
from bots.terminal.transcript import channel_name
from bots.terminal.visible import one_line
from bots.terminal.writing import writing_runtime


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
    refuse_missing_data(settings)  # a mistyped --data-dir is said so, not created
    with (
        writing_runtime(settings, "recluster") as runtime,
        Progress(
            TextColumn("{task.description}", markup=False),  # a channel name is no markup
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=stderr,
            transient=True,
            disable=not stderr.is_terminal,
        ) as bar,
    ):

        def progress(channel: str) -> Callable[[int, int], None]:
            task = bar.add_task(f"{channel_name(channel)}: runs", total=None)
            return lambda done, total: bar.update(task, completed=done, total=total)

        if args.channel:
            channel = find_channel(runtime, args.channel)
            if channel is None:
                return 2
            reports = [
                runtime.schemas.recluster(channel, force=args.force, progress=progress(channel))
            ]
        else:
            reports = runtime.schemas.recluster_all(only_pending=not args.force, progress=progress)
    console = plain_console()
    if not reports:
        console.print("No channel has new thoughts since its last re-clustering.")
    for report in reports:
        shown = channel_name(report.channel)
        if report.error:
            console.print(
                Text.assemble(f"{shown}: ", styled(f"failed: {one_line(report.error)}", "red"))
            )
        elif report.skipped:
            console.print(f"{shown}: nothing new since the last re-clustering.")
        else:
            console.print(
                f"{shown}: {report.speakers} speakers, {report.runs_stored} runs stored,"
                f" {report.new_versions} new preconception versions, {report.removed_versions} removed"
                " (deleted messages)."
            )
    return 1 if any(report.error for report in reports) else 0
