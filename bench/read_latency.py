"""Read-context latency at 1k, 10k and 100k messages, reading the latest and an old message.

Run: ``.venv/bin/python -m bench.read_latency [--sizes 1000 10000 100000] [--reads 60]``.
Channels are built from real chat lines and their real vectors (cycled), written through the
store like any ingest. Each size reads two windows of distinct messages, each message once: the
latest ones, and the ones from 1% of the channel on (an old message), so a percentile describes
messages of every length rather than one message read again and again. The windows of all sizes
are read in turns of ten messages, so the ratio compares sizes under the same machine load.
Targets: p95 ≤ 50 ms at 100k, and the 100k/1k ratio ≤ 3.

"First reading": a store opened afresh on the data folder, then the reading context of the
latest message, as after a start: with the read model rebuilt from SQL and Chroma, and loaded
from its file next to the data (``storage.read_model_files``). Target: ≤ 2 s at 100k.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.progress import track
from rich.table import Table

from awai_engine.backends.offline import OfflineBackend
from awai_engine.embedding import Embedder
from awai_engine.engine import Engine
from awai_engine.recall_index import RecallIndexRules, RecallIndexSettings
from awai_engine.settings import Settings
from awai_engine.visibility import EVERYTHING
from bench.corpus import chat_lines, synthetic_channel
from storage.store import AwaiStore

WRITE_BATCH = 1000


AGREEMENT_READS = 40
COLD_REPEATS = 3
INTERLEAVE = 10


def agreement_with_exact(
    store: AwaiStore, engine: Engine, channel: str, size: int
) -> tuple[float, float]:
    """Share of the exactly recalled sources that the cell search also recalls, and the share of
    those whose ACT-R occurrences (found through fewer cells) are the same."""
    ids = [f"m{position:07d}" for position in range(size - AGREEMENT_READS, size)]

    def recalled() -> list[dict[str, int]]:
        store.read_model.forget(channel)
        return [
            {
                a.source.message_id: a.occurrences
                for a in engine.context(channel, i, EVERYTHING).associations
            }
            for i in ids
        ]

    indexed = recalled()
    configured = store.read_model.recall_index
    store.read_model.recall_index = RecallIndexSettings(
        rules=RecallIndexRules(exact_rows=10**9, cells=1, probes=1)
    )
    exact = recalled()
    store.read_model.recall_index = configured
    store.read_model.forget(channel)
    common = [(a[k], b[k]) for a, b in zip(indexed, exact, strict=True) for k in a.keys() & b]
    same = sum(1 for ours, theirs in common if ours == theirs)
    return len(common) / max(1, sum(len(b) for b in exact)), same / max(1, len(common))


def cold_first_readings(
    settings: Settings, embedder: Embedder, channel: str, message_id: str
) -> tuple[float, float]:
    """Seconds from opening the store to the first reading context of ``message_id``: rebuilding
    the read model from SQL and Chroma (persistence off), and loading it from its file; median
    of ``COLD_REPEATS`` each, the two taking turns."""
    timings: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(COLD_REPEATS):
        for persist in (False, True):
            opened = settings.model_copy(
                update={"read_model": settings.read_model.model_copy(update={"persist": persist})}
            )
            started = time.perf_counter()
            store = AwaiStore.open(opened)
            Engine(opened, store, embedder, OfflineBackend()).context(
                channel, message_id, EVERYTHING
            )
            timings[persist].append(time.perf_counter() - started)
            store.close()
    return statistics.median(timings[False]), statistics.median(timings[True])


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument(
        "--reads",
        type=int,
        default=200,
        help="Messages read in each window, each once: the last ones, and the ones from 1%% on.",
    )
    parser.add_argument(
        "--lines", type=int, default=12_000, help="Distinct real lines to cycle (at most)."
    )
    parser.add_argument(
        "--no-agreement",
        action="store_true",
        help="Skip comparing the cell search with an exact scan (two more rebuilds per size).",
    )
    args = parser.parse_args()
    console = Console()
    base = Settings(_env_file=None)  # type: ignore[call-arg]
    embedder = Embedder(base.embedding)
    lines = chat_lines(args.lines)
    agreement: dict[int, tuple[float, float]] = {}
    cold: dict[int, tuple[float, float]] = {}
    windows: dict[tuple[int, str], list[str]] = {}
    timings: dict[tuple[int, str], list[float]] = {}
    recalled: dict[tuple[int, str], list[int]] = {}
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(data_dir=Path(folder), _env_file=None)  # type: ignore[call-arg]
        store = AwaiStore.open(settings)
        engine = Engine(settings, store, embedder, OfflineBackend())
        for size in args.sizes:
            channel = f"bench:local:c{size}"
            store.ensure_channel(channel, embedder.model_name, embedder.dimension)
            make = synthetic_channel(channel, size, embedder, lines)
            for start in track(
                range(0, size, WRITE_BATCH), description=f"writing {size:,}", console=console
            ):
                store.save(channel, make(start, min(size, start + WRITE_BATCH)))
            store.timeline(channel)  # built once and written to disk, as any first reading does
            cold[size] = cold_first_readings(settings, embedder, channel, f"m{size - 1:07d}")
            reads = min(args.reads, size // 2)
            for label, first in (("latest", size - reads), ("old (1%)", size // 100)):
                windows[size, label] = [f"m{p:07d}" for p in range(first, first + reads)]
        # Sizes take turns, a block of messages each, so a noisy moment of a shared machine
        # falls on every size alike instead of on whichever size was being read.
        for block in range(0, max(len(ids) for ids in windows.values()), INTERLEAVE):
            for (size, label), ids in windows.items():
                for message_id in ids[block : block + INTERLEAVE]:
                    started = time.perf_counter()
                    context = engine.context(f"bench:local:c{size}", message_id, EVERYTHING)
                    elapsed = (time.perf_counter() - started) * 1000
                    timings.setdefault((size, label), []).append(elapsed)
                    recalled.setdefault((size, label), []).append(len(context.associations))
        for size in args.sizes:
            if size * 1.5 > settings.recall_index.rules.exact_rows and not args.no_agreement:
                agreement[size] = agreement_with_exact(store, engine, f"bench:local:c{size}", size)
        store.close()
    results = [
        (size, label, timings[size, label], cold[size], statistics.mean(recalled[size, label]))
        for size, label in windows
    ]

    table = Table(title="Read-context latency (ms), one run")
    for column in (
        "messages",
        "message read",
        "p50",
        "p95",
        "recalled (mean)",
        "first reading, rebuilt (s)",
        "first reading, from file (s)",
    ):
        table.add_column(column, justify="right")
    # Named apart from the dicts above: reusing ``cold`` here left it a tuple for the lines below.
    for size, label, times, first_readings, mean_recalled in results:
        table.add_row(
            f"{size:,}",
            label,
            f"{statistics.median(times):.1f}",
            f"{percentile(times, 0.95):.1f}",
            f"{mean_recalled:.1f}",
            f"{first_readings[0]:.2f}",
            f"{first_readings[1]:.2f}",
        )
    console.print(table)
    for size, (share, occurrences) in agreement.items():
        console.print(
            f"{size:,} messages: {share:.1%} of the thoughts recalled by an exact scan are recalled"
            f" through the cells, {occurrences:.1%} of them with the same occurrence count"
            f" ({AGREEMENT_READS} readings near the end)"
        )
    for size, (rebuilt, loaded) in cold.items():
        console.print(
            f"{size:,} messages: first reading from the file {loaded:.2f} s against"
            f" {rebuilt:.2f} s rebuilt ({loaded / rebuilt:.3f}×)"
        )
    smallest, largest = min(args.sizes), max(args.sizes)
    for name, fraction in (("p50", 0.5), ("p95", 0.95)):
        by = {(size, label): percentile(times, fraction) for size, label, times, _, _ in results}
        for label in ("latest", "old (1%)"):
            ratio = by[largest, label] / by[smallest, label]
            console.print(f"{name} ratio {largest:,}/{smallest:,}, {label}: {ratio:.2f}")


if __name__ == "__main__":
    main()
