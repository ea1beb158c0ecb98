"""Ingest throughput of the offline pipeline (storage included) against raw batched encoding.

Run: ``.venv/bin/python -m bench.ingest_throughput [--messages N]``. Both are measured in one run on
the same texts; the ratio is what counts (target ≥ 0.8).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from awai_engine.backends.offline import OfflineBackend
from awai_engine.embedding import Embedder
from awai_engine.engine import Engine
from awai_engine.settings import Settings
from awai_engine.values import Utterance
from bench.corpus import chat_lines
from storage.store import AwaiStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=3000)
    args = parser.parse_args()
    texts = chat_lines(args.messages)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]

    raw = Embedder(settings.embedding, cache_size=0)
    raw.encode_uncached(texts[:64])  # warm up
    started = time.perf_counter()
    raw.encode_uncached(texts)
    raw_rate = len(texts) / (time.perf_counter() - started)

    with tempfile.TemporaryDirectory() as folder:
        run_settings = Settings(data_dir=Path(folder), _env_file=None)  # type: ignore[call-arg]
        store = AwaiStore.open(run_settings)
        engine = Engine(
            run_settings, store, Embedder(settings.embedding, cache_size=0), OfflineBackend()
        )
        utterances = [
            Utterance(
                channel="bench:local:ingest",
                message_id=f"m{i}",
                speaker_id=f"u{i % 17}",
                speaker_name=f"u{i % 17}",
                text=text,
                ts=1_600_000_000 + i,
            )
            for i, text in enumerate(texts)
        ]
        started = time.perf_counter()
        report = engine.ingest(utterances)
        ingest_rate = len(texts) / (time.perf_counter() - started)
        store.close()

    table = Table(title=f"Ingest throughput, {len(texts):,} real chat messages, one run")
    for column in ("what", "messages/s", "relative to raw encode"):
        table.add_column(column, justify="right")
    table.add_row("raw batched encode (MiniLM)", f"{raw_rate:,.0f}", "1.00")
    table.add_row(
        "offline ingest (split + encode + SQL + Chroma)",
        f"{ingest_rate:,.0f}",
        f"{ingest_rate / raw_rate:.2f}",
    )
    Console().print(table)
    Console().print(f"stored {report.added:,}, refused {len(report.problems)}")


if __name__ == "__main__":
    main()
