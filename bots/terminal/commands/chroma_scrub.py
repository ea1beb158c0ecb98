"""``awai chroma-scrub PATH``: on a Chroma server's host, remove what it keeps of dropped
collections.

AWAI forgets a message on a Chroma server by rewriting the channel's vectors into a new collection
and dropping the old one. The server deletes the old collection's rows, but leaves its index
folder on disk (chroma-core/chroma#5259): the vectors of every message it held, the forgotten ones
included. An embedded Chroma is scrubbed by AWAI itself after every removal; a server's folder is
not AWAI's to reach, so its operator runs this there (after ``chroma vacuum --path PATH --force``,
e.g. nightly). It needs no AWAI settings and never talks to the server.
"""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

from awai_engine.errors import AwaiError
from awai_engine.settings import Settings
from bots.runtime import scrub_chroma_folder
from bots.terminal.say import plain_console


class ChromaFolderError(AwaiError, ValueError):
    """The path given is not a Chroma data folder."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "chroma-scrub",
        help="On a Chroma server's host: remove the index folders of dropped collections.",
    )
    parser.add_argument("path", type=Path, help="The server's data folder (chroma run --path).")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    path: Path = args.path
    if not (path / "chroma.sqlite3").is_file():
        raise ChromaFolderError(
            f"{path} is not a Chroma data folder: it has no chroma.sqlite3 (give the folder the"
            " server was started with, chroma run --path)."
        )
    try:
        removed = scrub_chroma_folder(path)
    except sqlite3.DatabaseError as error:
        raise ChromaFolderError(f"Cannot read {path / 'chroma.sqlite3'}: {error}.") from error
    console = plain_console()
    if removed:
        console.print(
            f"{path}: removed {len(removed)} index folder(s) of dropped collections"
            f" ({', '.join(removed)}) and vacuumed chroma.sqlite3."
        )
    else:
        console.print(f"{path}: no index folder of a dropped collection; vacuumed chroma.sqlite3.")
    return 0
