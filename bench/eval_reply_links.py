"""Association measured against human reply-to links (Ubuntu IRC, Kummerfeld et al., ACL 2019).

Why: a reading is only as good as what its context holds. People annotated, for each message of
these IRC logs, which earlier message it responds to; a good context for a message contains that
parent. Each log is fed through the real engine as one channel (speaker = nick, text = message,
join/quit lines skipped, a fresh data folder), then for every annotated message with a gold parent
we ask whether a parent is inside the context the engine assembles for it (flow ∪ recalled), which
only ever uses earlier lines.

Ingest (embedding) is the slow part, so it runs once per log; every settings variant is then read
from the same stored channel by an engine built with those settings (``Engine.context``, the path
the bots use). ``--data-dir`` keeps the store so a later run skips the embedding entirely.

Data: ../shared/data/irc-disentangle (CC BY 4.0). Kummerfeld, Gouravajhala, Peper, Athreya, Gunasekara,
Ganhotra, Patel, Polymenakos, Lasecki. "A Large-Scale Corpus for Conversation Disentanglement",
ACL 2019.

    .venv/bin/python bench/eval_reply_links.py                       # defaults, both dev files
    .venv/bin/python bench/eval_reply_links.py --set association.max_items=4 --set flow.capacity=5
"""

from __future__ import annotations

import os

# One BLAS thread: each reading multiplies a few query vectors by the channel, and on a shared
# two-core machine OpenBLAS's thread hand-off costs more than the product (about 10x here).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import gzip
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from awai_engine.association.recall import recall
from awai_engine.context import build_flow
from awai_engine.engine import Engine
from awai_engine.settings import Settings
from awai_engine.timeline import Timeline
from awai_engine.values import Association, Flow, Utterance
from awai_engine.visibility import EVERYTHING
from bench.variants import varied
from bots.runtime import Runtime, open_runtime
from bots.terminal.transcript import addressees


def shared_data() -> Path:
    """``shared/data`` beside the project, or beside one of its parents (a git worktree)."""
    here = Path(__file__).resolve()
    for parent in here.parents[1:]:
        if (parent.parent / "shared" / "data").is_dir():
            return parent.parent / "shared" / "data"
    return here.parents[2] / "shared" / "data"


DATA = shared_data() / "irc-disentangle"
DEFAULT_FILES = (DATA / "ubuntu-dev.jsonl", DATA / "channel-two-dev.jsonl")
DAY = 86_400.0


@dataclass(frozen=True)
class GoldLink:
    """One annotated message with its parents, in engine positions (system lines skipped)."""

    position: int
    message_id: str
    parents: frozenset[str]
    nearest_back: int  # messages between the nearest parent and the message, plus one


@dataclass
class ChannelLog:
    """One IRC log, stored as one channel, with the gold links to score against."""

    file: str
    channel: str
    utterances: list[Utterance]
    gold: list[GoldLink] = field(default_factory=list)
    # positions of annotated messages with a gold parent or none (starting anew), in order
    annotated: list[int] = field(default_factory=list)
    parents_not_stored: int = 0  # gold messages whose every parent is a system or empty line


@dataclass
class Score:
    """Counts for one file (or all); ratios are computed when printed."""

    links: int = 0
    in_context: int = 0
    recency: int = 0
    far: int = 0
    far_in_context: int = 0
    predicted: int = 0
    predicted_right: int = 0
    context_items: int = 0

    def add(self, other: Score) -> None:
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def recall(self) -> float:
        return _ratio(self.in_context, self.links)

    @property
    def recency_recall(self) -> float:
        return _ratio(self.recency, self.links)

    @property
    def far_recall(self) -> float:
        return _ratio(self.far_in_context, self.far)

    @property
    def link_precision(self) -> float:
        return _ratio(self.predicted_right, self.predicted)

    @property
    def link_recall(self) -> float:
        return _ratio(self.predicted_right, self.links)

    @property
    def link_f1(self) -> float:
        p, r = self.link_precision, self.link_recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def mean_context(self) -> float:
        return self.context_items / self.links if self.links else 0.0


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


# -- reading the data ----------------------------------------------------------------------------


def read_logs(path: Path) -> list[ChannelLog]:
    """Each ``conversation_id`` of a file as one channel of utterances, with its gold links."""
    records: dict[str, list[dict]] = {}
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                records.setdefault(record["conversation_id"], []).append(record)
    name = path.name.split(".")[0]
    return [_channel_log(name, log_id, rows) for log_id, rows in records.items()]


