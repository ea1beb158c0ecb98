"""``awai schemas CHANNEL [--speaker NAME] [--as-of MESSAGE_ID]``: the speakers' preconceptions.

Without ``--as-of``: as of now. With it: exactly what a reading of that message uses, i.e.
clustered on each speaker's first thoughts up to the fixed point below what they had said before
it (``awai_engine/schemas/fixed_points.py``; the run the re-clustering stored, else clustered now).
"""

from __future__ import annotations

import argparse
import functools

from rich.table import Column, Table
from rich.text import Text

from awai_engine.schemas.naming import listed
from awai_engine.settings import Settings
from awai_engine.text import shorten
from bots.runtime import open_runtime
from bots.terminal.commands.common import message_id, speaker_name
from bots.terminal.lookup import find_channel, find_speaker
from bots.terminal.say import fail, plain_console, styled
from bots.terminal.transcript import channel_name
from bots.terminal.visible import one_line, terminal_json
from bots.terminal.writing import writer_lock

EXAMPLE_WIDTH = 70


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "schemas", help="Show each speaker's preconceptions in a channel."
    )
    parser.add_argument("channel", help="The channel name or key.")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--speaker", type=speaker_name, help="Only this speaker (display name or id).")
    who.add_argument(
        "--speaker-id", dest="speaker_id", type=speaker_name, help="Only this speaker id, exactly."
    )
    parser.add_argument(
        "--as-of",
        dest="as_of",
        type=message_id,
        metavar="MESSAGE_ID",
        help="As a reading of this message sees them.",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="Print JSON instead of tables: every member, name and keyphrases of each.",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    finishing = functools.partial(writer_lock, settings, "schemas")  # only to finish a removal
    with open_runtime(settings, read_only=True, finishing_lock=finishing) as runtime:
        channel = find_channel(runtime, args.channel)
        if channel is None:
            return 2
        speaker = None
        if args.speaker or args.speaker_id:
            speaker = find_speaker(
                runtime,
                channel,
                args.speaker_id or args.speaker,
                by_id=args.speaker_id is not None,
            )
            if speaker is None:
                return 2
        try:
            found = runtime.schemas.schemas(channel, speaker, before_message=args.as_of)
        except LookupError as error:
            fail(str(error))
            return 2
    if args.json:
        print(terminal_json([item.model_dump() for item in found], indent=2))
        return 0
    console = plain_console()
    when = f" before message {one_line(args.as_of)}" if args.as_of else ""
    if not found:
        console.print(f"No thoughts{when} in {channel_name(channel)}.")
    for item in found:
        # Whether the scheduled re-clustering stored these groups or they were grouped for
        # this command: the words say it without the engine's "run" and "fixed point".
        origin = (
            "as the last re-clustering grouped them"
            if item.stored
            else "grouped for this look, as no re-clustering has stored groups yet"
        )
        held = f", grouped on the first {item.clustered}" if item.clustered < item.thoughts else ""
        table = Table(
            "preconception",
            "thoughts",
            # Folded, not cut: an example is already shortened, with its closing quote, and
            # Japanese has no spaces to wrap at.
            Column("examples (most central)", overflow="fold"),
            "last in",
            title=f"{one_line(item.speaker_name)}: {item.thoughts} thoughts{when}{held}, {origin}",
            title_justify="left",
            show_lines=True,
        )
        for schema in item.schemas:
            more = [phrase for phrase in schema.keyphrases if phrase not in schema.name]
            name = Text.assemble(styled(one_line(schema.name), "bold"))
            if more:
                also = listed([one_line(phrase) for phrase in more])
                name.append_text(styled(f"\nalso: {also}", "dim"))
            table.add_row(
                name,
                str(schema.size),
                "\n".join(
                    f"“{one_line(shorten(text, EXAMPLE_WIDTH))}”" for text in schema.examples
                ),
                one_line(schema.as_of_message_id),  # ids and versions are in --json, for scripts
            )
        if item.schemas:
            console.print(table)
        else:
            console.print(
                Text.assemble(
                    styled(one_line(item.speaker_name), "bold"),
                    f": no preconception{when or ' yet'}.",
                )
            )
    return 0
