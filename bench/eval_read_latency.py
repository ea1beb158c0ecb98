"""What association at every distance costs a reading: read latency with it and without, one run.

Why: issue 17's budget is read latency at 100k messages within 1.5× of the near-only
association's. Absolute times on a shared 2-core machine swing with its load, so this bench
builds each channel once (real chat lines and their real vectors, cycled, written through the
store as :mod:`bench.read_latency` does) and reads the same messages with several association
settings, in turns of ten messages, so a busy moment falls on every setting alike, each setting
reading first in turn (the first to read a message warms the CPU's cache for the rest). The ratio
against the near-only row is the number to read.

Rows: *near only* (no far slots, no lexical recall: the association before issue 17's far
past), the same without the inferred conversation (what judging cues by conversation costs), the
defaults, the defaults without lexical recall, and any ``--variant NAME:field=v;...`` (fields of
``association``).

Channels: *random* cycles real lines among 40 random speakers who never address each other, so
every speaker is in no exchange and the far path runs for every message (the costliest case for
the far slots); *replayed* cycles the real IRC log in order with its own speakers and their
``nick:`` addressing, so exchanges, inferred conversations and their rules work as in real chat.

    nice -n 10 .venv/bin/python -m bench.eval_read_latency                  # 1k and 100k
    nice -n 10 .venv/bin/python -m bench.eval_read_latency --sizes 100000 --reads 300

Writing a 100k channel takes far longer than reading it, and is not what is timed: with
``--data-dir`` the store is kept there and a channel already holding messages goes on from its
last one, so the channels can be written once, unlocked (``--write-only``), and read later under
the benchmark lock as often as needed:

    nice -n 19 .venv/bin/python -m bench.eval_read_latency --data-dir /tmp/rl --write-only
    flock /work/bench.lock nice -n 10 .venv/bin/python -m bench.eval_read_latency --data-dir /tmp/rl
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from rich.console import Console
from rich.progress import track
from rich.table import Table

from awai_engine.association.settings import AssociationSettings, RecallRules
from awai_engine.backends.offline import OfflineBackend
from awai_engine.embedding import Embedder
from awai_engine.engine import Engine
from awai_engine.settings import Settings
from awai_engine.visibility import EVERYTHING
from bench.corpus import chat_lines, chat_records, replayed_channel, synthetic_channel
from bench.read_latency import WRITE_BATCH, percentile
from storage.store import AwaiStore

INTERLEAVE = 10
# Each kind of channel, by the name its size makes (random ones keep their first name, so
# channels kept in a --data-dir before replayed ones existed are read again).
CHANNELS = {"random": "bench:local:c{size}", "replayed": "bench:local:r{size}"}
NEAR_ONLY = "near only (before)"


def variants(base: AssociationSettings, extra: list[str]) -> dict[str, AssociationSettings]:
    """The association settings compared, by row name."""
    rows = {
        NEAR_ONLY: _with(base, far_items=0, rules=_rules(base, lexical=False)),
        "near only, no inferred conversation": _with(
            base, far_items=0, rules=_rules(base, lexical=False, conversation_window=0)
        ),
        "defaults": base,
        "defaults, no lexical recall": _with(base, rules=_rules(base, lexical=False)),
    }
    for text in extra:
        name, _, assignments = text.partition(":")
        values: dict[str, object] = {}
        for item in filter(None, assignments.split(";")):
            key, _, raw = item.partition("=")
            try:
                values[key.removeprefix("association.")] = json.loads(raw)
            except json.JSONDecodeError:
                values[key.removeprefix("association.")] = raw
        rules = {k.removeprefix("rules."): v for k, v in values.items() if k.startswith("rules.")}
        plain = {k: v for k, v in values.items() if not k.startswith("rules.")}
        rows[name] = _with(base, **plain, rules=_rules(base, **rules))
    return rows


def _rules(base: AssociationSettings, **changes: object) -> RecallRules:
    return RecallRules.model_validate({**dict(base.rules), **changes})


def _with(base: AssociationSettings, **changes: object) -> AssociationSettings:
    return AssociationSettings.model_validate({**dict(base), **changes})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--reads", type=int, default=200, help="latest messages read per size")
    parser.add_argument("--lines", type=int, default=12_000, help="distinct real lines cycled")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME:field=v;...")
    parser.add_argument(
        "--channels", nargs="+", choices=CHANNELS, default=list(CHANNELS), help="kinds of channel"
    )
    parser.add_argument("--data-dir", type=Path, help="Keep the store here and resume from it.")
    parser.add_argument(
        "--write-only", action="store_true", help="Write the channels, read nothing."
    )
    args = parser.parse_args()
    console = Console()
    base = Settings(_env_file=None)  # type: ignore[call-arg]
    embedder = Embedder(base.embedding)
    lines = chat_lines(args.lines)
    rows = variants(base.association, args.variant)
    timings: dict[tuple[str, int, str], list[float]] = {}  # (kind, size, row) → ms
    recalled: dict[tuple[str, int, str], list[int]] = {}
    far: dict[tuple[str, int, str], list[int]] = {}
    with ExitStack() as stack:
        folder = args.data_dir or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        settings = Settings(data_dir=folder, _env_file=None)  # type: ignore[call-arg]
        store = AwaiStore.open(settings)
        engines = {
            name: Engine(
                settings.model_copy(update={"association": association}),
                store,
                embedder,
                OfflineBackend(),
            )
            for name, association in rows.items()
        }
        windows: dict[tuple[str, int], list[str]] = {}
        for kind, size in [(kind, size) for kind in args.channels for size in args.sizes]:
            channel = CHANNELS[kind].format(size=size)
            store.ensure_channel(channel, embedder.model_name, embedder.dimension)
            written = store.message_count(channel)
            if written < size:  # a kept channel already written needs no lines embedded
                make = (
                    synthetic_channel(channel, size, embedder, lines)
                    if kind == "random"
                    else replayed_channel(channel, size, embedder, chat_records())
                )
                for start in track(
                    range(written, size, WRITE_BATCH),
                    description=f"writing {size:,}",
                    console=console,
                ):
                    store.save(channel, make(start, min(size, start + WRITE_BATCH)))
            store.timeline(channel)  # the read model, loaded once for every row (and its file)
            if args.write_only:
                console.print(f"{channel}: {store.message_count(channel):,} messages")
                continue
            reads = min(args.reads, size // 2)
            windows[kind, size] = [f"m{p:07d}" for p in range(size - reads, size)]
        names = list(engines)
        for turn, block in enumerate(
            range(0, max(map(len, windows.values()), default=0), INTERLEAVE)
        ):
            # Each row takes its turn first: the first to read a message brings its rows into
            # the CPU's cache for the others, which would otherwise always favour the later rows.
            order = names[turn % len(names) :] + names[: turn % len(names)]
            for (kind, size), ids in windows.items():
                channel = CHANNELS[kind].format(size=size)
                for name in order:
                    engine = engines[name]
                    for message_id in ids[block : block + INTERLEAVE]:
                        started = time.perf_counter()
                        context = engine.context(channel, message_id, EVERYTHING)
                        elapsed = (time.perf_counter() - started) * 1000
                        timings.setdefault((kind, size, name), []).append(elapsed)
                        items = context.associations
                        recalled.setdefault((kind, size, name), []).append(len(items))
                        far.setdefault((kind, size, name), []).append(
                            sum(item.reach == "far" for item in items)
                        )
        store.close()
    if args.write_only:
        return

    table = Table(title="Read-context latency (ms) by association setting, one run")
    columns = ("p50", "p95", "p50 / near only", "p95 / near only", "recalled", "far")
    for column in ("channel", "messages", "association", *columns):
        table.add_column(column, justify="right")
    for kind, size in windows:
        before = percentile(timings[kind, size, NEAR_ONLY], 0.95)
        middle = statistics.median(timings[kind, size, NEAR_ONLY])
        for name in rows:
            values = timings[kind, size, name]
            table.add_row(
                kind,
                f"{size:,}",
                name,
                f"{statistics.median(values):.1f}",
                f"{percentile(values, 0.95):.1f}",
                f"{statistics.median(values) / middle:.2f}",
                f"{percentile(values, 0.95) / before:.2f}",
                f"{statistics.mean(recalled[kind, size, name]):.2f}",
                f"{statistics.mean(far[kind, size, name]):.2f}",
            )
    console.print(table)


if __name__ == "__main__":
    main()
