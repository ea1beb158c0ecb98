"""``awai doctor [--repair] [--channel NAME]``: do SQL and Chroma agree? Repair what does not.
It also says whether the language model is on and, with a key, whether key and model answer
(``bots/terminal/model_status.py``).

Every start already repairs what a crash can leave behind, after a cheap check of counts; the
doctor compares every id, shows what it found in a table, and with ``--repair`` re-embeds missing
vectors, finishes half-done writes, edits and deletes, removes orphan vectors, rebuilds a vector
index whose files are damaged (cut short by a crash or a full disk, bytes changed, its folder or
Chroma's own database damaged: found before Chroma loads them, ``storage/hnsw_files.py``) from
the stored messages, removes a read-model file a part of which is not what was written (every
part read whole: a start trusts an unchanged vectors file it checked before), finishes a forget or delete that was interrupted (a removal unfinished is
never reported as "ok"), and checks again.
With the embedded Chroma, ``--repair`` takes the data folder's writer lock
(:mod:`bots.terminal.writing`): it waits for a command writing there and is refused while a bot
runs on the folder; a look without ``--repair`` runs beside them and says who is writing, since
what a writer has in flight shows as unfinished until it ends.
"""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table
from rich.text import Text

from awai_engine.reconcile import ChannelReport, ReconcileReport
from awai_engine.settings import Settings
from bots.records import Records, missing_data
from bots.runtime import open_runtime
from bots.terminal.model_status import report_model
from bots.terminal.reply_model_status import report_reply_model
from bots.terminal.say import plain_console, styled
from bots.terminal.transcript import channel_key, channel_name
from bots.terminal.visible import one_line
from bots.terminal.writing import writer, writer_lock

# Each count: its column's heading, its field, and how the caption names it in a sentence.
COLUMNS = (
    ("writes unfinished", "unfinished_writes", "unfinished writes"),
    ("edits unfinished", "unfinished_edits", "unfinished edits"),
    ("vectors missing", "missing_vectors", "missing vectors"),
    ("orphan vectors", "orphan_vectors", "orphan vectors"),
    ("deletes unfinished", "unfinished_deletes", "unfinished deletes"),
    ("thoughts lost", "lost_thoughts", "lost thoughts"),
    ("removals unfinished", "pending_erasures", "unfinished removals"),
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor", help="Check that stored messages and their vectors agree (--repair fixes them)."
    )
    parser.add_argument("--repair", action="store_true", help="Repair what was found.")
    parser.add_argument(
        "--channel", action="append", help="Only this channel (name or key; repeatable)."
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    channels = [channel_key(name) for name in args.channel] if args.channel else None
    console = plain_console()
    model_ok = report_model(settings.llm, console) & report_reply_model(console)
    if not model_ok and args.repair:
        return 1  # a repair starts the engine, which cannot start without the model file
    code = _check_store(args, settings, channels, console)
    return code if model_ok else max(code, 1)


def _check_store(
    args: argparse.Namespace, settings: Settings, channels: list[str] | None, console: Console
) -> int:
    """The store's part: SQL and vectors compared, and repaired with ``--repair``."""
    missing = missing_data(settings)
    if missing is not None:  # nothing to compare; a new install checks its key before storing
        console.print(missing)
        return 0
    if not args.repair:
        # No embedding model needed just to look, nor a folder that can be written.
        busy = writer(settings)
        with Records.open(settings, read_only=True) as records:
            found = records.audit(channels)
            damaged = _among(records.damaged_read_models(), channels)
        console.print(report_table(found, "What awai doctor found"))
        for channel in damaged:
            console.print(
                f"The read-model file of {channel_name(channel)} is damaged (a part of it is not"
                " what was written); --repair removes it, and the next start rebuilds it from"
                " the stored messages."
            )
        if busy is not None:
            console.print(
                f"{busy.named()} is writing into {settings.data_dir}: what it has in flight"
                " shows as unfinished until it is written."
            )
        if not found.clean or damaged:
            console.print(
                Text.assemble("Run ", styled("awai doctor --repair", "bold"), " to repair it.")
            )
        return 0 if found.clean and not damaged else 1
    with writer_lock(settings, "doctor --repair"), open_runtime(settings, repair=False) as runtime:
        repaired = runtime.repair(channels)
        resumed = runtime.schemas.resume_erasures()
        removed = _among(runtime.damaged_read_models(), channels)
        for channel in removed:
            runtime.remove_read_model(channel)
        after = runtime.audit(channels)
    console.print(report_table(repaired, "What awai doctor found and repaired"))
    for channel in removed:
        console.print(
            f"Removed the damaged read-model file of {channel_name(channel)}: the next start"
            " rebuilds it from the stored messages."
        )
    for report in resumed:
        console.print(
            f"Finished forgetting {one_line(report.speaker_id)} in {channel_name(report.channel)}."
        )
    if not after.clean:
        console.print(report_table(after, "Still wrong after the repair"))
    return 0 if after.clean else 1


def _among(found: list[str], channels: list[str] | None) -> list[str]:
    """``found``, or those of it among ``channels`` when the doctor was given some."""
    return found if channels is None else [channel for channel in found if channel in channels]


def report_table(report: ReconcileReport, title: str) -> Table:
    """One row per channel. Only the counts some channel has are columns: eleven columns fit no
    ordinary terminal (every name was cut to "termi…"), and a count of 0 everywhere says no more
    than the caption naming what was checked."""
    shown = [
        (heading, field)
        for heading, field, _ in COLUMNS
        if any(getattr(channel, field) for channel in report.channels)
    ]
    named = [words for _, _, words in COLUMNS]
    checked = f"{', '.join(named[:-1])} and {named[-1]}"
    table = Table(
        title=title,
        title_justify="left",
        # Worded as a search, so a reader does not take the list for what was found.
        caption=f"Looked for {checked}: "
        + ("found none." if not shown else "the columns above count what was found."),
        caption_justify="left",
    )
    examples = any(channel.examples for channel in report.channels)
    table.add_column("channel", overflow="fold")
    table.add_column("vector index", overflow="fold")
    for heading, _ in shown:
        table.add_column(heading, justify="right")
    table.add_column("state")
    if examples:
        table.add_column("e.g.", overflow="fold")
    for channel in report.channels:
        table.add_row(
            channel_name(channel.channel),
            _index(channel),
            *(str(getattr(channel, field)) for _, field in shown),
            _state(channel),
            *([", ".join(one_line(example) for example in channel.examples)] if examples else []),
        )
    if not report.channels:
        table.add_row("(no channels stored)", "", *("" for _ in shown), "")
    return table


def _index(channel: ChannelReport) -> Text:
    if channel.rebuilt_thoughts is not None:
        return styled(f"rebuilt ({channel.rebuilt_thoughts:,} thoughts)", "green")
    return styled("damaged", "red") if channel.damaged_index else styled("readable", "green")


def _state(channel: ChannelReport) -> Text:
    if channel.not_repaired_because:
        return styled(f"not repaired: {channel.not_repaired_because}", "red")
    if not channel.problems:
        return styled("ok", "green")
    return styled("repaired", "green") if channel.repaired else styled("needs repair", "yellow")
