"""Read latency with two bot processes sharing PostgreSQL and a Chroma server, against one.

Run: ``.venv/bin/python -m bench.two_process [--size 10000] [--rounds 20] [--blocks 3]``
(PostgreSQL from ``--postgres-url`` or ``AWAI_TEST_POSTGRES_URL``; ``eval "$(deploy/postgres-
local.sh)"`` starts one). The stack is the one ``deploy/local-stack.sh`` starts: a fresh
PostgreSQL database migrated once, ``chroma run`` on a free loopback port, and bot processes
sharing both (and one data folder). A channel of ``--size`` real chat lines with their real
vectors (``bench.corpus``) is written first.

Each round writes ``--writes`` new messages, then reads the latest message and ``--reads - 1``
older ones (spread over the channel) in every process taking part, one process after the other:

- *one process*: it writes every round, and reads;
- *two processes*: the writes alternate between them, so every other round a process reads
  right after the other one wrote (its read model catches up on rows it did not write).

The two set-ups take turns, ``--blocks`` blocks of ``--rounds`` rounds each, so the load of a
shared machine falls on both alike. Reported: p50/p95 of a reading's context (the engine's
``context``, what every reading pays before any model), and the ratio two/one.
Target: p95 of two processes within 1.5× of one.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

from rich.console import Console
from rich.table import Table

CHANNEL = "bench:local:shared"
WRITE_BATCH = 1000


def _worker(environment: dict[str, str], connection: Connection) -> None:
    """One bot process: opens its runtime from the environment, then writes or reads on demand."""
    os.environ.update(environment)
    from awai_engine.settings import load_settings
    from awai_engine.visibility import EVERYTHING
    from bots.runtime import open_runtime

    runtime = open_runtime(load_settings())
    connection.send("ready")
    while (command := connection.recv()) is not None:
        kind, payload = command
        if kind == "write":
            runtime.store.save(CHANNEL, payload)
            connection.send([])
        else:
            timings = []
            for message_id in payload:
                started = time.perf_counter()
                runtime.engine.context(CHANNEL, message_id, EVERYTHING)
                timings.append((time.perf_counter() - started) * 1000)
            connection.send(timings)
    runtime.close()


class Process:
    """A bot process of the benchmark and the pipe it is driven through."""

    def __init__(self, environment: dict[str, str]) -> None:
        self.connection, theirs = mp.get_context("spawn").Pipe()
        self.process = mp.get_context("spawn").Process(
            target=_worker, args=(environment, theirs), daemon=True
        )
        self.process.start()
        if self.connection.recv() != "ready":
            raise RuntimeError("the bot process did not start")

    def call(self, kind: str, payload: object) -> list[float]:
        self.connection.send((kind, payload))
        return self.connection.recv()  # type: ignore[no-any-return]

    def stop(self) -> None:
        self.connection.send(None)
        self.process.join(timeout=60)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=20, help="Rounds per block.")
    parser.add_argument("--blocks", type=int, default=3, help="Blocks per set-up, alternating.")
    parser.add_argument("--writes", type=int, default=5, help="Messages written per round.")
    parser.add_argument("--reads", type=int, default=5, help="Messages read per process, round.")
    parser.add_argument("--postgres-url", default=os.environ.get("AWAI_TEST_POSTGRES_URL"))
    args = parser.parse_args()
    if not args.postgres_url:
        parser.error('no PostgreSQL: pass --postgres-url or eval "$(deploy/postgres-local.sh)"')
    from awai_engine.embedding import Embedder
    from awai_engine.settings import Settings
    from bench.corpus import chat_lines, synthetic_channel
    from storage.store import AwaiStore
    from tests.backends.servers import ChromaServer, PostgresDatabases

    console = Console()
    embedder = Embedder(Settings(_env_file=None).embedding)  # type: ignore[call-arg]
    total = args.size + 2 * args.blocks * args.rounds * args.writes
    make = synthetic_channel(CHANNEL, total, embedder, chat_lines(12_000))
    databases = PostgresDatabases(args.postgres_url)
    timings: dict[str, list[float]] = {"one process": [], "two processes": []}
    with tempfile.TemporaryDirectory() as folder:
        chroma = ChromaServer(Path(folder) / "chroma")
        processes: list[Process] = []
        try:
            environment = {
                "AWAI_DATABASE_URL": databases.new_database_url(),
                "AWAI_CHROMA_URL": f"{chroma.url}/awai",
                "AWAI_DATA_DIR": str(Path(folder) / "data"),
            }
            settings = Settings(  # type: ignore[call-arg]
                _env_file=None,
                data_dir=Path(environment["AWAI_DATA_DIR"]),
                database_url=environment["AWAI_DATABASE_URL"],
                chroma_url=environment["AWAI_CHROMA_URL"],
            )
            store = AwaiStore.open(settings)
            store.ensure_channel(CHANNEL, embedder.model_name, embedder.dimension)
            for start in range(0, args.size, WRITE_BATCH):
                store.save(CHANNEL, make(start, min(args.size, start + WRITE_BATCH)))
            store.close()
            console.print(f"wrote {args.size:,} messages; load average {os.getloadavg()[0]:.1f}")
            processes = [Process(environment), Process(environment)]
            written = args.size
            for block in range(2 * args.blocks):
                name = ("one process", "two processes")[block % 2]
                taking_part = processes[: 1 + block % 2]
                for round_ in range(args.rounds):
                    writer = taking_part[round_ % len(taking_part)]
                    writer.call("write", make(written, written + args.writes))
                    written += args.writes
                    step = max(1, written // args.reads)
                    ids = [f"m{p:07d}" for p in range(written - 1, -1, -step)][: args.reads]
                    for process in taking_part:
                        timings[name] += process.call("read", ids)
            console.print(f"load average {os.getloadavg()[0]:.1f} at the end")
        finally:
            for process in processes:
                process.stop()
            chroma.stop()
            databases.drop_all()

    table = Table(
        title=f"Reading context (ms), {args.size:,} messages, PostgreSQL + Chroma server, one run"
    )
    for column in ("set-up", "readings", "p50", "p95", "p95 vs one process"):
        table.add_column(column, justify="right")
    anchor = percentile(timings["one process"], 0.95)
    for name, values in timings.items():
        table.add_row(
            name,
            f"{len(values):,}",
            f"{statistics.median(values):.1f}",
            f"{percentile(values, 0.95):.1f}",
            f"{percentile(values, 0.95) / anchor:.2f}",
        )
    console.print(table)


if __name__ == "__main__":
    main()
