"""``awai demo``: read one message of a sample conversation shipped with AWAI, offline."""

from __future__ import annotations

import argparse

from rich.console import Group

from awai_engine.engine import UnknownMessageError
from awai_engine.samples import SAMPLES, Sample
from awai_engine.settings import Settings
from awai_engine.visibility import Scopes
from bots.terminal.commands.common import load_and_ingest, message_id, no_such_message
from bots.terminal.line_breaking import WrappedText
from bots.terminal.render import reading_json, render_reading
from bots.terminal.say import fail, stdout
from bots.terminal.writing import writing_runtime


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="Read a message of a shipped sample conversation.")
    parser.add_argument("--lang", choices=sorted(SAMPLES), default="en", help="Which sample.")
    parser.add_argument(
        "--message", type=message_id, help="Another message id of the sample to read."
    )
    parser.add_argument("--json", action="store_true", help="Print the reading as JSON.")
    parser.add_argument(
        "--details", action="store_true", help="Also show the numbers behind each connection."
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    sample = SAMPLES[args.lang]
    with writing_runtime(settings_for(sample, settings), "demo") as runtime:
        done = load_and_ingest(runtime, sample.path, sample.channel, quiet=args.json)
        message = args.message or sample.featured_message
        try:
            reading = runtime.engine.read(done.transcript.channel, message, Scopes.everything())
        except UnknownMessageError:
            fail(no_such_message(runtime, done, "is in the sample", message))
            return 2
        if args.json:
            print(reading_json(reading))
        else:
            # The sample in words: which embedding model read it is the operator's to know
            # (``awai doctor``, the log), not a reader's.
            description = WrappedText(sample.description, style="dim")
            # In a group: rich's print merges a bare Text into its own, losing the Japanese rules.
            stdout.print(Group(description))
            render_reading(reading, stdout, details=args.details)
    return 0


def settings_for(sample: Sample, settings: Settings) -> Settings:
    """The sample's embedding backend, unless the user chose a model (AWAI_EMBEDDING__*)."""
    chosen = {"backend", "model"} & settings.embedding.model_fields_set
    if sample.embedding_backend is None or chosen:
        return settings
    embedding = settings.embedding.model_copy(update={"backend": sample.embedding_backend})
    return settings.model_copy(update={"embedding": embedding})
