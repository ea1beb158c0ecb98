"""How the read model's persistence and re-clustering grow with a channel: one table.

Run: ``.venv/bin/python -m bench.scale [--large 60000] [--ingest 20000] [--small-ingest 1000]``.

Rows (issue 32; each ratio is measured within this one run, so compare rows with each other):

- *Read-model write per 2,000 messages*: a channel's timeline is built in memory from real chat
  lines and their real vectors (``bench.corpus``, no SQL or Chroma) in slices of 2,000 messages;
  after each slice the file is brought up to date as the read model does (an append of the new
  messages). The first slice against the last; and, for comparison, writing the whole file
  afresh at the same two sizes (what every write cost before files grew by appending).
- *Bytes written / growth of the folder*: the bytes this process handed to ``write`` (``wchar``
  of ``/proc/self/io``) against what the folder holds after: for the read-model files of the
  row above, and for an ingest of ``--ingest`` messages through the store (SQLite, embedded
  Chroma, read model; the timeline read after every batch of 1,000 as ``awai ingest`` does, the
  store closed at the end) — then whether the file was current when it closed.
- *Re-cluster one speaker of 20,000 thoughts*: :func:`cluster_run` on ``bench.recluster``'s
  synthetic vectors (topics and scattered lines) with its predecessor at 90%, BLAS
  single-threaded as in every AWAI process; time and ``tracemalloc`` peak; afresh, and with the
  memo the job keeps from its run at 90% (neighbours extended, not searched again).
- *awai recluster*: the command, in a fresh process, on the ingested channel of
  ``--small-ingest`` and of ``--ingest`` messages (its first re-clustering: every speaker's runs
  at every fixed point); wall time and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import copy
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from awai_engine.embedding import Embedder
from awai_engine.engine import limit_blas_threads
from awai_engine.ports import PreparedUtterance
from awai_engine.schemas.build import cluster_run
from awai_engine.schemas.clustering import ChainMemo
from awai_engine.settings import SchemaSettings, Settings
from awai_engine.text import clean
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef
from bench import kept_channel
from bench.corpus import chat_lines, replayed_channel, synthetic_channel, train_records
from bench.recluster import basis_of, synthetic
from storage.read_model_files import ReadModelFiles, Snapshot, Written
from storage.store import AwaiStore

SLICE = 2000
BATCH = 1000
CHANNEL = "bench:local:scale"
TRAIN_USED = 10_000  # the training split's first lines: the kept rows' new messages (kept_channel)


def kept_lines_file(kept: Path) -> Path:
    """Beside a kept folder: which lines it was built from (``--kept-lines``), so its rows
    build their 1,000-message channel the same way."""
    return kept.with_name(f"{kept.name}.lines")


def replayed_train(size: int, embedder: Embedder) -> Callable[[int, int], list[PreparedUtterance]]:
    """A channel of ``size`` distinct training lines after :data:`TRAIN_USED`, in order, with
    their own speakers and addressing (cleaned as an ingest cleans them)."""
    records = [(speaker, clean(text)) for speaker, text in train_records(TRAIN_USED, size)]
    return replayed_channel(CHANNEL, size, embedder, records)


def written_bytes() -> int:
    """Bytes this process has handed to ``write`` so far."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise RuntimeError("no wchar in /proc/self/io")


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def read_model_writes(
    large: int, embedder: Embedder, settings: Settings, lines: list[str]
) -> dict[str, float]:
    """Seconds of the append after the first and the last slice, of a whole write at both
    sizes, and bytes written by all appends against the files' size."""
    make = synthetic_channel(CHANNEL, large, embedder, lines)
    timeline = Timeline(dimension=embedder.dimension, index=settings.recall_index)
    found: dict[str, float] = {}
    written: Written | None = None
    with tempfile.TemporaryDirectory() as folder:
        files = ReadModelFiles(Path(folder) / "appended")
        before = written_bytes()
        for start in range(0, large, SLICE):
            for item in make(start, min(large, start + SLICE)):
                u = item.utterance
                ref = MessageRef(
                    message_id=u.message_id,
                    speaker_id=u.speaker_id,
                    speaker_name=u.speaker_name,
                    ts=u.ts,
                    position=len(timeline.messages),
                    thread_root=u.thread_root,
                    scope=u.scope,
                )
                timeline.append(
                    ref, u.text, item.extraction.summary, item.extraction.thoughts, item.vectors
                )
            snapshot = Snapshot(timeline, len(timeline.messages), "", 0)
            started = time.perf_counter()
            written = files.save(CHANNEL, snapshot, lambda *_: True, written)
            seconds = time.perf_counter() - started
            last = start + SLICE >= large
            if start == 0 or last:
                edge = "first" if start == 0 else "last"
                found[f"append {edge}"] = seconds
                whole = ReadModelFiles(Path(folder) / f"whole-{edge}")
                found[f"whole {edge}"] = timed(
                    lambda whole=whole, snapshot=snapshot: whole.save(
                        CHANNEL, snapshot, lambda *_: True, None
                    )
                )
        appended = written_bytes() - before - folder_bytes(Path(folder) / "whole-first")
        appended -= folder_bytes(Path(folder) / "whole-last")
        found["read-model bytes"] = appended / folder_bytes(Path(folder) / "appended")
    return found


