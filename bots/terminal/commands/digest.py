"""``awai digest CHANNEL --out DIR``: the channel's schema digest as Markdown and a PNG map.

Re-clusters what is new first. The digest is recorded as the point the next one reports its
changes from, unless ``--preview`` is given, and only once both files are written: a digest that
could not be written was received by nobody, so the next one reports changes since the last one
that was. The files are named from the channel (``bots/terminal/outputs.py``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from awai_engine.schemas.digest import Digest
from awai_engine.settings import Settings
from awai_engine.visibility import Scopes
from bots.records import refuse_missing_data
from bots.terminal.lookup import find_channel
from bots.terminal.outputs import file_stem, write_file
from bots.terminal.say import fail, stdout
from bots.terminal.writing import writing_runtime


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "digest",
        help="Write a digest of a channel's preconceptions (Markdown and PNG) to a folder.",
    )
    parser.add_argument("channel", help="The channel name or key.")
    parser.add_argument("--out", type=Path, required=True, help="Folder to write into.")
    parser.add_argument(
        "--preview",
        action="store_true",
        help="Do not record it: the next digest reports changes since the last recorded one.",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    refuse_missing_data(settings)  # a mistyped --data-dir is said so, not created
    with writing_runtime(settings, "digest") as runtime:
        channel = find_channel(runtime, args.channel)
        if channel is None:
            return 2  # before the folder is made: a mistyped channel leaves nothing behind
        if not _made(args.out):
            return 2  # before the digest is made: one never written is never recorded
        stem = file_stem(channel)
        markdown, picture = args.out / f"{stem}-digest.md", args.out / f"{stem}-digest.png"

        def write(digest: Digest) -> None:
            write_file(markdown, digest.markdown.encode("utf-8"))
            write_file(picture, digest.png)

        digest = runtime.schemas.digest(
            channel, Scopes.everything(), record=not args.preview, deliver=write
        )
    width, height = digest.png_size
    stdout.print(f"{markdown}\n{picture} ({width}×{height})")
    return 0


def _made(out: Path) -> bool:
    """Make the folder to write into, or say why it cannot be."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        fail(f"cannot write to {out}: it is a file; give a folder to write the digest into.")
        return False
    except OSError as error:
        fail(f"cannot write to {out}: {error.strerror or error}")
        return False
    return True
