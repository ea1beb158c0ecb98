"""The scale table's rows that need a channel of 100,000 messages: measured on a kept data folder.

Why kept: writing 100k messages through the store takes 10–20 minutes on a shared 2-core
machine, more than the rest of the table. The folder is built once (``bench.scale --build-kept
MESSAGES --kept FOLDER``: real #ubuntu lines and their real vectors through the store as an
ingest writes them; the dev split's lines cycled among 40 speakers, or with ``--kept-lines
train`` distinct lines of the training split in order with their own speakers and addressing,
a real channel's vocabulary and crowd) and never written to: every row works on a fresh copy of
it, against the same rows on a 1,000-message channel built the same way in the run.

Rows (issue 32's targets in brackets):

- ``awai recluster`` of the channel, its first re-clustering [≤ 30 s at 100k];
- ``awai read FILE --message ID --json`` of the channel's transcript once it is stored (the file
  written by ``awai export``, read once to store it, then timed five times, the two sizes in
  turns, median) [≤ 1.5× of 1k];
- a process that holds the channel as a bot does (``open_runtime``, one reading of the latest
  message): its RSS, split into anonymous and file-backed pages [≤ 400 MiB at 100k]; then the
  p50/p95 of 40 further readings in that process [p95 ≤ 3× of 1k];
- a bot's process taking a live message, then an edit of the channel's middle message, each
  read after: its RSS at each step and the seconds each took (an edit is not an append: the
  read model is cut before the edited message and the rest read again) [the bot's ≤ 400 MiB];
  then the same with an edit of a recent message (:data:`RECENT` from the newest), which should
  cost about what the live message does;
- the ingest rate of a slice of 2,000 new messages (real lines of the training split, not in the
  channel) into the large channel against the same into an empty folder, in turns, each after
  500 untimed (what a long ingest pays once: opening Chroma's index, copying the mapped vectors
  before the first append), and each against the raw batched encode of the same texts just
  before it [≥ 0.9×; ≥ 0.8];
- the peak RSS of ``awai ingest`` of 10,000 messages into an empty folder, and of 2,000 into the
  large channel [≤ 500 MiB, and no more with the channel at 100k];
- the peak RSS of one ``awai ingest`` of 30,000 lines into an empty folder, against the
  10,000's: how a long ingest grows per message [no more].
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from awai_engine.backends.offline import OfflineBackend
from awai_engine.embedding import Embedder
from awai_engine.engine import Engine
from awai_engine.settings import Settings
from awai_engine.values import Utterance
from bench.corpus import train_records
from bots.terminal.transcript import transcript_line
from storage.store import AwaiStore

AWAI = Path(sys.executable).with_name("awai")
SPEAKERS = 40
WARM_UP = 500  # messages ingested untimed before a slice: what a long ingest pays once
LONG_INGEST = 30_000  # lines of the long `awai ingest` (about 100 s here)
MIB = 1 << 20

# A fresh process holding the channel as a bot does: the first reading, its memory, then more.
_HOLD = """
import json, random, sys, time
from awai_engine.settings import load_settings
from awai_engine.visibility import EVERYTHING
from bots.runtime import open_runtime
channel, count = sys.argv[1], int(sys.argv[2])
runtime = open_runtime(load_settings())
ids = runtime.message_ids(channel)
began = time.perf_counter()
runtime.engine.read(channel, ids[-1], EVERYTHING)
first = time.perf_counter() - began
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
kib = {key: int(status[key].split()[0]) for key in ("VmRSS", "RssAnon", "RssFile", "VmHWM")}
rng = random.Random(5)
seconds = []
for message_id in rng.sample(ids, min(count, len(ids))):
    began = time.perf_counter()
    runtime.engine.read(channel, message_id, EVERYTHING)
    seconds.append(time.perf_counter() - began)
print(json.dumps({"first": first, "kib": kib, "seconds": seconds}))
"""

_EDIT = """
import json, sys, time
from awai_engine.settings import load_settings
from awai_engine.values import Utterance
from awai_engine.visibility import EVERYTHING
from bots.runtime import open_runtime
channel, back = sys.argv[1], int(sys.argv[2])
def rss():
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return int(status["VmRSS"].split()[0]) / 1024
runtime = open_runtime(load_settings())
ids = runtime.message_ids(channel)
runtime.engine.read(channel, ids[-1], EVERYTHING)
found = {"read": rss()}
began = time.perf_counter()
runtime.engine.ingest([Utterance(channel=channel, message_id="live-1", speaker_id="user1",
    speaker_name="user1", text="is anyone around who knows grub?", ts=1.9e9)])
