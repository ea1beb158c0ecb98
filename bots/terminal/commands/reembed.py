"""``awai reembed CHANNEL``: embed a channel's thoughts again with the configured model.

A channel keeps the model that made its vectors, and ingesting with another model is refused
(similarities between two models' vectors mean nothing). After changing ``AWAI_EMBEDDING__*``,
this command re-embeds every stored thought with the new model and records it, so the channel can
be read and written again. Stop the bots that write to the channel while it runs.
"""

from __future__ import annotations

import argparse

from rich.progress import Progress

from awai_engine.settings import Settings
from bots.records import refuse_missing_data
from bots.terminal.say import fail, stderr
from bots.terminal.transcript import channel_key, channel_name
from bots.terminal.writing import writing_runtime


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reembed", help="Re-embed a channel's thoughts with the configured embedding model."
    )
    parser.add_argument("channel", help="The channel name or key (as given to ingest or read).")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    refuse_missing_data(settings)  # a mistyped --data-dir is said so, not created
    with writing_runtime(settings, "reembed") as runtime:
        embedder = runtime.engine.embedder
        channel = channel_key(args.channel)
        info = runtime.channel_info(channel)
        if info is None:
            known = ", ".join(channel_name(known) for known in runtime.channels()) or "none yet"
            fail(f'No channel "{channel_name(channel)}" is stored (known: {known}).')
            return 2
        if (info.embedding_model, info.dimension) == (embedder.model_name, embedder.dimension):
            stderr.print(
                f"{channel_name(channel)} is already embedded with {embedder.model_name}; nothing to do."
            )
            return 0
        with Progress(console=stderr, transient=True) as progress:
            task = progress.add_task(f"Re-embedding with {embedder.model_name}", total=None)
            count = runtime.reembed(
                channel,
                progress=lambda done, total: progress.update(task, completed=done, total=total),
            )
        stderr.print(
            f"{channel_name(channel)}: {count} thoughts re-embedded with {embedder.model_name}"
            f" ({embedder.dimension} dimensions); they were made by {info.embedding_model}"
            f" ({info.dimension})."
        )
        return 0
