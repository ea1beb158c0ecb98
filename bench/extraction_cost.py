"""Calls and input tokens per ingested message, for thoughts and summaries written by the model.

Run: ``.venv/bin/python -m bench.extraction_cost [--repeat 1]``.

The shipped sample conversations (English and Japanese) are ingested through the Anthropic
backend pointed at the local fake Messages API (``tests.fake_anthropic``), which counts every
request's tokens by its own rule (about four UTF-8 bytes a token) and keeps a prompt cache as the
API documents it (a prefix below the minimum cacheable length is not cached; cache reads and
writes are reported apart from ``input_tokens``). Three ways in, measured in one run:

- live: one message per ``engine.ingest`` call, as a bot receives them;
- backfill: the whole conversation in one ``engine.ingest`` call, synchronous requests;
- backfill through the Message Batches API (the fake implements its endpoints).

"Billed" converts tokens to input-token equivalents at Anthropic's list multipliers: a cache write
costs 1.25 input tokens, a cache read 0.1, and everything in a batch half. The plain anchor beside
it is what the same requests would bill with no cache and no batch ("uncached").
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from awai_engine.embedding import Embedder
from awai_engine.engine import Engine
from awai_engine.samples import SAMPLES
from awai_engine.settings import Settings
from bots.runtime import language_backend
from bots.terminal.transcript import read_transcript
from storage.store import AwaiStore
from tests.fake_anthropic import API_KEY, FakeAnthropic

CACHE_WRITE, CACHE_READ, BATCH = 1.25, 0.1, 0.5


@dataclass(frozen=True)
class Cost:
    messages: int
    calls: int
    input_tokens: int
    cache_read: int
    cache_write: int
    batched: bool

    @property
    def total(self) -> int:
        return self.input_tokens + self.cache_read + self.cache_write

    @property
    def billed(self) -> float:
        billed = self.input_tokens + CACHE_WRITE * self.cache_write + CACHE_READ * self.cache_read
        return billed * (BATCH if self.batched else 1.0)


def measure(mode: str, folder: Path, embedder: Embedder) -> Cost:
    """Ingest every sample one way through a fresh fake server and data folder."""
    with FakeAnthropic() as fake:
        settings = Settings(
            data_dir=folder / mode,
            llm={
                "api_key": API_KEY,
                "base_url": fake.base_url,
                "batch_min_messages": 2 if mode == "batch" else 10_000,
                "batch_poll_seconds": 0.05,
            },
            _env_file=None,  # type: ignore[call-arg]
        )
        store = AwaiStore.open(settings)
        try:
            engine = Engine(settings, store, embedder, language_backend(settings))
            messages = 0
            for sample in SAMPLES.values():
                utterances = read_transcript(
                    sample.path, sample.channel, settings.limits.max_transcript_bytes
                ).utterances
                messages += len(utterances)
                if mode == "live":
                    for utterance in utterances:
                        engine.ingest([utterance])
                else:
                    engine.ingest(utterances)
        finally:
            store.close()
        usages = fake.usages
        return Cost(
            messages=messages,
            calls=len(usages),
            input_tokens=sum(u["input_tokens"] for u in usages),
            cache_read=sum(u["cache_read_input_tokens"] for u in usages),
            cache_write=sum(u["cache_creation_input_tokens"] for u in usages),
            batched=mode == "batch",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=1, help="Runs per mode (medians shown).")
    args = parser.parse_args()
    console = Console(width=130)
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(data_dir=Path(folder) / "e", _env_file=None)  # type: ignore[call-arg]
        embedder = Embedder(settings.embedding)
        table = Table(title="Thought extraction: cost per ingested message (fake API's counts)")
        for column in (
            "way in",
            "messages",
            "calls / msg",
            "input / msg",
            "cache read / msg",
            "cache write / msg",
            "billed / msg",
            "uncached / msg",
            "billed ÷ uncached",
        ):
            table.add_column(column, justify="right" if column != "way in" else "left")
        for mode in ("live", "backfill", "batch"):
            runs = [measure(f"{mode}", Path(folder) / str(n), embedder) for n in range(args.repeat)]
            cost = runs[0]
            n = cost.messages

            def per(value: float, n: int = n) -> str:
                return f"{value / n:,.1f}"

            billed = statistics.median(run.billed for run in runs)
            table.add_row(
                {"batch": "backfill, Batches API"}.get(mode, mode),
                str(n),
                f"{cost.calls / n:.2f}",
                per(cost.input_tokens),
                per(cost.cache_read),
                per(cost.cache_write),
                per(billed),
                per(cost.total),
                f"{billed / cost.total:.2f}",
            )
        console.print(table)
        console.print(
            "billed: input + 1.25 × cache write + 0.1 × cache read, halved in a batch; uncached:"
            " every token at the input price (the anchor: no cache, no batch)."
        )


if __name__ == "__main__":
    main()