runtime.engine.read(channel, "live-1", EVERYTHING)
found["live"], found["live_seconds"] = rss(), time.perf_counter() - began
old = runtime.store.timeline(channel).messages[len(ids) - back if back else len(ids) // 2]
began = time.perf_counter()
runtime.engine.edit(Utterance(channel=channel, message_id=old.message_id,
    speaker_id=old.ref.speaker_id, speaker_name=old.ref.speaker_name, text=old.text + " (edited)",
    ts=old.ref.ts, edited_ts=1.9e9 + 60))
runtime.engine.read(channel, "live-1", EVERYTHING)
found["edit"], found["edit_seconds"] = rss(), time.perf_counter() - began
print(json.dumps(found))
"""

# Run from a small process: Linux keeps ru_maxrss across exec, so a child of this process
# (holding a timeline and the encoder) would report this process's size as its own peak.
_PEAK = """
import resource, subprocess, sys, time
started = time.perf_counter()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


@dataclass(frozen=True)
class Holding:
    """What a process holding the channel showed: MiB by kind, and reading seconds."""

    rss: float
    anonymous: float
    file_backed: float
    first_reading: float
    p50: float
    p95: float


def awai(data: Path, *argv: str) -> float:
    """Seconds one ``awai`` command took in a fresh process (it must succeed)."""
    began = time.perf_counter()
    subprocess.run(
        [str(AWAI), "--data-dir", str(data), *argv], check=True, capture_output=True, text=True
    )
    return time.perf_counter() - began


def awai_peak(data: Path, *argv: str) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one ``awai`` command in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(AWAI), "--data-dir", str(data), *argv],
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, peak = done.stdout.split()
    return float(seconds), int(peak) / 1024


@contextmanager
def copied(kept: Path, work: Path, name: str = "copy") -> Iterator[Path]:
    """A copy of the kept folder, removed afterwards: the rows write to it."""
    target = work / name
    shutil.copytree(kept, target)
    try:
        yield target
    finally:
        shutil.rmtree(target)


def train_texts(count: int) -> list[str]:
    """The first ``count`` non-system lines of the #ubuntu training split (none is in the kept
    channel: a cycled one holds the dev split's lines, a ``train`` one the lines after
    ``bench.scale.TRAIN_USED``)."""
    return [text for _, text in train_records(0, count)]


def new_messages(channel: str, texts: list[str], position: int) -> list[Utterance]:
    """``texts`` as the channel's messages from ``position`` on, with the kept channel's ids,
    times and speakers (one message a second, so they follow everything it holds)."""
    return [
        Utterance(
            channel=channel,
            message_id=f"m{at:07d}",
            speaker_id=f"user{at % SPEAKERS}",
            speaker_name=f"user{at % SPEAKERS}",
            text=text,
            ts=1_600_000_000.0 + at,
        )
        for at, text in enumerate(texts, start=position)
    ]


def write_lines(path: Path, utterances: list[Utterance]) -> Path:
    path.write_text("".join(transcript_line(u) + "\n" for u in utterances), encoding="utf-8")
    return path


STORED_READS = 5  # of each size, in turns: one run of three each moved 1.3-1.9x on a shared machine


def stored_reads(folders: Sequence[Path], channel: str, work: Path) -> list[float]:
    """Median seconds of ``awai read FILE --message ID --json`` of each folder's channel,
    exported as a transcript and read once to store it (every message already there:
    unchanged), then read :data:`STORED_READS` times each, the folders in turns. Why in turns:
    the command is a second or two, and a busy minute of a shared machine moved the ratio of
    two medians of three from 1.3 to 1.9 (session 23); turns spread such a minute over both."""
    argvs = []
    for number, data in enumerate(folders):
        transcript = work / f"transcript-{number}.jsonl"
        awai(data, "export", channel, "--out", str(transcript))
        with transcript.open("rb") as handle:
            handle.seek(max(0, transcript.stat().st_size - 4096))
            latest = json.loads(handle.read().splitlines()[-1])["id"]
        argv = ("read", str(transcript), "--channel", channel, "--message", latest, "--json")
        awai(data, *argv)
        argvs.append(argv)
    seconds: list[list[float]] = [[] for _ in folders]
    for _ in range(STORED_READS):
        for data, argv, taken in zip(folders, argvs, seconds, strict=True):
            taken.append(awai(data, *argv))
    return [statistics.median(taken) for taken in seconds]


