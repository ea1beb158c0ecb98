"""Loading a channel's persisted read model against building it, at a size too slow to ingest.

Run: ``.venv/bin/python -m bench.read_model_file [--size 100000] [--repeats 3]``.
A timeline of ``--size`` messages of real chat lines with their real vectors (cycled, as in
``bench.corpus``) is built by appending every message, which is what a rebuild does after it
has read SQL and Chroma (so the rebuild measured here is a lower bound: it leaves out those
reads), written with ``storage.read_model_files``, then loaded ``--repeats`` times, each time
followed by a search and a word query of the latest message (what a first reading touches).
``bench.read_latency`` measures the whole first reading, SQL and Chroma included.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from awai_engine.embedding import Embedder
from awai_engine.settings import Settings
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef
from bench.corpus import chat_lines, synthetic_channel
from storage.read_model_files import ReadModelFiles, Snapshot

CHANNEL = "bench:local:file"


def first_touch(timeline: Timeline) -> None:
    """What a first reading of the latest message asks of the read model."""
    latest = timeline.messages[-1]
    rows = np.arange(latest.first_row, latest.first_row + len(latest.thoughts))
    timeline.search(rows, latest.first_row)
    timeline.lexicon.matches(latest.text, len(timeline.messages) - 1, 20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lines", type=int, default=2000)
    args = parser.parse_args()
    console = Console()
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    embedder = Embedder(settings.embedding)
    make = synthetic_channel(CHANNEL, args.size, embedder, chat_lines(args.lines))
    started = time.perf_counter()
    timeline = Timeline(dimension=embedder.dimension, index=settings.recall_index)
    for item in make(0, args.size):
        u = item.utterance
        timeline.append(
            MessageRef(
                message_id=u.message_id,
                speaker_id=u.speaker_id,
                speaker_name=u.speaker_name,
                ts=u.ts,
                position=len(timeline.messages),
                thread_root=u.thread_root,
                scope=u.scope,
            ),
            u.text,
            item.extraction.summary,
            item.extraction.thoughts,
            item.vectors,
        )
    first_touch(timeline)
    built = time.perf_counter() - started
    loads: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        files = ReadModelFiles(Path(folder))
        started = time.perf_counter()
        files.save(CHANNEL, Snapshot(timeline, args.size, "", 0), lambda *_: True, None)
        written = time.perf_counter() - started
        size = sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())
        for _ in range(args.repeats):
            started = time.perf_counter()
            loaded = files.load(CHANNEL, settings.recall_index)
            assert loaded is not None and len(loaded.timeline.messages) == args.size
            first_touch(loaded.timeline)
            loads.append(time.perf_counter() - started)
            del loaded
    table = Table(
        title=f"Read model of {args.size:,} messages ({timeline.rows:,} thoughts), one run"
    )
    for column in ("what", "seconds", "vs building"):
        table.add_column(column, justify="right")
    for name, seconds in (
        ("built by appending every message (rebuild without SQL/Chroma)", built),
        (f"written to its file ({size / 2**20:,.0f} MiB)", written),
        (f"loaded from its file, median of {args.repeats}", statistics.median(loads)),
    ):
        table.add_row(name, f"{seconds:.2f}", f"{seconds / built:.3f}")
    console.print(table)


if __name__ == "__main__":
    main()