def ingest(
    folder: Path,
    size: int,
    embedder: Embedder,
    lines: list[str],
    make: Callable[[int, int], list[PreparedUtterance]] | None = None,
) -> tuple[float, bool]:
    """Write ``size`` messages through the store as an ingest does (``make``'s, else
    ``lines`` cycled among 40 speakers); bytes written over the folder's growth, and whether
    the read-model file was current when the store closed."""
    settings = Settings(data_dir=folder, _env_file=None)  # type: ignore[call-arg]
    make = make or synthetic_channel(CHANNEL, size, embedder, lines)
    before = written_bytes()
    store = AwaiStore.open(settings)
    store.ensure_channel(CHANNEL, embedder.model_name, embedder.dimension)
    for start in range(0, size, BATCH):
        store.timeline(CHANNEL)  # as the ingest reads it before each batch
        store.save(CHANNEL, make(start, min(size, start + BATCH)))
    store.close()
    ratio = (written_bytes() - before) / folder_bytes(folder)
    loaded = ReadModelFiles(folder / "read-models").load(CHANNEL, settings.recall_index)
    return ratio, loaded is not None and len(loaded.timeline.messages) == size


def one_speaker(count: int) -> dict[str, tuple[float, float]]:
    """Seconds and peak MB of re-clustering one speaker of ``count`` thoughts: afresh (a
    process that never clustered them), and as the job does with the memo it kept from its last
    run of the speaker (here at 90% of the thoughts: their neighbours extended, not searched)."""
    vectors, _ = synthetic(count)
    kept = ChainMemo()
    previous = cluster_run(basis_of(vectors[: int(count * 0.9)]), None, SchemaSettings(), kept)
    basis = basis_of(vectors)
    found = {}
    for case, memo in (("afresh", lambda: None), ("memo kept", lambda: copy.copy(kept))):
        seconds = timed(lambda memo=memo: cluster_run(basis, previous, SchemaSettings(), memo()))
        tracemalloc.start()
        cluster_run(basis, previous, SchemaSettings(), memo())
        peak = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        found[case] = (seconds, peak)
    return found


# Run from a small process: a child forked from this one (holding a timeline and the encoder)
# would report this process's size as its own peak (Linux keeps ru_maxrss across exec).
_LAUNCH = """
import resource, subprocess, sys, time
started = time.perf_counter()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def recluster_command(folder: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of ``awai recluster`` in a fresh process."""
    awai = str(Path(sys.executable).parent / "awai")
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCH, awai, "--data-dir", str(folder), "recluster"],
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, peak = done.stdout.split()
    return float(seconds), int(peak) / 1024