def holding(data: Path, channel: str, readings: int = 40) -> Holding:
    """A fresh process opens the runtime on ``data`` as a bot does and reads the channel."""
    found = _bot_process(_HOLD, data, channel, str(readings))
    kib, seconds = found["kib"], sorted(found["seconds"])
    return Holding(
        kib["VmRSS"] / 1024,
        kib["RssAnon"] / 1024,
        kib["RssFile"] / 1024,
        found["first"],
        statistics.median(seconds),
        seconds[max(0, round(0.95 * len(seconds)) - 1)],
    )


RECENT = 10  # the recent message edited: this many back from the newest before the live one


@dataclass(frozen=True)
class Edited:
    """A bot's process on the channel: RSS (MiB) after a reading, after a live message and its
    reading, after an edit of one of the channel's messages and the next reading; the seconds
    the last two took."""

    read: float
    live: float
    live_seconds: float
    edit: float
    edit_seconds: float


def edited(data: Path, channel: str, back: int = 0) -> Edited:
    """A fresh process opens the runtime on ``data`` (a copy: it writes), as a bot does, and
    takes a live message and an edit of an older one (``back`` from the newest before the live
    one; 0: the middle one), each followed by a reading."""
    return Edited(**_bot_process(_EDIT, data, channel, str(back)))


def _bot_process(script: str, data: Path, *argv: str) -> dict[str, Any]:
    """What ``script``, run in a fresh process on the data folder ``data``, printed last (JSON)."""
    done = subprocess.run(
        [sys.executable, "-c", script, *argv],
        capture_output=True,
        text=True,
        check=True,
        # PYTHONPATH kept: a checkout measured from its own folder runs its own code here too
        # (without it, the installed package's would answer).
        env={"AWAI_DATA_DIR": str(data), "PATH": "/usr/bin:/bin"}
        | {key: os.environ[key] for key in ("PYTHONPATH",) if key in os.environ},
    )
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found


def slice_rates(data: Path, utterances: list[Utterance], warm_up: int) -> tuple[float, float]:
    """(raw batched encode rate, ingest rate) in messages a second of ``utterances`` after their
    first ``warm_up``: those are ingested untimed first (the channel loaded, Chroma and the
    encoder opened, the vectors made writable: what a long ingest pays once), then the rest's
    texts are encoded alone, then the rest is ingested through the engine and the store closed
    (its file made current)."""
    settings = Settings(data_dir=data, _env_file=None)  # type: ignore[call-arg]
    store = AwaiStore.open(settings)
    engine = Engine(settings, store, Embedder(settings.embedding, cache_size=0), OfflineBackend())
    engine.ingest(utterances[:warm_up])
    timed = utterances[warm_up:]
    raw = Embedder(settings.embedding, cache_size=0)
    raw.encode_uncached([u.text for u in utterances[:64]])  # its session's first run
    began = time.perf_counter()
    raw.encode_uncached([u.text for u in timed])
    encoded = len(timed) / (time.perf_counter() - began)
    began = time.perf_counter()
    engine.ingest(timed)
    store.close()
    return encoded, len(timed) / (time.perf_counter() - began)


def rows(
    kept: Path,
    small: Path,
    channel: str,
    work: Path,
    add: Callable[[str, str, str, str], None],
    rounds: int = 2,
    only_ingest: bool = False,
) -> None:
    """Measure the kept channel against ``small`` (a 1,000-message folder of the same channel,
    written to freely) and add each row through ``add(what, small, large, ratio)``;
    ``only_ingest``: the ingest rows alone (rate, encode ratio, peak RSS)."""
    large_messages = _count(kept, channel)
    if not only_ingest:
        _edit_rows(kept, small, channel, work, add)
    with copied(kept, work) as large:
        if not only_ingest:
            _reading_rows(small, large, channel, work, add)
        _ingest_rows(large, large_messages, channel, work, add, rounds)