def _channel_log(file: str, log_id: str, rows: list[dict]) -> ChannelLog:
    rows = sorted(rows, key=lambda row: row["index"])
    channel = f"irc:{file}:{log_id}"
    log = ChannelLog(file=file, channel=channel, utterances=[])
    position_of: dict[int, int] = {}
    speakers: set[str] = set()
    clock = _Clock()
    for row in rows:
        if row["is_system"] or not row["speaker"] or not row["text"].strip():
            continue
        position_of[row["index"]] = len(log.utterances)
        log.utterances.append(
            Utterance(
                channel=channel,
                message_id=str(row["index"]),
                speaker_id=row["speaker"],
                speaker_name=row["speaker"],
                text=row["text"],
                ts=clock.seconds(row["timestamp"]),
                # The adapter's own rule: `nick:` / `nick,` at the start, or `@nick`, for a nick
                # that has spoken before in this channel.
                addressees=addressees(row["text"], speakers),
            )
        )
        speakers.add(row["speaker"])
    for row in rows:
        if not row["annotated"] or row["index"] not in position_of:
            continue
        if not row["reply_to"]:
            log.annotated.append(position_of[row["index"]])
            continue
        parents = [position_of[p] for p in row["reply_to"] if p in position_of]
        if not parents:
            log.parents_not_stored += 1
            continue
        position = position_of[row["index"]]
        log.annotated.append(position)
        log.gold.append(
            GoldLink(
                position=position,
                message_id=str(row["index"]),
                parents=frozenset(log.utterances[p].message_id for p in parents),
                nearest_back=position - max(parents),
            )
        )
    return log


class _Clock:
    """Seconds since the epoch from the log's minute stamps, never running backwards.

    Ubuntu logs carry a date and time; the other channel only ``HH:MM``, so a time earlier than the
    last one starts a new day. The store orders a channel by ``ts`` (ties keep arrival order), so
    a non-decreasing clock keeps the log's own order.
    """

    def __init__(self) -> None:
        self.last = 0.0
        self.day = 0.0

    def seconds(self, stamp: str | None) -> float:
        if stamp:
            if len(stamp) <= 5:
                hours, minutes = stamp.split(":")
                moment = self.day + int(hours) * 3600 + int(minutes) * 60
                if moment < self.last:
                    self.day += DAY
                    moment += DAY
            else:
                moment = datetime.fromisoformat(stamp).replace(tzinfo=UTC).timestamp()
            self.last = max(self.last, moment)
        return self.last


# -- ingest once, read many times ----------------------------------------------------------------


class Bench:
    """One runtime (store, embedder, offline backend); readers with any settings share it.

    The runtime is built by :func:`bots.runtime.open_runtime`, as every adapter builds it, with
    the language model switched off so ingest is the offline extraction whatever the environment.
    """

    def __init__(self, data_dir: Path, base: Settings) -> None:
        self.runtime: Runtime = open_runtime(
            base.model_copy(
                update={"data_dir": data_dir, "llm": base.llm.model_copy(update={"api_key": None})}
            )
        )

    @property
    def settings(self) -> Settings:
        """The runtime's settings (thresholds on the embedding model's scale)."""
        return self.runtime.settings

    def engine(self, settings: Settings) -> Engine:
        engine = self.runtime.engine
        return Engine(settings, self.runtime.store, engine.embedder, engine.backend)

    def ingest(self, logs: Sequence[ChannelLog]) -> None:
        """Store every log (a no-op for logs already stored in a reused data folder)."""
        for log in logs:
            report = self.runtime.engine.ingest(log.utterances)
            if report.problems:
                raise SystemExit(f"{log.channel}: {len(report.problems)} messages refused")
            stored = len(self.timeline(log).messages)
            if stored != len(log.utterances):
                raise SystemExit(f"{log.channel}: {stored} stored of {len(log.utterances)}")

    def timeline(self, log: ChannelLog) -> Timeline:
        return self.runtime.store.timeline(log.channel)

    def close(self) -> None:
        self.runtime.close()


Reader = Callable[[ChannelLog, GoldLink], tuple[tuple[str, ...], tuple[Association, ...]]]


