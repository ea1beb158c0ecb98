"""``awai forget CHANNEL --speaker NAME``: remove everything one speaker said in a channel.

``NAME`` must name one person only (:func:`bots.terminal.lookup.find_speaker`); when it could be
several, they are listed with their ids and ``--speaker-id ID`` names one exactly.

Their messages, thoughts and vectors go, and so does every schema version, summary and digest
entry made from them; tombstones keep the messages from being ingested again. It cannot be
undone, so it asks first unless ``--yes`` is given.
"""

from __future__ import annotations

import argparse
import sys

from awai_engine.errors import AwaiError
from awai_engine.reconcile import DamagedVectorsError
from awai_engine.schemas.service import ForgetReport
from awai_engine.settings import Settings
from bots.records import refuse_missing_data
from bots.runtime import Runtime
from bots.terminal.lookup import find_channel, find_speaker
from bots.terminal.say import fail, stderr, stdout, warn
from bots.terminal.transcript import channel_name
from bots.terminal.visible import one_line
from bots.terminal.writing import writing_runtime


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "forget", help="Remove one speaker's messages and preconceptions from a channel, for good."
    )
    parser.add_argument("channel", help="The channel name or key.")
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument(
        "--speaker",
        help="Display name or id of the speaker; refused when it could be more than one person.",
    )
    who.add_argument(
        "--speaker-id", dest="speaker_id", help="The speaker's platform id, matched exactly."
    )
    parser.add_argument("--yes", action="store_true", help="Do not ask for confirmation.")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    refuse_missing_data(settings)  # a mistyped --data-dir is said so, not created
    with writing_runtime(settings, "forget") as runtime:
        channel = find_channel(runtime, args.channel)
        if channel is None:
            return 2
        finished = [report for report in runtime.resumed if report.channel == channel]
        for report in finished:  # an interrupted forget, finished as the runtime opened
            stdout.print(
                f"{channel_name(channel)}: finished forgetting {one_line(report.speaker_id)},"
                " which was interrupted."
            )
        speaker = find_speaker(
            runtime,
            channel,
            args.speaker_id or args.speaker,
            quiet=bool(finished),
            by_id=args.speaker_id is not None,
        )
        if speaker is None:
            return 0 if finished else 2
        if not args.yes and not _confirmed(speaker, channel):
            stderr.print("Nothing was removed.")
            return 1
        try:
            report = _forgotten(runtime, channel, speaker)
        except Exception as error:  # whatever stopped it, the recorded erasure is the recovery
            return _interrupted(runtime, channel, speaker, error)
    stdout.print(
        f"{channel_name(channel)}: forgot {one_line(speaker)}: {report.messages} messages"
        f" (with their thoughts and vectors), {report.schema_versions} preconception versions,"
        f" {report.schema_runs} clusterings,"
        f" {report.summaries} summaries, {report.digest_entries} digest entries."
    )
    return 0


def _forgotten(runtime: Runtime, channel: str, speaker: str) -> ForgetReport:
    """Forget the speaker; a vector index found damaged on the way (a forget copies every
    vector of the channel) is rebuilt from SQL, told in one line, and the forget, recorded
    before anything was removed, is run again to its end."""
    try:
        return runtime.schemas.forget_speaker(channel, speaker)
    except DamagedVectorsError:
        for notice in runtime.repair([channel]).notices():
            warn(one_line(notice))
        return runtime.schemas.forget_speaker(channel, speaker)


def _interrupted(runtime: Runtime, channel: str, speaker: str, error: Exception) -> int:
    """Tell how far a forget that failed got (another process writing the channel's embedded
    vectors, a full disk): once begun it is recorded, and the next command finishes it."""
    try:
        recorded = any(item.pending_erasures for item in runtime.audit([channel]).channels)
    except Exception:  # the store is failing too: say what is known
        recorded = False
    said = error if isinstance(error, AwaiError | OSError) else f"{type(error).__name__}: {error}"
    if not recorded:
        fail(
            f"forgetting {one_line(speaker)} in {channel_name(channel)} failed before anything was removed ({said})."
        )
        return 2
    fail(
        f"forgetting {one_line(speaker)} in {channel_name(channel)} stopped part-way ({said}). It is recorded: the next"
        " awai command on this data folder (or awai doctor --repair) finishes it before"
        " anything else; until then awai doctor reports it."
    )
    return 1


def _confirmed(speaker: str, channel: str) -> bool:
    if not sys.stdin.isatty():
        fail("forgetting cannot be undone; add --yes to confirm.")
        return False
    answer = stdout.input(
        f"Remove everything {one_line(speaker)} said in {channel_name(channel)}?"
        " This cannot be undone [y/N] "
    )
    return answer.strip().lower() in {"y", "yes"}