def _reading_rows(
    small: Path, large: Path, channel: str, work: Path, add: Callable[[str, str, str, str], None]
) -> None:
    """``awai recluster``, ``awai read FILE`` and a process holding the channel, small vs large."""
    size = f"{_count(small, channel):,} vs {_count(large, channel):,}"
    runs = [awai_peak(folder, "recluster") for folder in (small, large)]
    add(
        f"`awai recluster` (first), {size} messages (goal ≤ 30 s)",
        f"{runs[0][0]:.1f} s / {runs[0][1]:.0f} MiB",
        f"{runs[1][0]:.1f} s / {runs[1][1]:.0f} MiB",
        f"{runs[1][0] / runs[0][0]:.1f}×",
    )
    reads = stored_reads((small, large), channel, work)
    add(
        f"`awai read FILE --message ID --json`, stored file, {size} lines (median of"
        f" {STORED_READS} in turns)",
        f"{reads[0]:.2f} s",
        f"{reads[1]:.2f} s",
        f"{reads[1] / reads[0]:.2f}× (goal ≤ 1.5×)",
    )
    held = [holding(folder, channel) for folder in (small, large)]
    add(
        f"process holding the channel after one reading, RSS, {size} (goal ≤ 400 MiB)",
        _memory(held[0]),
        _memory(held[1]),
        f"{held[1].rss / held[0].rss:.2f}×",
    )
    add(
        "the same process: first reading; p50 / p95 of 40 more (ms)",
        _latency(held[0]),
        _latency(held[1]),
        f"p95 {held[1].p95 / held[0].p95:.2f}× (goal ≤ 3×)",
    )


def _edit_rows(
    kept: Path, small: Path, channel: str, work: Path, add: Callable[[str, str, str, str], None]
) -> None:
    """A bot's process taking a live message and an edit (of the middle message, then in another
    process of a recent one), small vs large, each on a copy of its own (the live message is the
    newest: later rows' ingests would come before it)."""
    for back, which in ((0, "the middle message"), (RECENT, f"a recent message ({RECENT} back)")):
        edits = []
        for folder in (small, kept):
            with copied(folder, work, "edited") as copy:
                edits.append(edited(copy, channel, back))
        add(
            f"a bot's process, RSS after a reading → a live message → an edit of {which}"
            " (each read after)",
            _edits(edits[0]),
            _edits(edits[1]),
            f"{edits[1].edit / edits[0].edit:.2f}×",
        )
        add(
            "the same: seconds to store and read the live message; the edit",
            f"{edits[0].live_seconds:.2f}; {edits[0].edit_seconds:.2f}",
            f"{edits[1].live_seconds:.2f}; {edits[1].edit_seconds:.2f}",
            f"edit {edits[1].edit_seconds / edits[0].edit_seconds:.1f}×",
        )


