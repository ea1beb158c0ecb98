"""What zeroing the heap costs (storage/heap.py): ingest, re-clustering and readings, on and off.

Run: ``nice -n 10 .venv/bin/python -m bench.heap_switch [--messages 2000] [--reads 60]
[--repeat 3]``.

Every open store turns on glibc's ``M_PERTURB`` (memory handed out is zeroed, memory freed is
overwritten), so that an embedded Chroma's index files cannot carry freed bytes to disk. The
switch costs a ``memset`` on every heap block handed out or taken back. Each repeat runs the same
work in two fresh processes, one with the switch and one without (the store's call to it
replaced, in this benchmark only), alternating which goes first so a busy machine slows both
alike: ingest of real chat lines (embedding and storage), a forced re-clustering of every
speaker, and readings of the newest messages. The table gives each side's median seconds and
peak resident memory, and the median of the per-repeat ratios (on / off).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

PHASES = ("ingest", "re-cluster", "read")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--reads", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", choices=("on", "off"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_work(args.child == "on", args.messages, args.reads)))
        return
    results: dict[str, list[dict[str, float]]] = {"on": [], "off": []}
    for repeat in range(args.repeat):
        for mode in ("on", "off") if repeat % 2 == 0 else ("off", "on"):
            command = [sys.executable, "-m", "bench.heap_switch", "--child", mode]
            command += ["--messages", str(args.messages), "--reads", str(args.reads)]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            results[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
    _print(results, args)


def _work(switch_on: bool, messages: int, reads: int) -> dict[str, float]:
    """One side: a fresh store on a temporary folder, the work timed phase by phase."""
    import storage.opening

    if not switch_on:
        storage.opening.overwrite_freed_memory = lambda: False
    from awai_engine.backends.offline import OfflineBackend
    from awai_engine.embedding import Embedder
    from awai_engine.visibility import EVERYTHING
    from bench.corpus import chat_lines
    from bots.runtime import Runtime
    from bots.settings import BotSettings
    from storage.store import AwaiStore
    from tests.factories import utterance

    channel = "bench:local:heap"
    texts = chat_lines(messages)
    said = [
        utterance(f"m{i:06d}", text, f"u{i % 12}", ts=1_600_000_000 + i, channel=channel)
        for i, text in enumerate(texts)
    ]
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        settings = BotSettings(data_dir=Path(folder), _env_file=None)  # type: ignore[call-arg]
        embedder = Embedder(settings.embedding, cache_size=0)
        runtime = Runtime(
            settings, AwaiStore.open(settings), embedder, OfflineBackend(settings.limits)
        )
        try:
            began = time.perf_counter()
            runtime.engine.ingest(said)
            seconds["ingest"] = time.perf_counter() - began
            began = time.perf_counter()
            runtime.schemas.recluster(channel, force=True)
            seconds["re-cluster"] = time.perf_counter() - began
            began = time.perf_counter()
            for item in said[-reads:]:
                runtime.engine.read(channel, item.message_id, EVERYTHING)
            seconds["read"] = time.perf_counter() - began
        finally:
            runtime.close()
    seconds["peak MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return seconds


def _print(results: dict[str, list[dict[str, float]]], args: argparse.Namespace) -> None:
    table = Table(
        title=(
            f"Heap zeroing on and off: {args.messages:,} messages, {args.reads} readings,"
            f" {args.repeat} repeats (medians)"
        )
    )
    for column in ("", "switch on", "switch off", "on / off"):
        table.add_column(column, justify="right")
    for key in (*PHASES, "peak MB"):
        on = [run[key] for run in results["on"]]
        off = [run[key] for run in results["off"]]
        ratios = [a / b for a, b in zip(on, off, strict=True) if b > 0]
        unit = "" if key == "peak MB" else " s"
        table.add_row(
            key,
            f"{statistics.median(on):,.2f}{unit}",
            f"{statistics.median(off):,.2f}{unit}",
            f"{statistics.median(ratios):.3f}×",
        )
    Console().print(table)


if __name__ == "__main__":
    main()
