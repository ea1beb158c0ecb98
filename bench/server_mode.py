"""Embedded vs server mode at one channel size: ingest throughput and read-context latency.

Embedded: SQLite and Chroma's ``PersistentClient`` in one folder (the default). Server: PostgreSQL
and a ``chroma run`` server on 127.0.0.1, what ``deploy/README.md`` sets up. Both are measured in
one run on the same synthetic channel (real chat lines and their real vectors, cycled; see
``bench/corpus.py``), the way ``bench/read_latency.py`` measures the embedded store:

- store writes: the whole channel through ``store.save`` in batches of 1,000 (vectors precomputed,
  so this is what storage costs);
- ingest: 500 new messages through ``engine.ingest`` at the end of the full channel (thought
  extraction and embedding included, one call per 50 messages as a bot's events arrive);
- the cold load of the read model (every synced row and vector, once per process and channel);
- read-context latency p50/p95 of the latest and of an old message (each read also checks the
  channel's revision in SQL).

Run: ``eval "$(deploy/postgres-local.sh)" && .venv/bin/python -m bench.server_mode [--size 100000]``
(``--postgres-url`` or ``AWAI_TEST_POSTGRES_URL``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.progress import track
from rich.table import Table

from awai_engine.backends.offline import OfflineBackend
from awai_engine.embedding import Embedder
from awai_engine.engine import Engine
from awai_engine.settings import Settings
from awai_engine.values import Utterance
from bench.corpus import chat_lines, synthetic_channel
from bench.read_latency import percentile
from storage.store import AwaiStore
from tests.backends.servers import ChromaServer, PostgresDatabases

WRITE_BATCH = 1000
INGEST_MESSAGES = 500
INGEST_CALL = 50


@dataclass
class Measured:
    mode: str
    write_seconds: float = 0.0
    ingest_seconds: float = 0.0
    cold_seconds: float = 0.0
    reads: dict[str, list[float]] = field(default_factory=dict)


def measure(
    mode: str, settings: Settings, size: int, embedder: Embedder, lines: list[str], reads: int
) -> Measured:
    console = Console()
    result = Measured(mode)
    store = AwaiStore.open(settings)
    engine = Engine(settings, store, embedder, OfflineBackend())
    channel = "bench:local:server-mode"
    store.ensure_channel(channel, embedder.model_name, embedder.dimension)
    make = synthetic_channel(channel, size, embedder, lines)
    started = time.perf_counter()
    for start in track(
        range(0, size, WRITE_BATCH), description=f"{mode}: writing", console=console
    ):
        store.save(channel, make(start, min(size, start + WRITE_BATCH)))
    result.write_seconds = time.perf_counter() - started

    new = [
        Utterance(
            channel=channel,
            message_id=f"n{n:05d}",
            speaker_id=f"user{n % 40}",
            speaker_name=f"user{n % 40}",
            text=f"{lines[(n * 7919) % len(lines)]} ({mode} #{n})",  # not in the embedding cache
            ts=1_600_000_000.0 + size + n,
        )
        for n in range(INGEST_MESSAGES)
    ]
    started = time.perf_counter()
    for start in range(0, INGEST_MESSAGES, INGEST_CALL):
        engine.ingest(new[start : start + INGEST_CALL])
    result.ingest_seconds = time.perf_counter() - started

    store._timelines.pop(channel, None)  # a cold load, as a newly started process does it
    started = time.perf_counter()
    store.timeline(channel)
    result.cold_seconds = time.perf_counter() - started
    for label, message_id in (("latest", new[-1].message_id), ("old (1%)", f"m{size // 100:07d}")):
        timings = []
        for _ in range(reads):
            started = time.perf_counter()
            engine.context(channel, message_id)
            timings.append((time.perf_counter() - started) * 1000)
        result.reads[label] = timings
    store.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--reads", type=int, default=60)
    parser.add_argument("--lines", type=int, default=4000, help="Distinct real lines to cycle.")
    parser.add_argument("--postgres-url", default=os.environ.get("AWAI_TEST_POSTGRES_URL"))
    args = parser.parse_args()
    if not args.postgres_url:
        parser.error('give --postgres-url or run: eval "$(deploy/postgres-local.sh)"')
    console = Console()
    embedder = Embedder(Settings(_env_file=None).embedding)  # type: ignore[call-arg]
    lines = chat_lines(args.lines)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        embedded = Settings(data_dir=root / "embedded", _env_file=None)  # type: ignore[call-arg]
        chroma = ChromaServer(root / "chroma-server")
        postgres = PostgresDatabases(args.postgres_url)
        try:
            server = Settings(  # type: ignore[call-arg]
                data_dir=root / "server",
                database_url=postgres.new_database_url(),
                chroma_url=chroma.new_database_url(),
                _env_file=None,
            )
            results = [
                measure("embedded", embedded, args.size, embedder, lines, args.reads),
                measure("server", server, args.size, embedder, lines, args.reads),
            ]
        finally:
            chroma.stop()
            postgres.drop_all()
    report(console, args.size, results)


def report(console: Console, size: int, results: list[Measured]) -> None:
    embedded, server = results
    rows: list[tuple[str, float, float, str]] = [
        (
            "store writes (messages/s)",
            size / embedded.write_seconds,
            size / server.write_seconds,
            ".0f",
        ),
        (
            f"engine.ingest, {INGEST_MESSAGES} new (messages/s)",
            INGEST_MESSAGES / embedded.ingest_seconds,
            INGEST_MESSAGES / server.ingest_seconds,
            ".0f",
        ),
        ("cold read-model load (s)", embedded.cold_seconds, server.cold_seconds, ".1f"),
    ]
    for label in embedded.reads:
        for name, fraction in (("p50", 0.5), ("p95", 0.95)):
            rows.append(
                (
                    f"read context, {label}, {name} (ms)",
                    percentile(embedded.reads[label], fraction),
                    percentile(server.reads[label], fraction),
                    ".1f",
                )
            )
    table = Table(title=f"Embedded vs server mode at {size:,} messages, one run")
    for column in ("measure", "embedded", "server", "server / embedded"):
        table.add_column(column, justify="right")
    for label, left, right, style in rows:
        table.add_row(label, format(left, style), format(right, style), f"{right / left:.2f}")
    console.print(table)
    console.print(
        f"medians of reads: embedded {statistics.median(embedded.reads['latest']):.1f} ms,"
        f" server {statistics.median(server.reads['latest']):.1f} ms (latest message)"
    )


if __name__ == "__main__":
    main()