def _ingest_rows(
    large: Path,
    large_messages: int,
    channel: str,
    work: Path,
    add: Callable[[str, str, str, str], None],
    rounds: int,
) -> None:
    """The ingest rate and its ratio to raw encoding, in turns, then ``awai ingest``'s peak."""
    warmed = train_texts(WARM_UP + 2_000)
    texts = warmed[:2_000]
    turns: list[tuple[float, float, float, float]] = []
    for turn in range(rounds):
        empty = work / f"empty-{turn}"
        first = slice_rates(empty, new_messages(channel, warmed, 0), WARM_UP)
        shutil.rmtree(empty)
        at = large_messages + (WARM_UP + 2_000) * turn
        later = slice_rates(large, new_messages(channel, warmed, at), WARM_UP)
        turns.append((*first, *later))
    raw_first, ingest_first, raw_late, ingest_late = (
        statistics.median(t[i] for t in turns) for i in range(4)
    )
    add(
        f"ingest rate of 2,000 new messages after {WARM_UP} untimed, into an empty folder vs"
        f" at {large_messages:,} (median of {rounds} in turns)",
        f"{ingest_first:.0f} msg/s",
        f"{ingest_late:.0f} msg/s",
        f"{ingest_late / ingest_first:.2f}× (goal ≥ 0.9×)",
    )
    add(
        "ingest / raw batched encode of the same texts (goal ≥ 0.8)",
        f"{ingest_first / raw_first:.2f}",
        f"{ingest_late / raw_late:.2f}",
        "",
    )
    ten = write_lines(work / "ten.jsonl", new_messages(channel, train_texts(10_000), 0))
    more = write_lines(work / "more.jsonl", new_messages(channel, texts, _count(large, channel)))
    peaks = [
        awai_peak(work / "ingest-10k", "ingest", str(ten), "--channel", channel),
        awai_peak(large, "ingest", str(more), "--channel", channel),
    ]
    shutil.rmtree(work / "ingest-10k")
    add(
        "peak RSS, `awai ingest` of 10,000 into an empty folder vs 2,000 into the large"
        " channel (goal ≤ 500 MiB)",
        f"{peaks[0][1]:,.0f} MiB ({peaks[0][0]:.0f} s)",
        f"{peaks[1][1]:,.0f} MiB ({peaks[1][0]:.0f} s)",
        f"{peaks[1][1] / peaks[0][1]:.2f}×",
    )
    # One command storing a long file: its peak against the 10,000-line one's is the growth
    # per message of a long ingest (what "no more at 100k" asks of one that long).
    long = write_lines(work / "long.jsonl", new_messages(channel, train_texts(LONG_INGEST), 0))
    seconds, peak = awai_peak(work / "ingest-long", "ingest", str(long), "--channel", channel)
    shutil.rmtree(work / "ingest-long")
    add(
        f"peak RSS, `awai ingest` of 10,000 vs {LONG_INGEST:,} lines into an empty folder"
        " (goal: no more)",
        f"{peaks[0][1]:,.0f} MiB",
        f"{peak:,.0f} MiB ({seconds:.0f} s)",
        f"+{(peak - peaks[0][1]) / (LONG_INGEST - 10_000) * 1000:.1f} MiB / 1,000 lines",
    )


def inner_product_copy(kept: Path, target: Path, channel: str) -> None:
    """A copy of the kept folder whose collection is of the space new collections get
    (``storage.vectors.SPACE``): its vectors read out, the collection made again under the same
    name, the same bits written back (Chroma gives back what an inner-product collection was
    given, so the read model and SQL still match it). Why: a kept folder made before holds a
    cosine collection, which an ingest must read back from; a new channel's does not."""
    shutil.copytree(kept, target)
    settings = Settings(data_dir=target, _env_file=None)  # type: ignore[call-arg]
    store = AwaiStore.open(settings)
    try:
        with store.db.read() as session:
            row = store.db.channel(session, channel)
            assert row is not None, f"no channel {channel} in {kept}"
            name, key = row.collection, row.key
        client: Any = store.vectors.client
        old = client.get_collection(name)
        ids: list[str] = []
        vectors: list[np.ndarray] = []
        metadatas: list[Any] = []
        while True:
            page = old.get(include=["embeddings", "metadatas"], limit=5000, offset=len(ids))
            if not page["ids"]:
                break
            ids += page["ids"]
            vectors.append(np.asarray(page["embeddings"], dtype=np.float32))
            metadatas += page["metadatas"]
        client.delete_collection(name)
        store.vectors.create(name, key)
        store.vectors.upsert(name, ids, np.vstack(vectors), metadatas)
    finally:
        store.close()


def _count(data: Path, channel: str) -> int:
    settings = Settings(data_dir=data, _env_file=None)  # type: ignore[call-arg]
    store = AwaiStore.open(settings, read_only=True)
    try:
        return store.message_count(channel)
    finally:
        store.close()


def _memory(held: Holding) -> str:
    return f"{held.rss:.0f} MiB ({held.anonymous:.0f} anon, {held.file_backed:.0f} file)"


def _edits(found: Edited) -> str:
    return f"{found.read:.0f} → {found.live:.0f} → {found.edit:.0f} MiB"


def _latency(held: Holding) -> str:
    return f"{held.first_reading * 1000:.0f}; {held.p50 * 1000:.1f} / {held.p95 * 1000:.1f}"
