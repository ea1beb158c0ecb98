"""Read models across processes: catching up against rebuilding, and the memory of many channels.

Run: ``.venv/bin/python -m bench.read_model [--size 10000] [--channels 20] [--appends 5]
[--max-mb 256] [--data-dir FOLDER]``. With ``--data-dir`` the channels are kept for later runs.
Two stores open one data folder, as two bot processes share their databases but not their
caches. The first channel is real chat lines with their real vectors, cycled (``bench.corpus``),
written through the store; the others are copies of its rows and vectors under their own keys
and collections (:func:`clone_channel`): the same bytes a write would store, without writing
200k messages through the store (about 20 minutes here, which did not finish beside other
benchmarks).

- *catch-up*: the writer appends ``--appends`` messages, then the reader's next reading of the
  latest message is timed; against it, the same reading after the reader dropped its cache,
  which is what every other process paid after any write before the read model caught up
  (a rebuild). The two alternate, ``--rounds`` times.
- *memory*: a fresh process holds ``--channels`` channels of ``--size`` messages, rebuilt from
  the stores and then (another process) loaded from their files, with no bound that binds and
  with ``AWAI_READ_MODEL__MAX_MB=--max-mb``; its resident memory before and after reading them
  all, against the estimate the bound counts.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import multiprocessing as mp
import resource
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import track
from rich.table import Table
from sqlalchemy import func, insert, select

from awai_engine.embedding import Embedder
from awai_engine.settings import Settings
from bench.corpus import chat_lines, synthetic_channel
from storage.sql import ThoughtRow, UtteranceRow
from storage.store import AwaiStore
from storage.vectors import vector_id, vector_metadata

WRITE_BATCH = 1000


def rss_mib() -> float:
    """Resident memory now, from /proc (the peak from getrusage where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


UNBOUNDED_MB = 1_000_000  # a bound no channel count here reaches
COPY_BATCH = 2000


def clone_channel(store: AwaiStore, source: str, target: str, size: int) -> None:
    """``target`` made a copy of the first ``size`` messages of ``source``: its rows, thoughts and
    revision in SQL (one transaction), its vectors (with their metadata) in a collection of its
    own. Only what is missing is copied, so a run stopped half-way is finished by the next."""
    info = store.channel_info(source)
    assert info is not None and info.embedding_model is not None and info.dimension is not None
    store.ensure_channel(target, info.embedding_model, info.dimension)
    db = store.db
    with db.session() as session:
        mine, theirs = db.channel(session, source), db.channel(session, target)
        assert mine is not None and theirs is not None
        rows = session.execute(
            select(UtteranceRow)
            .where(UtteranceRow.channel_id == mine.id, UtteranceRow.synced.is_(True))
            .order_by(UtteranceRow.ts, UtteranceRow.id)
            .limit(size)
        ).scalars()
        copied = [
            (
                {
                    column: getattr(row, column)
                    for column in (c.key for c in UtteranceRow.__table__.columns)
                    if column != "id"
                }
                | {"channel_id": theirs.id},
                [(thought.idx, thought.text) for thought in row.thoughts],
            )
            for row in rows
        ]
        already = session.scalar(
            select(func.count(UtteranceRow.id)).where(UtteranceRow.channel_id == theirs.id)
        )
        for start in range(0, len(copied) if not already else 0, COPY_BATCH):
            part = copied[start : start + COPY_BATCH]
            ids = session.scalars(
                insert(UtteranceRow).returning(UtteranceRow.id, sort_by_parameter_order=True),
                [values for values, _ in part],
            ).all()
            session.execute(
                insert(ThoughtRow),
                [
                    {"utterance_id": new_id, "idx": idx, "text": text}
                    for new_id, (_, thoughts) in zip(ids, part, strict=True)
                    for idx, text in thoughts
                ],
            )
        if not already:
            theirs.revision = mine.revision
        source_collection, target_collection = mine.collection, theirs.collection
    wanted = [
        (vector_id(values["message_id"], idx), values["message_id"], idx)
        for values, thoughts in copied
        for idx, _ in thoughts
    ]
    if store.vectors.count(target_collection) == len(wanted):
        return
    vectors = store.vectors.vectors_of(source_collection, [vid for vid, *_ in wanted])
    for start in range(0, len(wanted), COPY_BATCH):
        part = wanted[start : start + COPY_BATCH]
        store.vectors.upsert(
            target_collection,
            [vid for vid, *_ in part],
            np.vstack([vectors[vid] for vid, *_ in part]),
            [vector_metadata(message, idx) for _, message, idx in part],
        )


def held_in_a_process(
    settings: Settings, channels: list[str], persist: bool, max_mb: int
) -> tuple[float, float, float, float, int]:
    """A fresh process reading every channel once: its resident memory before and after (MiB),
    the estimate ``AWAI_READ_MODEL__MAX_MB`` bounds (MiB), the seconds loading took, and how
    many channels it still holds.

    A child process, so that what an earlier measurement allocated is not counted (a process
    rarely gives freed memory back to the system)."""
    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(_hold, settings, channels, persist, max_mb).result()


def _hold(
    settings: Settings, channels: list[str], persist: bool, max_mb: int
) -> tuple[float, float, float, float, int]:
    bounded = settings.read_model.model_copy(update={"persist": persist, "max_mb": max_mb})
    opened = settings.model_copy(update={"read_model": bounded})
    reader = AwaiStore.open(opened)
    reader.timeline(channels[0])  # Chroma, SQL and their caches are not the read models
    reader.read_model.forget(channels[0])
    gc.collect()
    before = rss_mib()
    started = time.perf_counter()
    for channel in channels:
        reader.timeline(channel)
    load = time.perf_counter() - started
    gc.collect()
    after = rss_mib()
    estimate = reader.read_model.cached_bytes() / 2**20
    held = len(reader.read_model.cached_channels())
    reader.close()
    return before, after, estimate, load, held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--channels", type=int, default=20)
    parser.add_argument("--appends", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--max-mb", type=int, default=256, help="The bound of the bounded row.")
    parser.add_argument("--data-dir", type=Path, help="Keep the channels here, for later runs.")
    parser.add_argument(
        "--lines",
        type=int,
        default=12_000,
        help="Distinct chat lines to cycle (each embedded once per run, even in a kept folder).",
    )
    args = parser.parse_args()
    console = Console()
    embedder = Embedder(Settings(_env_file=None).embedding)  # type: ignore[call-arg]
    lines = chat_lines(args.lines)
    channels = [f"bench:local:c{n}" for n in range(args.channels)]
    with contextlib.ExitStack() as stack:
        folder = args.data_dir or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        settings = Settings(data_dir=folder, _env_file=None)  # type: ignore[call-arg]
        writer = AwaiStore.open(settings)
        channel = channels[0]
        writer.ensure_channel(channel, embedder.model_name, embedder.dimension)
        done = writer.message_count(channel)  # a kept folder: its first channel has grown
        total = max(done, args.size) + args.appends * args.rounds
        make = synthetic_channel(channel, total, embedder, lines)
        for start in track(
            range(done, args.size, WRITE_BATCH), description=f"writing {channel}", console=console
        ):
            writer.save(channel, make(start, min(args.size, start + WRITE_BATCH)))
        for other in track(channels[1:], description="copying it", console=console):
            clone_channel(writer, channel, other, args.size)

        for channel in channels:  # built once, written to its file, dropped again
            writer.timeline(channel)
            writer.read_model.forget(channel)
        memory = {
            how: held_in_a_process(settings, channels, persist, max_mb)
            for how, persist, max_mb in (
                ("rebuilt", False, UNBOUNDED_MB),
                ("loaded from files", True, UNBOUNDED_MB),
                (f"loaded from files, MAX_MB={args.max_mb}", True, args.max_mb),
            )
        }
        reader = AwaiStore.open(settings)

        written = writer.message_count(channel)
        catch_up: list[float] = []
        rebuild: list[float] = []
        for _ in range(args.rounds):
            writer.save(channel, make(written, written + args.appends))
            written += args.appends
            started = time.perf_counter()
            timeline = reader.timeline(channel)
            catch_up.append(time.perf_counter() - started)
            assert len(timeline.messages) == written
            reader.read_model.forget(channel)
            started = time.perf_counter()
            reader.timeline(channel)
            rebuild.append(time.perf_counter() - started)
        reader.close()
        writer.close()

    table = Table(title=f"After {args.appends} messages written by another process, one run")
    for column in ("next reading pays", "median ms", "p95 ms", "vs rebuild"):
        table.add_column(column, justify="right")
    anchor = statistics.median(rebuild)
    for name, values in (
        ("catch-up (new rows only)", catch_up),
        ("rebuild (whole channel)", rebuild),
    ):
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        table.add_row(
            name,
            f"{statistics.median(values) * 1000:.1f}",
            f"{p95 * 1000:.1f}",
            f"{statistics.median(values) / anchor:.3f}",
        )
    console.print(table)
    table = Table(title=f"A process reading {args.channels} channels of {args.size:,} messages")
    for column in (
        "read models",
        "channels held",
        "RSS before (MiB)",
        "RSS after (MiB)",
        "growth (MiB)",
        "estimate MAX_MB counts (MiB)",
        "estimate / growth",
        "loading all (s)",
    ):
        table.add_column(column, justify="right")
    for how, (before, after, estimate, load, held) in memory.items():
        table.add_row(
            how,
            str(held),
            f"{before:,.0f}",
            f"{after:,.0f}",
            f"{after - before:,.0f}",
            f"{estimate:,.0f}",
            f"{estimate / (after - before):.2f}",
            f"{load:.1f}",
        )
    console.print(table)


if __name__ == "__main__":
    main()
