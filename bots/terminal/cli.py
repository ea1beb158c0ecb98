"""``awai``: the terminal adapter's entry point.

Each subcommand lives in its own module under ``bots.terminal.commands`` and registers itself on
the parser; this module only wires them up, loads settings once, and turns expected errors into
one clear line and a non-zero exit code instead of a traceback (every expected error derives
from :class:`~awai_engine.errors.AwaiError`; a full disk is an ``OSError`` and said as such).
"""

from __future__ import annotations

import argparse
import errno
import logging
import sys
from collections.abc import Sequence

from awai_engine.errors import AwaiError
from bots.settings import load_settings
from bots.terminal.commands import COMMANDS
from bots.terminal.say import VisibleFormatter, fail, warn
from storage.heap import keep_one_arena, overwrite_freed_memory


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="awai",
        description="Read a chat message in the context of what was said before it, and only before it.",
    )
    parser.add_argument(
        "--data-dir", help="Where AWAI keeps its data (default: AWAI_DATA_DIR or ./awai-data)."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="Log what AWAI is doing.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(subparsers)
    # Each command's --help opens with the line `awai --help` lists for it (argparse shows a
    # subcommand's `help` only in its parent's list).
    for listed in subparsers._choices_actions:
        shown = subparsers.choices[listed.dest]
        shown.description = shown.description or listed.help
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    overwrite_freed_memory()  # first: no message may be in memory freed before it (storage.heap)
    keep_one_arena()  # and before any thread starts
    parser = build_parser()
    args = parser.parse_args(argv)
    logged = logging.StreamHandler()
    logged.setFormatter(VisibleFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, handlers=[logged])
    try:
        overrides = {"data_dir": args.data_dir} if args.data_dir else {}
        settings = load_settings(**overrides)
        return int(args.run(args, settings) or 0)
    except AwaiError as error:
        fail(str(error))
        return 2
    except OSError as error:
        # Ingest says what it kept of a full disk itself; this is a full disk met anywhere else
        # (a repair at start-up, a re-embedding), which leaves what was stored as it was.
        if error.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        where = f": {error.filename}" if error.filename else ""
        fail(
            f"The disk is full ({error.strerror}{where}): the command stopped, and what was"
            " stored before stays. Free some space and run the same command again."
        )
        return 2
    except KeyboardInterrupt:
        warn("awai: interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
