"""Ingest as a channel grows: rate per slice, ingest against raw encoding, parsing, peak memory, and
`awai read FILE` of a file already stored — one table, one command.

Run: ``.venv/bin/python -m bench.ingest_throughput [--messages 10000] [--slice 2000]``.

Rows (ratios are what count; every figure of a row comes from the same run):
- per slice of real #ubuntu lines (the training split, with their own speakers): the engine's
  offline ingest rate and, on the same slice's texts, the raw batched encode rate just before it;
  targets: the last slice's rate ≥ 0.9× the first's, ingest / raw ≥ 0.8 in every slice;
- parsing the transcript file of all messages and of the first 1,000;
- peak RSS of ``awai ingest`` of the whole file and of the first slice in fresh processes (target
  ≤ 500 MiB at 10k, and no more for more messages);
- ``awai read FILE --message ID --json`` of each file once stored (median of 3; target ≤ 1.5×).
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from awai_engine.backends.offline import OfflineBackend
from awai_engine.embedding import Embedder
from awai_engine.engine import Engine
from awai_engine.settings import Settings
from bench.corpus import SHARED_DATA
from bots.terminal.transcript import read_transcript
from storage.store import AwaiStore

AWAI = Path(sys.executable).with_name("awai")
MIB = 1 << 20


def write_transcript(path: Path, messages: int) -> Path:
    """The first ``messages`` non-system lines of the #ubuntu training split as a transcript."""
    written = 0
    with (
        gzip.open(SHARED_DATA / "ubuntu-train.jsonl.gz", "rt", encoding="utf-8") as source,
        path.open("w", encoding="utf-8") as sink,
    ):
        for raw in source:
            record = json.loads(raw)
            if record["is_system"] or not record["speaker"] or not record["text"].strip():
                continue
            line = {
                "id": f"{record['conversation_id']}#{record['index']}",
                "speaker": record["speaker"],
                "text": record["text"],
            }
            if record["timestamp"]:
                moment = datetime.strptime(record["timestamp"], "%Y-%m-%d %H:%M")
                line["ts"] = moment.replace(tzinfo=UTC).isoformat()
            sink.write(json.dumps(line, ensure_ascii=False) + "\n")
            written += 1
            if written == messages:
                break
    return path


def slices(settings: Settings, path: Path, size: int) -> list[tuple[float, float]]:
    """(raw encode rate, ingest rate) of each slice of the file, ingested in order."""
    utterances = read_transcript(path, "bench-slices", 1 << 40).utterances
    raw = Embedder(settings.embedding, cache_size=0)
    raw.encode_uncached([u.text for u in utterances[:64]])  # warm up
    store = AwaiStore.open(settings)
    engine = Engine(settings, store, Embedder(settings.embedding, cache_size=0), OfflineBackend())
    rates = []
    try:
        for start in range(0, len(utterances), size):
            part = utterances[start : start + size]
            began = time.perf_counter()
            raw.encode_uncached([u.text for u in part])
            encoded = len(part) / (time.perf_counter() - began)
            began = time.perf_counter()
            engine.ingest(part)
            rates.append((encoded, len(part) / (time.perf_counter() - began)))
    finally:
        store.close()
    return rates


def awai(data: Path, *argv: str) -> float:
    """Seconds one ``awai`` command took (it must succeed)."""
    began = time.perf_counter()
    subprocess.run(
        [str(AWAI), "--data-dir", str(data), *argv], check=True, capture_output=True, text=True
    )
    return time.perf_counter() - began


def peak_rss_of_ingest(data: Path, path: Path) -> float:
    """MiB: the peak RSS of ``awai ingest`` of ``path`` in a fresh process (run alone)."""
    script = (
        "import resource, subprocess, sys;"
        "subprocess.run(sys.argv[1:], check=True, capture_output=True);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(AWAI), "--data-dir", str(data), "ingest", str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return int(out) * 1024 / MIB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--slice", type=int, default=2_000)
    args = parser.parse_args()
    console = Console()
    table = Table(title=f"Ingest and `awai read FILE`, {args.messages:,} real #ubuntu lines")
    for column in ("what", "small", "large", "ratio"):
        table.add_column(column, justify="right")

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        large = write_transcript(root / "large.jsonl", args.messages)
        small = write_transcript(root / "small.jsonl", min(1_000, args.messages))
        first = write_transcript(root / "first.jsonl", args.slice)

        parsed = []
        for path in (small, large):
            began = time.perf_counter()
            read_transcript(path, "bench-parse", 1 << 40)
            parsed.append(time.perf_counter() - began)
        table.add_row("parse the transcript file (s)", *_pair(parsed))
        console.print(f"parsed in {parsed[1]:.2f} s", style="dim")

        settings = Settings(data_dir=root / "slices", _env_file=None)  # type: ignore[call-arg]
        rates = slices(settings, large, args.slice)
        table.add_row(
            f"ingest rate, first slice → slice at {(len(rates) - 1) * args.slice:,} (msg/s)",
            *_pair([rates[0][1], rates[-1][1]]),
        )
        shares = [ingest / encoded for encoded, ingest in rates]
        table.add_row(
            "ingest / raw batched encode of the same slice, first → last (min)",
            f"{shares[0]:.2f}",
            f"{shares[-1]:.2f} ({min(shares):.2f})",
            f"{shares[-1] / shares[0]:.2f}",
        )
        console.print(f"slices done: {[f'{i:.0f}' for _, i in rates]} msg/s", style="dim")

        peaks = [
            peak_rss_of_ingest(root / "rss-first", first),
            peak_rss_of_ingest(root / "rss-large", large),
        ]
        table.add_row(
            f"peak RSS, `awai ingest` of {args.slice:,} vs {args.messages:,} (MiB)",
            *_pair(peaks, "{:,.0f}"),
        )

        reads = []
        for path, data in ((small, root / "read-small"), (large, root / "rss-large")):
            message = json.loads(path.read_text(encoding="utf-8").splitlines()[-2])["id"]
            argv = ("read", str(path), "--channel", "large", "--message", message, "--json")
            awai(data, *argv)  # stores the file (small) or finds it stored, and the read model
            reads.append(statistics.median(awai(data, *argv) for _ in range(3)))
        table.add_row(
            "`awai read FILE --message ID --json`, stored file (s, median of 3)", *_pair(reads)
        )
    console.print(table)
    console.print(
        f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f}"
        " MiB; ratios are within this run (on a shared machine absolute figures vary)."
    )


def _pair(values: list[float], shape: str = "{:.2f}") -> tuple[str, str, str]:
    return shape.format(values[0]), shape.format(values[1]), f"{values[1] / values[0]:.2f}"


if __name__ == "__main__":
    main()
