"""The headline measured against human reply-to links: does it name what the message responds to?

Why: the first line of a reading names one earlier message, and a person checks it first. Each
dev log (Kummerfeld et al., ACL 2019, CC BY 4.0) is ingested through the real runtime as one
channel and every annotated message is read with ``Engine.read`` — what ``awai read FILE --all
--json`` prints as ``headline`` — offline. Against, in the same run and on the same stored
channel:

- *previous*: the message just before;
- *addressee-else-previous*: the addressee's latest message when the message addresses someone
  (the adapter's ``Name:``/``Name,``/``@name``), else the message just before;
- *top-1 cosine*: the earlier line of the last 50 closest in meaning (MiniLM, stored vectors);
- *top-1 BM25*: the earlier line of the last 50 that BM25 ranks best for the message's words.

Measures, per file: accuracy (the headline names a gold parent, over messages that have one),
precision (right over every annotated message it names something for: naming a message that
starts a new conversation is wrong), coverage (share of annotated messages given a headline),
far precision (headlines naming a message more than 10 lines back), and precision by relation.
Association's own measures (parent in context, far links, precision of the first recalled item)
come from :mod:`bench.eval_reply_links` on the same engine. Only totals are printed.

    .venv/bin/python -m bench.eval_headline --data-dir bench/.cache/headline-store
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from awai_engine.engine import Engine
from awai_engine.timeline import Timeline
from awai_engine.visibility import EVERYTHING
from bench.eval_reply_links import (
    HEADER,
    Bench,
    ChannelLog,
    annotated_messages,
    engine_reader,
    ingested,
    load,
    log_arguments,
    row,
    score_files,
)

FAR_BACK = 10  # a headline more than ten lines back is "far"
COSINE_WINDOW = 50
BM25_DEPTH = 500  # BM25's best of the whole prefix searched for one of the last 50 lines


@dataclass
class Tally:
    """Counts of one way of naming a parent, over one file (or all)."""

    with_parent: int = 0
    annotated: int = 0
    named: int = 0
    right: int = 0
    right_with_parent: int = 0
    far_named: int = 0
    far_right: int = 0
    by_relation: Counter[str] = field(default_factory=Counter)
    right_by_relation: Counter[str] = field(default_factory=Counter)

    def add(self, other: Tally) -> None:
        for name in ("with_parent", "annotated", "named", "right", "right_with_parent"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.far_named += other.far_named
        self.far_right += other.far_right
        self.by_relation.update(other.by_relation)
        self.right_by_relation.update(other.right_by_relation)

    def count(
        self, named: int | None, parents: frozenset[int], position: int, relation: str
    ) -> None:
        self.annotated += 1
        self.with_parent += bool(parents)
        if named is None:
            return
        right = named in parents
        self.named += 1
        self.right += right
        self.right_with_parent += right and bool(parents)
        self.by_relation[relation] += 1
        self.right_by_relation[relation] += right
        if position - named > FAR_BACK:
            self.far_named += 1
            self.far_right += right

    def line(self, name: str) -> str:
        return (
            f"| {name} | {_share(self.right_with_parent, self.with_parent)} | "
            f"{_share(self.right, self.named)} | {_share(self.named, self.annotated)} | "
            f"{_share(self.far_right, self.far_named)} ({self.far_named}) |"
        )


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.3f}" if whole else "—"


Namer = Callable[[ChannelLog, Timeline, int], tuple[int | None, str]]


def headline_namer(engine: Engine) -> Namer:
    """The engine's headline: the position it names and its relation."""

    def name(log: ChannelLog, timeline: Timeline, position: int) -> tuple[int | None, str]:
        reading = engine.read(log.channel, log.utterances[position].message_id, EVERYTHING)
        connection = reading.headline.connection
        if connection is None:
            return None, ""
        return connection.message.position, connection.relation

    return name


def previous(log: ChannelLog, timeline: Timeline, position: int) -> tuple[int | None, str]:
    return (position - 1 if position else None), "previous"