def engine_reader(engine: Engine) -> Reader:
    """Contexts as the bots get them: ``Engine.context`` on the stored channel."""

    def read(log: ChannelLog, link: GoldLink) -> tuple[tuple[str, ...], tuple[Association, ...]]:
        context = engine.context(log.channel, link.message_id, EVERYTHING)
        return context.flow.message_ids(), context.associations

    return read


def timeline_reader(bench: Bench, settings: Settings) -> Reader:
    """The same context functions on the cached timelines, skipping the store's per-read check.

    For tuning sweeps; :func:`main` reports through :func:`engine_reader`, and the tuning script
    checks that both agree on its chosen settings.
    """
    timelines: dict[str, Timeline] = {}

    def read(log: ChannelLog, link: GoldLink) -> tuple[tuple[str, ...], tuple[Association, ...]]:
        timeline = timelines.get(log.channel) or timelines.setdefault(
            log.channel, bench.timeline(log)
        )
        flow, recalled = _context(timeline, link.position, settings)
        return flow.message_ids(), recalled

    return read


def evaluate(read: Reader, log: ChannelLog, size: int) -> Score:
    """Score the contexts of every gold message of one log; ``size`` is C + A."""
    score = Score()
    for link in log.gold:
        flow_ids, associations = read(log, link)
        ids = {*flow_ids, *(item.source.message_id for item in associations)}
        score.links += 1
        score.context_items += len(ids)
        score.in_context += bool(ids & link.parents)
        score.recency += link.nearest_back <= size
        if link.nearest_back > size:
            score.far += 1
            score.far_in_context += bool(ids & link.parents)
        if associations:
            score.predicted += 1
            score.predicted_right += associations[0].source.message_id in link.parents
    return score


def check_prefix_invariant(
    bench: Bench, log: ChannelLog, settings: Settings, samples: int, seed: int = 7
) -> int:
    """Rebuild the channel up to a message and compare its context with the full channel's.

    The full timeline holds later lines too; if any of them leaked into a context, the two would
    differ. Returns the number of messages checked (raises on a difference).
    """
    timeline = bench.timeline(log)
    chosen = random.Random(seed).sample(log.gold, min(samples, len(log.gold)))
    for link in chosen:
        full = _context(timeline, link.position, settings)
        if _context(_prefix(timeline, link.position), link.position, settings) != full:
            raise AssertionError(
                f"{log.channel} {link.message_id}: later lines changed the context"
            )
    return len(chosen)


def _context(
    timeline: Timeline, position: int, settings: Settings
) -> tuple[Flow, tuple[Association, ...]]:
    flow = build_flow(timeline, position, settings.flow)
    return flow, recall(timeline, position, flow, settings.association, settings.activation)


def _prefix(timeline: Timeline, position: int) -> Timeline:
    prefix = Timeline(dimension=timeline.dimension)
    for message in timeline.messages[: position + 1]:
        rows = timeline.rows_of(message.ref.position)
        prefix.append(
            message.ref,
            message.text,
            message.summary,
            message.thoughts,
            timeline.vectors[rows.start : rows.stop],
            message.addressees,
        )
    return prefix


# -- settings and output -------------------------------------------------------------------------


def with_overrides(settings: Settings, overrides: Iterable[str]) -> Settings:
    """Apply ``section.field=value`` (or ``rules.field=value``) overrides, validated by the
    section's own model (:func:`bench.variants.varied`)."""
    changes = []
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set wants section.field=value, got {item!r}")
        changes.append((key, value))
    return varied(settings, changes)


def describe(settings: Settings) -> str:
    flow, association, activation = settings.flow, settings.association, settings.activation
    return (
        f"C={flow.capacity} A={association.max_items} θ0={association.theta_0} "
        f"λ={association.slope} d0={association.d_0} θmax={association.theta_max} "
        f"τrep={activation.repeat_similarity}; cues: addressed={association.addressed_recent} "
        f"addressed-speaker={association.addressed_speaker_recent} own={association.own_recent} "
        f"window={association.cue_window}"
    )


