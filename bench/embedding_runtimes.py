"""MiniLM on ONNX Runtime against MiniLM on torch: start-up, throughput, agreement, `awai read`.

Run: ``.venv/bin/python -m bench.embedding_runtimes [--lines N] [--rounds N] [--baseline TREE]
[--parts encode start-up read]``.
Everything is measured in one run and alternated (torch, onnx, torch, onnx, …) so the load of a
shared machine falls on both alike; the ratios are what counts.

- *start-up*: a fresh process importing the encoder and making its first vector (median);
  ``import sentence_transformers`` alone is timed too: it is the floor of sentence-transformers'
  own ONNX backend, which runs inside that library (and needs optimum, which on this stack would
  downgrade transformers).
- *throughput*: ``encode_uncached`` of real chat lines at batch 32, both runtimes on 2 threads.
- *agreement*: cosine of the ONNX vector to the torch vector of each line (min, 0.1th
  percentile, mean): the tolerance under which both runtimes record the same model name.
- *awai read*: wall time of ``awai read`` of one message of the shipped sample in a channel that
  is already ingested, per runtime; ``--baseline TREE`` adds the same command run from another
  checkout (e.g. a worktree of the commit before this change: "today").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from awai_engine.embedding import Embedder
from awai_engine.samples import SAMPLES
from awai_engine.settings import EmbeddingSettings
from bench.corpus import chat_lines

RUNTIMES = ("torch", "onnx")
PARTS = ("encode", "start-up", "read")
THREADS = 2
FIRST_VECTOR = (
    "from awai_engine.embedding import Embedder;"
    "from awai_engine.settings import EmbeddingSettings;"
    "Embedder(EmbeddingSettings(runtime={runtime!r})).encode(['good morning'])"
)
TREE = Path(__file__).resolve().parents[1]


def _timed(command: list[str], env: dict[str, str], cwd: Path = TREE) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - started


def _env(tree: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": str(THREADS), **extra}


def start_up(rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {"import sentence_transformers": []}
    for _ in range(rounds):
        for runtime in RUNTIMES:
            code = FIRST_VECTOR.format(runtime=runtime)
            times.setdefault(runtime, []).append(_timed([sys.executable, "-c", code], _env(TREE)))
        times["import sentence_transformers"].append(
            _timed([sys.executable, "-c", "import sentence_transformers"], _env(TREE))
        )
    return {name: statistics.median(values) for name, values in times.items()}


def throughput(texts: list[str], rounds: int) -> tuple[dict[str, float], np.ndarray]:
    """Lines per second per runtime (alternating chunks), and the per-line cosine onnx · torch."""
    import torch

    torch.set_num_threads(THREADS)
    encoders = {
        runtime: Embedder(EmbeddingSettings(runtime=runtime, batch_size=32), cache_size=0)
        for runtime in RUNTIMES
    }
    vectors = {runtime: encoder.encode_uncached(texts) for runtime, encoder in encoders.items()}
    spent = dict.fromkeys(RUNTIMES, 0.0)
    chunk = max(1, len(texts) // rounds)
    for start in range(0, len(texts), chunk):
        part = texts[start : start + chunk]
        for runtime, encoder in encoders.items():
            started = time.perf_counter()
            encoder.encode_uncached(part)
            spent[runtime] += time.perf_counter() - started
    cosine = np.sum(vectors["onnx"] * vectors["torch"], axis=1)
    return {runtime: len(texts) / spent[runtime] for runtime in RUNTIMES}, cosine


def read_wall(rounds: int, baseline: Path | None) -> dict[str, float]:
    """Median wall time of `awai read` per tree/runtime and message, channel ingested beforehand.

    Two messages: the latest (what a person reading a live channel picks; the schemas the
    scheduler re-clustered cover it) and one in the middle (its schemas are clustered on the
    prefix, at read time, so that reading also pays for hdbscan).
    """
    sample = SAMPLES["en"].path
    latest = json.loads(sample.read_text(encoding="utf-8").splitlines()[-1])["id"]
    messages = {"latest": latest, "middle": "m020"}
    runs = {
        f"runtime={runtime}": (TREE, {"AWAI_EMBEDDING__RUNTIME": runtime}) for runtime in RUNTIMES
    }
    if baseline is not None:
        runs[f"baseline {baseline.name}"] = (baseline, {})
    cli = "from bots.terminal.cli import main; main()"
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        envs = {
            name: _env(tree, AWAI_DATA_DIR=str(Path(folder) / str(number)), **extra)
            for number, (name, (tree, extra)) in enumerate(runs.items())
        }
        for name, (tree, _) in runs.items():  # ingest and re-cluster once per tree
            for command in (["ingest", str(sample)], ["recluster"]):
                subprocess.run(
                    [sys.executable, "-c", cli, *command],
                    env=envs[name],
                    cwd=tree,
                    check=True,
                    capture_output=True,
                )
        for _ in range(rounds):
            for which, message in messages.items():
                for name, (tree, _) in runs.items():
                    command = [sys.executable, "-c", cli, "read", str(sample), "--message", message]
                    times.setdefault(f"{name}, {which} message", []).append(
                        _timed(command, envs[name], tree)
                    )
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=2048)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="Another checkout to time `awai read` in.")
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=PARTS,
        default=list(PARTS),
        help="Which measurements to run (all by default); each is one run on its own.",
    )
    args = parser.parse_args()
    console = Console()
    console.print(f"load average {os.getloadavg()[0]:.1f}, {THREADS} threads per runtime")
    if "encode" in args.parts:
        encode(args.lines, args.rounds, console)
    if "start-up" in args.parts:
        first_vector(args.rounds, console)
    if "read" in args.parts:
        awai_read(args.rounds, args.baseline, console)


def encode(lines: int, rounds: int, console: Console) -> None:
    rates, cosine = throughput(chat_lines(lines), rounds)
    table = Table(title=f"Encode, {len(cosine):,} real chat lines, batch 32, alternating chunks")
    for column in ("runtime", "lines/s", "vs torch"):
        table.add_column(column, justify="right")
    for runtime, rate in rates.items():
        table.add_row(runtime, f"{rate:,.0f}", f"{rate / rates['torch']:.2f}")
    console.print(table)
    console.print(
        f"cosine onnx·torch over {len(cosine):,} lines: min {cosine.min():.7f},"
        f" 0.1th percentile {np.percentile(cosine, 0.1):.7f}, mean {cosine.mean():.7f}"
    )


def first_vector(rounds: int, console: Console) -> None:
    starts = start_up(rounds)
    table = Table(title=f"Start-up to the first vector, fresh process, median of {rounds}")
    for column in ("what", "seconds", "vs torch"):
        table.add_column(column, justify="right")
    for name, seconds in starts.items():
        table.add_row(name, f"{seconds:.2f}", f"{seconds / starts['torch']:.2f}")
    console.print(table)


def awai_read(rounds: int, baseline: Path | None, console: Console) -> None:
    reads = read_wall(rounds, baseline)
    anchor = "baseline " + baseline.name if baseline else f"runtime={RUNTIMES[0]}"
    table = Table(title=f"`awai read` of an ingested channel, wall time, median of {rounds}")
    for column in ("what", "seconds", f"vs {anchor}"):
        table.add_column(column, justify="right")
    for name, seconds in reads.items():
        which = name.rsplit(", ", 1)[1]
        table.add_row(name, f"{seconds:.2f}", f"{seconds / reads[f'{anchor}, {which}']:.2f}")
    console.print(table)


if __name__ == "__main__":
    main()
