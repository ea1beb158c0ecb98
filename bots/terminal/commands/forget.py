"""``awai forget CHANNEL --speaker NAME``: remove everything one speaker said in a channel.

Their messages, thoughts and vectors go, and so does every schema version, summary and digest
entry made from them; tombstones keep the messages from being ingested again. It cannot be
undone, so it asks first unless ``--yes`` is given.
"""

from __future__ import annotations

import argparse
import sys

from awai_engine.settings import Settings
from bots.terminal.lookup import find_channel, find_speaker
from bots.terminal.say import fail, stderr, stdout
from bots.terminal.visible import one_line
from bots.terminal.writing import writing_runtime


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "forget", help="Remove one speaker's messages and preconceptions from a channel, for good."
    )
    parser.add_argument("channel", help="The channel name or key.")
    parser.add_argument("--speaker", required=True, help="Display name or id of the speaker.")
    parser.add_argument("--yes", action="store_true", help="Do not ask for confirmation.")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    with writing_runtime(settings) as runtime:
        channel = find_channel(runtime, args.channel)
        if channel is None:
            return 2
        finished = [report for report in runtime.resumed if report.channel == channel]
        for report in finished:  # an interrupted forget, finished as the runtime opened
            stdout.print(
                f"{one_line(channel)}: finished forgetting {one_line(report.speaker_id)},"
                " which was interrupted."
            )
        speaker = find_speaker(runtime, channel, args.speaker, quiet=bool(finished))
        if speaker is None:
            return 0 if finished else 2
        if not args.yes and not _confirmed(speaker, channel):
            stderr.print("Nothing was removed.")
            return 1
        report = runtime.schemas.forget_speaker(channel, speaker)
    stdout.print(
        f"{one_line(channel)}: forgot {one_line(speaker)}: {report.messages} messages (with their thoughts and"
        f" vectors), {report.schema_versions} preconception versions,"
        f" {report.schema_runs} clusterings,"
        f" {report.summaries} summaries, {report.digest_entries} digest entries."
    )
    return 0


def _confirmed(speaker: str, channel: str) -> bool:
    if not sys.stdin.isatty():
        fail("forgetting cannot be undone; add --yes to confirm.")
        return False
    answer = stdout.input(
        f"Remove everything {one_line(speaker)} said in {one_line(channel)}?"
        " This cannot be undone [y/N] "
    )
    return answer.strip().lower() in {"y", "yes"}