def addressee_else_previous(
    log: ChannelLog, timeline: Timeline, position: int
) -> tuple[int | None, str]:
    addressed = {name.casefold() for name in log.utterances[position].addressees}
    if addressed:
        for earlier in range(position - 1, -1, -1):
            if timeline.speaker_names[earlier].casefold() in addressed:
                return earlier, "addressee"
    return previous(log, timeline, position)


def top_cosine(log: ChannelLog, timeline: Timeline, position: int) -> tuple[int | None, str]:
    start = max(0, position - COSINE_WINDOW)
    if start == position:
        return None, ""
    query = timeline.vectors[np.asarray(timeline.rows_of(position))]
    rows = range(timeline.messages[start].first_row, timeline.messages[position].first_row)
    best = (timeline.vectors[rows.start : rows.stop] @ query.T).max(axis=1)
    return int(timeline.row_positions[rows.start + int(best.argmax())]), "cosine"


def top_bm25(log: ChannelLog, timeline: Timeline, position: int) -> tuple[int | None, str]:
    """The earlier line of the last 50 BM25 ranks best for the message's words (the prefix's
    statistics, as lexical recall ranks them); none when no line of them shares a word."""
    start = max(0, position - COSINE_WINDOW)
    found = timeline.lexicon.search(timeline.messages[position].text, position, BM25_DEPTH)
    near = (int(q) for q in found.positions if int(q) >= start)
    return next(near, None), "bm25"


def tally(
    logs: Sequence[ChannelLog], bench: Bench, namers: dict[str, Namer]
) -> dict[str, dict[str, Tally]]:
    """Per file and overall, a tally per way of naming."""
    tallies: dict[str, dict[str, Tally]] = {}
    for log, timeline, position, parents in annotated_messages(bench, logs):
        for way, namer in namers.items():
            named, relation = namer(log, timeline, position)
            found = tallies.setdefault(log.file, {}).setdefault(way, Tally())
            found.count(named, parents, position, relation)
    overall: dict[str, Tally] = {}
    for per_file in tallies.values():
        for way, found in per_file.items():
            overall.setdefault(way, Tally()).add(found)
    tallies["overall"] = overall
    return tallies


def main(argv: Sequence[str] | None = None) -> int:
    args = log_arguments(__doc__.split("\n\n")[0]).parse_args(argv)
    logs = load(args.files)
    started = time.perf_counter()
    with ingested(logs, args.data_dir, "awai-headline-") as bench:
        ingested_at = time.perf_counter()
        engine = bench.engine(bench.settings)
        namers: dict[str, Namer] = {
            "AWAI headline": headline_namer(engine),
            "previous": previous,
            "addressee else previous": addressee_else_previous,
            "top-1 cosine (last 50)": top_cosine,
            "top-1 BM25 (last 50)": top_bm25,
        }
        tallies = tally(logs, bench, namers)
        read = time.perf_counter()
        settings = bench.settings
        size = settings.flow.capacity + settings.association.max_items
        association = score_files(engine_reader(engine), logs, size)
    for file, per_way in tallies.items():
        print(f"\n### {file}\n")
        print("| way | accuracy | precision | coverage | far precision (named) |")
        print("|---|---:|---:|---:|---:|")
        for way, found in per_way.items():
            print(found.line(way))
    overall = tallies["overall"]["AWAI headline"]
    print(
        "\nHeadline by relation (overall): "
        + ", ".join(
            f"{relation} {overall.right_by_relation[relation] / count:.3f} ({count})"
            for relation, count in overall.by_relation.most_common()
        )
    )
    print("\nAssociation (context of the same engine):\n")
    print(HEADER)
    for name, score in association.items():
        print(row(name, score))
    print(
        f"\ningest {ingested_at - started:.0f} s, headlines {read - ingested_at:.0f} s, "
        f"{sum(len(log.annotated) for log in logs)} annotated messages"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
