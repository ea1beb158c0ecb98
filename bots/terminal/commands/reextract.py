"""``awai reextract [CHANNEL]``: have the language model rewrite thoughts made offline.

While the model was unreachable, ingest stored each message's sentences as its thoughts, marked as
fallbacks. This asks the model again for those messages (the scheduled job does the same every
``AWAI_LLM__REEXTRACT_MINUTES``); each one is an edit at the same position, written from the
message and the utterances before it only, so no reading of an earlier message changes. A message
the model still cannot answer for stays marked for the next run.
"""

from __future__ import annotations

import argparse

from awai_engine.settings import Settings
from bots.records import refuse_missing_data
from bots.terminal.lookup import find_channel
from bots.terminal.say import stdout
from bots.terminal.transcript import channel_name
from bots.terminal.writing import writing_runtime


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reextract", help="Rewrite with the language model the thoughts that were made offline."
    )
    parser.add_argument("channel", nargs="?", help="One channel name or key (default: all).")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    refuse_missing_data(settings)  # a mistyped --data-dir is said so, not created
    if settings.llm.api_key is None:
        stdout.print(
            "No language model is configured (set ANTHROPIC_API_KEY or AWAI_LLM__API_KEY):"
            " there is nothing to re-extract with."
        )
        return 2
    with writing_runtime(settings, "reextract") as runtime:
        if args.channel:
            channel = find_channel(runtime, args.channel)
            if channel is None:
                return 2
            channels = [channel]
        else:
            channels = runtime.channels()
        reports = [runtime.engine.reextract(channel) for channel in channels]
    for report in reports:
        if report.pending == 0:
            stdout.print(f"{channel_name(report.channel)}: no thoughts made offline.")
        else:
            stdout.print(
                f"{channel_name(report.channel)}: {report.rewritten} of {report.pending} messages rewritten by"
                " the language model"
                + (
                    f"; {report.pending - report.rewritten} still offline."
                    if report.rewritten < report.pending
                    else "."
                )
            )
    return 1 if any(report.rewritten < report.pending for report in reports) else 0
