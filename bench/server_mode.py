"""Embedded vs server mode at one channel size: ingest throughput and read-context latency.

Embedded: SQLite and Chroma's ``PersistentClient`` in one folder (the default). Server: PostgreSQL
and a ``chroma run`` server on 127.0.0.1, what ``deploy/README.md`` sets up. Both are measured in
one run on the same synthetic channel (real chat lines and their real vectors, cycled; see
``bench/corpus.py``), the way ``bench/read_latency.py`` measures the embedded store, every step
alternating between the two so that the load of a shared machine falls on both alike:

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
from awai_engine.visibility import EVERYTHING
from bench.corpus import chat_lines, synthetic_channel
from bench.read_latency import percentile
from storage.store import AwaiStore
from tests.backends.servers import ChromaServer, PostgresDatabases

WRITE_BATCH = 1000
INGEST_MESSAGES = 500
INGEST_CALL = 50


@dataclass
class Mode:
    """One storage configuration under test and what was measured on it."""

    name: str
    store: AwaiStore
    engine: Engine
    write_seconds: float = 0.0
    ingest_seconds: float = 0.0
    cold_seconds: float = 0.0
    reads: dict[str, list[float]] = field(default_factory=dict)


CHANNEL = "bench:local:server-mode"


def open_mode(name: str, settings: Settings, embedder: Embedder) -> Mode:
    store = AwaiStore.open(settings)
    store.ensure_channel(CHANNEL, embedder.model_name, embedder.dimension)
    return Mode(name, store, Engine(settings, store, embedder, OfflineBackend()))


def timed(action) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def measure(modes: list[Mode], size: int, embedder: Embedder, lines: list[str], reads: int) -> None:
    """Every step alternates between the modes, so a change in the machine's load hits both."""
    make = synthetic_channel(CHANNEL, size, embedder, lines)
    for start in track(range(0, size, WRITE_BATCH), description="writing", console=Console()):
        batch = make(start, min(size, start + WRITE_BATCH))
        for mode in modes:
            mode.write_seconds += timed(
                lambda mode=mode, batch=batch: mode.store.save(CHANNEL, batch)
            )

    for start in range(0, INGEST_MESSAGES, INGEST_CALL):
        for mode in modes:
            new = [
                Utterance(
                    channel=CHANNEL,
                    message_id=f"n{n:05d}",
                    speaker_id=f"user{n % 40}",
                    speaker_name=f"user{n % 40}",
                    # its own text per mode: a cached embedding would flatter the second one
                    text=f"{lines[(n * 7919) % len(lines)]} ({mode.name} #{n})",
                    ts=1_600_000_000.0 + size + n,
                )
                for n in range(start, start + INGEST_CALL)
            ]
            mode.ingest_seconds += timed(lambda mode=mode, new=new: mode.engine.ingest(new))

    for mode in modes:
        mode.store.read_model.forget(CHANNEL)  # a cold load, as a newly started process does
        mode.cold_seconds = timed(lambda mode=mode: mode.store.timeline(CHANNEL))
    latest = f"n{INGEST_MESSAGES - 1:05d}"
    for label, message_id in (("latest", latest), ("old (1%)", f"m{size // 100:07d}")):
        for _ in range(reads):
            for mode in modes:
                seconds = timed(
                    lambda mode=mode, message_id=message_id: mode.engine.context(
                        CHANNEL, message_id, EVERYTHING
                    )
                )
                mode.reads.setdefault(label, []).append(seconds * 1000)


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
            modes = [
                open_mode("embedded", embedded, embedder),
                open_mode("server", server, embedder),
            ]
            measure(modes, args.size, embedder, lines, args.reads)
            for mode in modes:
                mode.store.close()
        finally:
            chroma.stop()
            postgres.drop_all()
    report(console, args.size, modes)


def report(console: Console, size: int, modes: list[Mode]) -> None:
    embedded, server = modes
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
