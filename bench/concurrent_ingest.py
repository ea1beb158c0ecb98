"""Live ingest throughput with 1, 2 and 4 concurrent writers, relative to one writer.

Run: ``.venv/bin/python -m bench.concurrent_ingest [--messages N] [--repeat R]``. Each writer is
a thread writing messages one at a time, as Bolt and discord.py handlers do: ``store.save`` of
messages prepared in advance (the two stores only, where the concurrency design matters), and
``engine.ingest`` (thoughts and embedding included). Three set-ups, all measured in one run on the
same texts:

- ``channels``: each writer has its own channel (the usual case: many channels, one event each);
- ``one channel``: all writers share one channel (its writes take turns on the channel lock);
- ``writer queue``: writers prepare (thoughts, embedding) in their own threads and hand the
  write to one thread that does every ``save`` in turn: the alternative to the shipped design
  (SQLite WAL, ``BEGIN IMMEDIATE`` write transactions, an in-process write lock, per-channel
  locks; see ``storage/sql.py``).

Every measurement starts on an empty data folder; the embedding cache is off so no run profits
from another's vectors; rounds interleave the set-ups and the median is shown, because this
machine's load changes under the benchmark. Errors ("database is locked" would be one) are
counted, never hidden.
"""

from __future__ import annotations

import argparse
import queue
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from awai_engine.backends.offline import OfflineBackend
from awai_engine.embedding import Embedder
from awai_engine.engine import Engine
from awai_engine.ports import PreparedUtterance
from awai_engine.settings import Settings
from awai_engine.values import Utterance
from bench.corpus import chat_lines
from storage.store import AwaiStore

WRITERS = (1, 2, 4)


class QueuedStore:
    """The store with every ``save`` done by one writer thread, in arrival order."""

    def __init__(self, store: AwaiStore) -> None:
        self._store = store
        self._jobs: queue.Queue[tuple[str, Sequence[PreparedUtterance], Future[None]] | None] = (
            queue.Queue()
        )
        self._thread = threading.Thread(target=self._write, daemon=True)
        self._thread.start()

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    def save(self, channel: str, items: Sequence[PreparedUtterance]) -> None:
        done: Future[None] = Future()
        self._jobs.put((channel, items, done))
        done.result()

    def _write(self) -> None:
        while (job := self._jobs.get()) is not None:
            channel, items, done = job
            try:
                self._store.save(channel, items)
                done.set_result(None)
            except BaseException as error:
                done.set_exception(error)

    def stop(self) -> None:
        self._jobs.put(None)
        self._thread.join()


@dataclass
class Result:
    work: str
    setup: str
    writers: int
    messages: int
    seconds: float
    errors: int

    @property
    def rate(self) -> float:
        return self.messages / self.seconds


def _channel(setup: str, writer: int) -> str:
    return "bench:local:shared" if setup == "one channel" else f"bench:local:c{writer}"


def run(
    work: str, setup: str, writers: int, prepared: list[PreparedUtterance], embedder: Embedder
) -> Result:
    """One measurement on an empty data folder: ``writers`` threads share the messages."""
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(data_dir=Path(folder), _env_file=None)  # type: ignore[call-arg]
        store = AwaiStore.open(settings)
        for writer in range(writers):
            store.ensure_channel(_channel(setup, writer), embedder.model_name, embedder.dimension)
        queued = QueuedStore(store) if setup == "writer queue" else None
        target = queued or store
        engine = Engine(settings, target, embedder, OfflineBackend())  # type: ignore[arg-type]
        errors: list[BaseException] = []

        def writer(number: int) -> Callable[[], None]:
            channel = _channel(setup, number)
            mine = [
                PreparedUtterance(
                    item.utterance.model_copy(update={"channel": channel}),
                    item.extraction,
                    item.vectors,
                )
                for item in prepared[number::writers]
            ]

            def write() -> None:
                for item in mine:
                    try:
                        if work == "save":
                            target.save(channel, [item])
                        else:
                            engine.ingest([item.utterance])
                    except Exception as error:
                        errors.append(error)

            return write

        threads = [threading.Thread(target=writer(n)) for n in range(writers)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - started
        if queued:
            queued.stop()
        store.close()
    return Result(work, setup, writers, len(prepared), seconds, len(errors))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=80, help="Messages per measurement.")
    parser.add_argument("--repeat", type=int, default=3, help="Rounds; the median is shown.")
    parser.add_argument("--work", choices=("save", "ingest"), nargs="*", default=["save", "ingest"])
    args = parser.parse_args()
    texts = chat_lines(args.messages)
    embedder = Embedder(Settings(_env_file=None).embedding, cache_size=0)  # type: ignore[call-arg]
    utterances = [
        Utterance(
            channel="bench:local:prepare",
            message_id=f"m{index}",
            speaker_id=f"u{index % 5}",
            speaker_name=f"u{index % 5}",
            text=text,
            ts=float(index),
        )
        for index, text in enumerate(texts)
    ]
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(data_dir=Path(folder), _env_file=None)  # type: ignore[call-arg]
        preparer = Engine(settings, AwaiStore.open(settings), embedder, OfflineBackend())
        prepared = preparer.prepare(utterances)
    configs = [
        (work, setup, writers)
        for work in args.work
        for setup in ("channels", "one channel", "writer queue")
        for writers in WRITERS
    ]
    run("save", "channels", 1, prepared[:10], embedder)  # warm up
    rounds: dict[tuple[str, str, int], list[Result]] = {config: [] for config in configs}
    for _ in range(args.repeat):  # rounds interleave the set-ups, so load changes hit all alike
        for config in configs:
            rounds[config].append(run(*config, prepared, embedder))
    results = [sorted(found, key=lambda r: r.rate)[len(found) // 2] for found in rounds.values()]
    single = {(r.work, r.setup): r.rate for r in results if r.writers == 1}
    table = Table(
        title=(
            f"Concurrent writers, {len(texts)} messages per measurement, one per call,"
            f" median of {args.repeat}"
        )
    )
    for heading in ("work", "set-up", "writers", "messages/s", "× 1 writer", "× channels, 1"):
        table.add_column(heading, justify="left" if heading in ("work", "set-up") else "right")
    table.add_column("errors", justify="right")
    for result in results:
        table.add_row(
            result.work,
            result.setup,
            str(result.writers),
            f"{result.rate:.1f}",
            f"{result.rate / single[(result.work, result.setup)]:.2f}",
            f"{result.rate / single[(result.work, 'channels')]:.2f}",
            str(sum(r.errors for r in rounds[(result.work, result.setup, result.writers)])),
        )
    console = Console(width=110)
    console.print(table)
    console.print(
        "save: store.save of messages prepared in advance (only the two stores are measured);"
        " ingest: engine.ingest, thoughts and embedding included (CPU-bound on 2 cores)."
    )


if __name__ == "__main__":
    main()
