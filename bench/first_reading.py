"""The first reading after a start, in a fresh process, of a large channel already ingested.

Run: ``.venv/bin/python -m bench.first_reading --data-dir /tmp/awai-100k [--size 100000]``.
The channel (real chat lines and their real vectors, cycled: ``bench.corpus``) is built in
``--data-dir`` the first time, re-clustered as the scheduler would, and its read model written
to its file; later runs reuse the folder, since writing 100k messages takes long on a shared
machine. A small channel of ``--anchor-size`` messages is built beside it as the anchor.

Each measurement is a fresh Python process that opens the runtime as a bot or ``awai`` does
(``bots.runtime.open_runtime``: settings, store, start-up check, encoder) and writes the first
reading of the channel's latest message (the offline backend). Reported per process: wall time
from its start to the reading (imports included), and the part from opening the runtime on.
Read models loaded from their files take turns with read models rebuilt from SQL and Chroma
(``AWAI_READ_MODEL__PERSIST=false``), and with the anchor channel. Target: ≤ 2 s at 100k from
the file. Also printed: the part of it opening the runtime took, and whether the process
clustered schemas on demand (imported hdbscan), opened Chroma or loaded the encoder.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import track
from rich.table import Table

WRITE_BATCH = 1000
TREE = Path(__file__).resolve().parents[1]
FIRST_READING = """
import json, sys, time
started = time.perf_counter()
from awai_engine.settings import load_settings
from awai_engine.visibility import EVERYTHING
from bots.runtime import open_runtime
opened = time.perf_counter()
runtime = open_runtime(load_settings())
ready = time.perf_counter()
reading = runtime.engine.read(sys.argv[1], sys.argv[2], EVERYTHING)
done = time.perf_counter()
print(json.dumps({"runtime_to_reading": done - opened, "in_process": done - started,
                  "open": ready - opened, "hdbscan": "hdbscan._hdbscan_tree" in sys.modules,
                  "torch": "torch" in sys.modules, "chromadb": "chromadb" in sys.modules,
                  "onnxruntime": "onnxruntime" in sys.modules,
                  "schemas": len(reading.context.schemas)}))
"""


def channel_name(size: int) -> str:
    return f"bench:local:c{size}"


def build(data_dir: Path, sizes: list[int], console: Console) -> None:
    """Write each missing channel, re-cluster it, and persist its read model."""
    from awai_engine.embedding import Embedder
    from awai_engine.settings import load_settings
    from bench.corpus import chat_lines, synthetic_channel
    from bots.runtime import open_runtime

    os.environ["AWAI_DATA_DIR"] = str(data_dir)
    settings = load_settings()
    embedder = Embedder(settings.embedding)
    lines = chat_lines(12_000)
    with open_runtime(settings) as runtime:
        store = runtime.store
        for size in sizes:
            channel = channel_name(size)
            if channel in store.channels() and store.message_count(channel) == size:
                continue
            store.ensure_channel(channel, embedder.model_name, embedder.dimension)
            make = synthetic_channel(channel, size, embedder, lines)
            done = store.message_count(channel)
            for start in track(
                range(done, size, WRITE_BATCH), description=f"writing {size:,}", console=console
            ):
                store.save(channel, make(start, min(size, start + WRITE_BATCH)))
        for size in sizes:
            # Forced: a folder built before a change to what a re-clustering stores catches up.
            report = runtime.schemas.recluster(channel_name(size), force=True)
            console.print(f"re-clustered {channel_name(size)}: {report}")
            store.timeline(channel_name(size))  # its read model, written to its file


def first_reading(data_dir: Path, channel: str, persist: bool) -> dict[str, float]:
    """One fresh process: its wall time and what it reports of itself."""
    env = {
        **os.environ,
        "PYTHONPATH": str(TREE),
        "AWAI_DATA_DIR": str(data_dir),
        "AWAI_READ_MODEL__PERSIST": "true" if persist else "false",
    }
    message = f"m{int(channel.rsplit('c', 1)[1]) - 1:07d}"
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", FIRST_READING, channel, message],
        env=env,
        cwd=TREE,
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    return {"wall": wall, **json.loads(done.stdout.strip().splitlines()[-1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--anchor-size", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--build-only", action="store_true")
    args = parser.parse_args()
    console = Console()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    build(args.data_dir, [args.anchor_size, args.size], console)
    if args.build_only:
        return
    console.print(f"load average {os.getloadavg()[0]:.1f}")
    runs = {
        (f"{args.size:,}", "from its file"): (channel_name(args.size), True),
        (f"{args.size:,}", "rebuilt from SQL and Chroma"): (channel_name(args.size), False),
        (f"{args.anchor_size:,}", "from its file"): (channel_name(args.anchor_size), True),
    }
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    for _ in range(args.rounds):  # taking turns, so the machine's load falls on all alike
        for key, (channel, persist) in runs.items():
            results.setdefault(key, []).append(first_reading(args.data_dir, channel, persist))
    anchor = statistics.median(r["wall"] for r in results[f"{args.anchor_size:,}", "from its file"])
    table = Table(title=f"First reading in a fresh process, median of {args.rounds}, one run")
    for column in (
        "messages",
        "read model",
        "wall s",
        "open runtime → reading s",
        "of which opening s",
        f"wall vs {args.anchor_size:,} from file",
        "clustered on demand",
        "opened Chroma",
        "loaded the encoder",
        "imported torch",
    ):
        table.add_column(column, justify="right")
    for (size, how), values in results.items():
        wall = statistics.median(r["wall"] for r in values)
        table.add_row(
            size,
            how,
            f"{wall:.2f}",
            f"{statistics.median(r['runtime_to_reading'] for r in values):.2f}",
            f"{statistics.median(r['open'] for r in values):.2f}",
            f"{wall / anchor:.2f}",
            *(
                f"{sum(bool(r[module]) for r in values)}/{len(values)}"
                for module in ("hdbscan", "chromadb", "onnxruntime", "torch")
            ),
        )
    console.print(table)


if __name__ == "__main__":
    main()