HEADER = (
    "| file | links | in context | last C+A | far links | far in context | "
    "link P | link R | link F1 | items used |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def row(name: str, score: Score) -> str:
    return (
        f"| {name} | {score.links} | {score.recall:.1%} | {score.recency_recall:.1%} | "
        f"{score.far} | {score.far_recall:.1%} | {score.link_precision:.1%} | "
        f"{score.link_recall:.1%} | {score.link_f1:.1%} | {score.mean_context:.2f} |"
    )


def score_files(read: Reader, logs: Sequence[ChannelLog], size: int) -> dict[str, Score]:
    """Scores per file, plus ``overall``; ``size`` is C + A."""
    scores: dict[str, Score] = {}
    for log in logs:
        scores.setdefault(log.file, Score()).add(evaluate(read, log, size))
    overall = Score()
    for score in scores.values():
        overall.add(score)
    scores["overall"] = overall
    return scores


def load(files: Sequence[Path]) -> list[ChannelLog]:
    logs = []
    for path in files:
        if not path.exists():
            raise SystemExit(f"{path} not found (the data lives in ../shared/data/irc-disentangle)")
        logs.extend(read_logs(path))
    return logs


# -- what every dev-log bench shares --------------------------------------------------------------


def log_arguments(description: str) -> argparse.ArgumentParser:
    """The dev-log benches' parser: the files to read (both dev files unless named) and
    ``--data-dir``, so every bench reuses a store another one kept; each adds its own options."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("files", nargs="*", type=Path, default=list(DEFAULT_FILES))
    parser.add_argument(
        "--data-dir", type=Path, help="keep the store here and reuse it (default: a temp folder)"
    )
    return parser


@contextmanager
def ingested(logs: Sequence[ChannelLog], data_dir: Path | None, prefix: str) -> Iterator[Bench]:
    """A :class:`Bench` holding ``logs``, on ``data_dir`` or a temporary folder (``prefix``) that
    is removed after; the runtime is closed on the way out, whatever happened inside."""
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        bench = Bench(data_dir or Path(scratch), Settings(_env_file=None))
        try:
            bench.ingest(logs)
            yield bench
        finally:
            bench.close()


def annotated_messages(
    bench: Bench, logs: Sequence[ChannelLog]
) -> Iterator[tuple[ChannelLog, Timeline, int, frozenset[int]]]:
    """Each annotated message of ``logs`` in order: its log, the log's stored timeline, its
    position, and its gold parents' positions (empty for a message starting anew), so a bench
    scores positions on the timeline it reads rather than message ids."""
    for log in logs:
        timeline = bench.timeline(log)
        gold = {link.position: link for link in log.gold}
        for position in log.annotated:
            link = gold.get(position)
            parents = (
                frozenset(timeline.position_of[m] for m in link.parents) if link else frozenset()
            )
            yield log, timeline, position, parents


def main(argv: Sequence[str] | None = None) -> int:
    parser = log_arguments(__doc__.split("\n\n")[0])
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.FIELD=VALUE",
        help="override a setting, e.g. association.theta_0=0.4 (repeatable)",
    )
    parser.add_argument(
        "--check-invariant",
        type=int,
        default=20,
        metavar="N",
        help="messages per log re-read from a channel cut right after them (0: skip)",
    )
    args = parser.parse_args(argv)
    logs = load(args.files)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="awai-reply-links-") as scratch:
        bench = Bench(args.data_dir or Path(scratch), Settings(_env_file=None))
        try:
            # Overrides apply on the runtime's settings, as written (the embedding model's scale).
            try:
                settings = with_overrides(bench.settings, args.set)
            except ValueError as error:
                raise SystemExit(f"--set: {error}") from None
            bench.ingest(logs)
            ingested = time.perf_counter()
            size = settings.flow.capacity + settings.association.max_items
            scores = score_files(engine_reader(bench.engine(settings)), logs, size)
            scored = time.perf_counter()
            checked = sum(
                check_prefix_invariant(bench, log, settings, args.check_invariant) for log in logs
            )
        finally:
            bench.close()
    lines = sum(len(log.utterances) for log in logs)
    print(f"Settings: {describe(settings)}")
    print(f"Context size C + A = {settings.flow.capacity + settings.association.max_items}\n")
    print(HEADER)
    for name, score in scores.items():
        print(row(name, score))
    skipped = sum(log.parents_not_stored for log in logs)
    print(
        f"\n{lines:,} messages in {len(logs)} channels; ingest {ingested - started:.1f} s, "
        f"scoring {scored - ingested:.1f} s; {skipped} gold messages skipped (parent is a "
        f"join/quit line); prefix invariant held on {checked} re-read messages."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