PARTS = ("writes", "ingest", "speaker", "recluster", "kept", "kept-ingest")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--large", type=int, default=60_000, help="read-model channel size")
    parser.add_argument("--ingest", type=int, default=20_000, help="messages ingested")
    parser.add_argument("--small-ingest", type=int, default=1_000)
    parser.add_argument("--speaker", type=int, default=20_000, help="thoughts of one speaker")
    parser.add_argument("--lines", type=int, default=2000, help="distinct chat lines")
    parser.add_argument(
        "--kept",
        type=Path,
        help="a data folder holding one large channel (see --build-kept): adds its rows"
        " (bench.kept_channel), each on a copy of it",
    )
    parser.add_argument(
        "--build-kept",
        type=int,
        metavar="MESSAGES",
        help="write a channel of MESSAGES into the --kept folder (once; it must not exist)",
    )
    parser.add_argument(
        "--kept-lines",
        choices=("cycled", "train"),
        default="cycled",
        help="what --build-kept writes: the dev split's 11,641 lines cycled among 40 speakers"
        " (the kept channel of sessions 13-23), or distinct lines of the training split in"
        " order with their own speakers and addressing (a real channel's vocabulary and"
        " speakers)",
    )
    parser.add_argument(
        "--inner-product-copy",
        type=Path,
        metavar="FOLDER",
        help="copy the --kept folder to FOLDER with its collection made again in the space new"
        " collections get (inner product), then exit",
    )
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=PARTS, help="rows to run")
    args = parser.parse_args()
    if args.inner_product_copy is not None:
        if args.kept is None or args.inner_product_copy.exists():
            parser.error("--inner-product-copy needs --kept and a folder that does not exist yet")
        kept_channel.inner_product_copy(args.kept, args.inner_product_copy, CHANNEL)
        return
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    limit_blas_threads(settings.recall_index.blas_threads)
    embedder = Embedder(settings.embedding)
    lines = chat_lines(args.lines)
    if args.build_kept:
        if args.kept is None or args.kept.exists():
            parser.error("--build-kept needs --kept FOLDER, a folder that does not exist yet")
        # Cleaned as an ingest cleans them, so the channel's export reads back unchanged.
        cleaned = [clean(line) for line in chat_lines()]
        made = replayed_train(args.build_kept, embedder) if args.kept_lines == "train" else None
        ingest(args.kept, args.build_kept, embedder, cleaned, made)
        kept_lines_file(args.kept).write_text(args.kept_lines + "\n", encoding="utf-8")
    console = Console(width=140)
    table = Table("what", "small", "large", "large / small", title="AWAI at scale (one run)")

    def shown(*row: str) -> None:
        """A row of the table, also printed at once: the kept rows take many minutes."""
        table.add_row(*row)
        console.print(" | ".join(row), highlight=False)

    if "writes" in args.parts:
        writes = read_model_writes(args.large, embedder, settings, lines)
        for kind in ("append", "whole"):
            first, last = writes[f"{kind} first"], writes[f"{kind} last"]
            table.add_row(
                f"read-model write per {SLICE:,} messages ({kind}), {SLICE:,} vs {args.large:,}",
                f"{first:.3f} s",
                f"{last:.3f} s",
                f"{last / first:.1f}×",
            )
        table.add_row(
            f"bytes written / read-model files, {args.large:,} messages in appends",
            "",
            f"{writes['read-model bytes']:.2f}×",
            "",
        )
    with tempfile.TemporaryDirectory() as folder:
        small, large = Path(folder) / "small", Path(folder) / "large"
        small_ratio, _ = ingest(small, args.small_ingest, embedder, lines)
        if "ingest" in args.parts:
            large_ratio, current = ingest(large, args.ingest, embedder, lines)
            table.add_row(
                f"bytes written / data folder, ingest of {args.small_ingest:,} vs {args.ingest:,}",
                f"{small_ratio:.2f}×",
                f"{large_ratio:.2f}×",
                f"read model current at close: {'yes' if current else 'NO'}",
            )
        if "speaker" in args.parts:
            for case, (seconds, peak) in one_speaker(args.speaker).items():
                table.add_row(
                    f"re-cluster one speaker of {args.speaker:,} thoughts, {case}"
                    " (goal ≤ 2 s, ≤ 300 MB)",
                    "",
                    f"{seconds:.2f} s, {peak:.0f} MB",
                    "",
                )
        if "recluster" in args.parts and "ingest" in args.parts:
            small_run, large_run = recluster_command(small), recluster_command(large)
            table.add_row(
                f"awai recluster (first), {args.small_ingest:,} vs {args.ingest:,} messages",
                f"{small_run[0]:.1f} s / {small_run[1]:.0f} MiB",
                f"{large_run[0]:.1f} s / {large_run[1]:.0f} MiB",
                f"{large_run[0] / small_run[0]:.1f}×",
            )
        kept_parts = {"kept", "kept-ingest"} & set(args.parts)
        if kept_parts and args.kept is not None:
            # Its own small channel: the rows above re-clustered and read the other one.
            anchor = Path(folder) / "anchor"
            built = kept_lines_file(args.kept)
            train = built.exists() and built.read_text(encoding="utf-8").strip() == "train"
            made = replayed_train(args.small_ingest, embedder) if train else None
            ingest(anchor, args.small_ingest, embedder, lines, made)
            only_ingest = "kept" not in kept_parts  # kept-ingest: the kept ingest rows alone
            kept_channel.rows(
                args.kept, anchor, CHANNEL, Path(folder), shown, only_ingest=only_ingest
            )
    console.print(table)
    console.print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (shared machine)",
        highlight=False,
    )


if __name__ == "__main__":
    main()
