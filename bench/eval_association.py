"""Association at every distance, against two kinds of human judgement, in one run.

Why: a reading's recalled items must hold what a message answers or returns to, near and far,
and little else. Two development sets judge that:

- **IRC reply-to links** (../shared/data/irc-disentangle, Kummerfeld et al., ACL 2019, CC BY 4.0):
  (a) is a gold parent in the context (flow ∪ recalled), and how often for *far links* (nearest
  parent more than C + A messages back); (b) **precision**: the share of recalled items that
  belong to the message's own gold conversation (the connected component of the ``reply_to``
  graph; only recalled items whose conversation is annotated are counted).
- **LoCoMo** (../shared/data/locomo, Maharana et al., ACL 2024, CC BY-NC 4.0): (c) **long-range
  evidence recall**: each question is appended at the end of its conversation, and we ask
  whether the recalled items hold at least one of its evidence messages. Two ways: *stream*, all
  questions appended one after another by a new speaker (a question's flow is the questions
  before it), and *alone*, each question appended by itself (its flow is the conversation's own
  end).

Every method gets the same flow (the engine's, C messages) and at most A recalled items, so they
are compared at the same number of items: the last-k messages (the A messages before the flow),
top-A cosine (MiniLM, the best of a message's thoughts against each earlier message's), BM25
top-A over message texts (prefix statistics, :mod:`awai_engine.lexical`), their reciprocal-rank
fusion (k = 60), and AWAI's own association with any settings (``--variant NAME:k=v,...``).

Messages are cut into thoughts by the offline backend, as ingest does, and their vectors are
cached on disk (``bench/.cache/``, gitignored), so after the first run a full evaluation takes
about a minute. Timelines are built in memory from those vectors (what the store builds from its
rows); ``--check-invariant`` re-reads messages from a timeline cut right after them.

    nice -n 10 .venv/bin/python -m bench.eval_association                # full run
    nice -n 10 .venv/bin/python -m bench.eval_association --sample 0.2   # a fifth, for iterating
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import copy
import hashlib
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np

from awai_engine.association.recall import recall
from awai_engine.backends.offline import OfflineBackend
from awai_engine.context import build_flow
from awai_engine.embedding import Embedder
from awai_engine.settings import Settings
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef, Thought, Utterance
from bench.eval_reply_links import (
    DEFAULT_FILES,
    ChannelLog,
    load,
    shared_data,
)
from bench.variants import varied

LOCOMO = shared_data() / "locomo"
CACHE = Path(__file__).resolve().parent / ".cache"
RRF_K = 60
ASKER = "reader"  # the new speaker who asks the LoCoMo questions


# -- vectors, cached ------------------------------------------------------------------------------


class VectorCache:
    """Thought vectors by text, on disk: embedding is the slow part, and texts repeat across runs."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        slug = hashlib.sha1(embedder.model_name.encode()).hexdigest()[:12]
        self.path = CACHE / f"vectors-{slug}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        if self.path.exists():
            stored = np.load(self.path, allow_pickle=False)
            self.vectors = dict(zip(stored["texts"].tolist(), stored["vectors"], strict=True))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = sorted({text for text in texts if text not in self.vectors})
        if missing:
            print(f"embedding {len(missing):,} new thoughts…", file=sys.stderr)
            for start in range(0, len(missing), 1024):
                chunk = missing[start : start + 1024]
                self.vectors.update(zip(chunk, self.embedder.encode(chunk), strict=True))
            CACHE.mkdir(exist_ok=True)
            texts_all = list(self.vectors)
            np.savez(
                self.path,
                texts=np.array(texts_all),
                vectors=np.stack([self.vectors[text] for text in texts_all]),
            )
        return np.stack([self.vectors[text] for text in texts])


@dataclass(frozen=True)
class Prepared:
    """One message as ingest would store it: thoughts, summary and their vectors."""

    utterance: Utterance
    thoughts: tuple[Thought, ...]
    summary: str
    vectors: np.ndarray


def prepare(utterances: Sequence[Utterance], cache: VectorCache) -> list[Prepared]:
    backend = OfflineBackend()
    extractions = [backend.extract_one(utterance.text) for utterance in utterances]
    vectors = cache.encode([t.text for e in extractions for t in e.thoughts])
    prepared, row = [], 0
    for utterance, extraction in zip(utterances, extractions, strict=True):
        count = len(extraction.thoughts)
        prepared.append(
            Prepared(utterance, extraction.thoughts, extraction.summary, vectors[row : row + count])
        )
        row += count
    return prepared


def build_timeline(messages: Sequence[Prepared], settings: Settings, base: Timeline | None = None):
    """A timeline of ``messages`` (appended after a copy of ``base``, if given)."""
    timeline = (
        copy.deepcopy(base)
        if base is not None
        else Timeline(dimension=messages[0].vectors.shape[1], index=settings.recall_index)
    )
    for item in messages:
        u = item.utterance
        ref = MessageRef(
            message_id=u.message_id,
            speaker_id=u.speaker_id,
            speaker_name=u.speaker_name,
            ts=u.ts,
            position=len(timeline.messages),
            thread_root=u.thread_root,
        )
        timeline.append(ref, u.text, item.summary, item.thoughts, item.vectors, u.addressees)
    return timeline


# -- methods: what each puts in the context -------------------------------------------------------


@dataclass(frozen=True)
class Context:
    flow: tuple[int, ...]  # positions
    recalled: tuple[int, ...]  # positions, at most A
    reasons: tuple[str, ...] = ()


Method = Callable[[Timeline, int], Context]


def _flow_positions(timeline: Timeline, position: int, settings: Settings) -> tuple[int, ...]:
    flow = build_flow(timeline, position, settings.flow)
    return tuple(timeline.position_of[message_id] for message_id in flow.message_ids())


def _take(ranked: Sequence[int], flow: tuple[int, ...], room: int) -> tuple[int, ...]:
    taken: list[int] = []
    for source in ranked:
        if source not in flow and source not in taken:
            taken.append(int(source))
            if len(taken) == room:
                break
    return tuple(taken)


def cosine_ranking(timeline: Timeline, position: int, limit: int = 100) -> list[int]:
    """Earlier messages by their best thought's cosine with the message's best thought."""
    end = timeline.messages[position].first_row
    if end == 0:
        return []
    cues = timeline.vectors[timeline.rows_of(position)]
    best = (timeline.vectors[:end] @ cues.T).max(axis=1)
    order = np.argsort(-best, kind="stable")
    ranked: list[int] = []
    seen: set[int] = set()
    for row in order:
        source = int(timeline.row_positions[row])
        if source not in seen:
            seen.add(source)
            ranked.append(source)
            if len(ranked) == limit:
                break
    return ranked


def bm25_ranking(timeline: Timeline, position: int, limit: int = 100) -> list[int]:
    found = timeline.lexicon.search(timeline.messages[position].text, position, limit)
    return [int(source) for source in found.positions]


def rrf(rankings: Sequence[Sequence[int]]) -> list[int]:
    score: dict[int, float] = {}
    for ranking in rankings:
        for rank, source in enumerate(ranking):
            score[source] = score.get(source, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(score, key=lambda source: (-score[source], -source))


def anchors(settings: Settings) -> dict[str, Method]:
    room = settings.association.max_items

    def last_k(timeline: Timeline, position: int) -> Context:
        flow = _flow_positions(timeline, position, settings)
        return Context(flow, _take(range(position - 1, -1, -1), flow, room))

    def ranked(rank: Callable[[Timeline, int], list[int]]) -> Method:
        def method(timeline: Timeline, position: int) -> Context:
            flow = _flow_positions(timeline, position, settings)
            return Context(flow, _take(rank(timeline, position), flow, room))

        return method

    return {
        f"last-k (k = C + {room})": last_k,
        f"top-{room} cosine": ranked(cosine_ranking),
        f"BM25 top-{room}": ranked(bm25_ranking),
        f"RRF(cosine, BM25) top-{room}": ranked(
            lambda t, p: rrf([cosine_ranking(t, p), bm25_ranking(t, p)])
        ),
    }


def awai(settings: Settings) -> Method:
    def method(timeline: Timeline, position: int) -> Context:
        flow = build_flow(timeline, position, settings.flow)
        items = recall(timeline, position, flow, settings.association, settings.activation)
        return Context(
            tuple(timeline.position_of[m] for m in flow.message_ids()),
            tuple(item.source.position for item in items),
            tuple(item.reason for item in items),
        )

    return method


# -- IRC: parent in context, far links, precision --------------------------------------------------


@dataclass
class IrcChannel:
    log: ChannelLog
    timeline: Timeline
    conversation: dict[int, int]  # position → gold conversation (annotated messages only)


def gold_conversations(path: Path, log: ChannelLog) -> dict[int, int]:
    """Connected components of the annotated ``reply_to`` graph, by engine position."""
    log_id = log.channel.rsplit(":", 1)[1]
    position_of = {int(u.message_id): p for p, u in enumerate(log.utterances)}
    parent: dict[int, int] = {}

    def find(node: int) -> int:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line) if line.strip() else None
            if row is None or row["conversation_id"] != log_id or not row["annotated"]:
                continue
            find(row["index"])
            for source in row["reply_to"]:
                parent[find(source)] = find(row["index"])
    return {position_of[n]: find(n) for n in parent if n in position_of}


@dataclass
class IrcScore:
    links: int = 0
    in_context: int = 0
    far: int = 0
    far_in_context: int = 0
    items: int = 0
    recalled: int = 0
    judged: int = 0  # recalled items whose conversation is annotated
    same_conversation: int = 0
    reasons: dict[str, list[int]] = field(default_factory=dict)  # reason → [judged, same]


def score_irc(channels: Sequence[IrcChannel], method: Method, size: int, sample: float) -> IrcScore:
    score = IrcScore()
    for channel in channels:
        for link in _sampled(channel.log.gold, sample):
            context = method(channel.timeline, link.position)
            ids = {
                channel.timeline.messages[p].message_id for p in (*context.flow, *context.recalled)
            }
            hit = bool(ids & link.parents)
            score.links += 1
            score.in_context += hit
            score.items += len(ids)
            if link.nearest_back > size:
                score.far += 1
                score.far_in_context += hit
            own = channel.conversation.get(link.position)
            reasons = context.reasons or ("",) * len(context.recalled)
            for source, reason in zip(context.recalled, reasons, strict=True):
                score.recalled += 1
                theirs = channel.conversation.get(source)
                if own is None or theirs is None:
                    continue
                score.judged += 1
                score.same_conversation += own == theirs
                counts = score.reasons.setdefault(reason, [0, 0])
                counts[0] += 1
                counts[1] += own == theirs
    return score


T = TypeVar("T")
HELD_OUT = False  # --held-out: score what the sample leaves out instead (set by main)


def _sampled(items: list[T], sample: float) -> list[T]:
    """The fixed ``sample`` share of ``items`` (seeded), or with ``--held-out`` the rest: the
    settings are chosen on the sample, and the rest shows whether they were fitted to it."""
    if sample >= 1:
        return items
    chosen = random.Random(17).sample(items, max(1, round(len(items) * sample)))
    if not HELD_OUT:
        return chosen
    picked = {id(item) for item in chosen}
    return [item for item in items if id(item) not in picked]


# -- LoCoMo: long-range evidence -----------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    conversation: str
    text: str
    evidence: frozenset[int]  # positions in the conversation


@dataclass
class Conversation:
    name: str
    messages: list[Prepared]
    questions: list[Question]
    questions_prepared: list[Prepared] = field(default_factory=list)


def load_locomo(cache: VectorCache, sample: float) -> list[Conversation]:
    by_conversation: dict[str, list[dict]] = {}
    for line in (LOCOMO / "messages.jsonl").open(encoding="utf-8"):
        if line.strip():
            row = json.loads(line)
            by_conversation.setdefault(row["conversation_id"], []).append(row)
    questions: dict[str, list[Question]] = {}
    for line in (LOCOMO / "qa.jsonl").open(encoding="utf-8"):
        if line.strip():
            row = json.loads(line)
            if row["evidence_index"]:
                questions.setdefault(row["conversation_id"], []).append(
                    Question(
                        row["conversation_id"], row["question"], frozenset(row["evidence_index"])
                    )
                )
    conversations = []
    for name, rows in by_conversation.items():
        rows.sort(key=lambda row: row["index"])
        if [row["index"] for row in rows] != list(range(len(rows))):
            raise SystemExit(f"LoCoMo {name}: indices are not 0..n-1")
        channel = f"locomo:{name}"
        utterances = [
            Utterance(
                channel=channel,
                message_id=f"m{row['index']}",
                speaker_id=row["speaker"],
                speaker_name=row["speaker"],
                text=row["text"],
                ts=60.0 * row["index"],
            )
            for row in rows
        ]
        asked = questions.get(name, [])
        asked = _sampled(asked, sample)
        conversation = Conversation(name, prepare(utterances, cache), asked)
        conversation.questions_prepared = prepare(
            [
                Utterance(
                    channel=channel,
                    message_id=f"q{k}",
                    speaker_id=ASKER,
                    speaker_name=ASKER,
                    text=question.text,
                    ts=60.0 * (len(rows) + k),
                )
                for k, question in enumerate(asked)
            ],
            cache,
        )
        conversations.append(conversation)
    return conversations


@dataclass
class EvidenceScore:
    questions: int = 0
    found: int = 0
    recalled: int = 0


def score_locomo(
    conversations: Sequence[Conversation], methods: dict[str, Method], settings: Settings
) -> dict[str, tuple[EvidenceScore, EvidenceScore]]:
    """``(stream, alone)`` evidence recall for each method."""
    scores = {name: (EvidenceScore(), EvidenceScore()) for name in methods}
    for conversation in conversations:
        base = build_timeline(conversation.messages, settings)
        stream = build_timeline(conversation.questions_prepared, settings, base)
        end = len(conversation.messages)
        for k, question in enumerate(conversation.questions):
            alone = build_timeline([conversation.questions_prepared[k]], settings, base)
            for name, method in methods.items():
                for score, timeline, position in (
                    (scores[name][0], stream, end + k),
                    (scores[name][1], alone, end),
                ):
                    recalled = method(timeline, position).recalled
                    score.questions += 1
                    score.recalled += len(recalled)
                    score.found += bool(set(recalled) & question.evidence)
    return scores


# -- the run --------------------------------------------------------------------------------------


def parse_variant(text: str, base: Settings) -> tuple[str, Settings]:
    """``NAME:section.field=value;...`` (``rules.field=value`` for a recall rule); values are
    JSON where they parse (lists, numbers, null)."""
    name, _, assignments = text.partition(":")
    changes: list[tuple[str, object]] = []
    for item in filter(None, assignments.split(";")):
        key, _, raw = item.partition("=")
        try:
            value: object = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        changes.append((key, value))
    return name, varied(base, changes)


def check_invariant(channels: Sequence[IrcChannel], methods: dict[str, Method], count: int) -> int:
    """Re-read ``count`` messages per channel from a timeline cut right after each: the same."""
    checked = 0
    for channel in channels:
        timeline = channel.timeline
        for link in random.Random(7).sample(channel.log.gold, min(count, len(channel.log.gold))):
            prefix = build_timeline(
                [_prepared_of(timeline, p) for p in range(link.position + 1)],
                _settings_of(timeline),
            )
            for name, method in methods.items():
                if method(prefix, link.position) != method(timeline, link.position):
                    raise AssertionError(f"{name}: later lines changed {channel.log.channel}")
            checked += 1
    return checked


def _prepared_of(timeline: Timeline, position: int) -> Prepared:
    message = timeline.messages[position]
    rows = timeline.rows_of(position)
    return Prepared(
        Utterance(
            channel="check",
            message_id=message.message_id,
            speaker_id=message.ref.speaker_id,
            speaker_name=message.ref.speaker_name,
            text=message.text,
            ts=message.ref.ts,
            thread_root=message.ref.thread_root,
            addressees=message.addressees,
        ),
        message.thoughts,
        message.summary,
        timeline.vectors[rows.start : rows.stop],
    )


def _settings_of(timeline: Timeline) -> Settings:
    return Settings(_env_file=None, recall_index=timeline.index)  # type: ignore[call-arg]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=float, default=1.0, help="share of links/questions read")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME:section.field=v;...",
        help="an AWAI row with these settings (repeatable); the defaults are always a row",
    )
    parser.add_argument(
        "--held-out",
        action="store_true",
        help="score the links and questions the --sample leaves out (held out within dev)",
    )
    parser.add_argument("--check-invariant", type=int, default=5, metavar="N")
    parser.add_argument("--skip-locomo", action="store_true")
    args = parser.parse_args(argv)
    global HELD_OUT
    HELD_OUT = args.held_out

    started = time.perf_counter()
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    cache = VectorCache(Embedder(settings.embedding))
    methods = anchors(settings)
    methods["AWAI (defaults)"] = awai(settings)
    for text in args.variant:
        name, variant = parse_variant(text, settings)
        methods[f"AWAI ({name})"] = awai(variant)
    size = settings.flow.capacity + settings.association.max_items

    channels = []
    for path in DEFAULT_FILES:
        for log in load([path]):
            timeline = build_timeline(prepare(log.utterances, cache), settings)
            channels.append(IrcChannel(log, timeline, gold_conversations(path, log)))
    conversations = [] if args.skip_locomo else load_locomo(cache, args.sample)
    prepared = time.perf_counter()

    irc = {name: score_irc(channels, method, size, args.sample) for name, method in methods.items()}
    locomo = score_locomo(conversations, methods, settings) if conversations else {}
    scored = time.perf_counter()
    checked = check_invariant(channels, methods, args.check_invariant)

    print(
        f"C = {settings.flow.capacity}, A = {settings.association.max_items}: every method has the"
        f" engine's flow and at most {settings.association.max_items} recalled items.\n"
    )
    print(
        "| method | parent in context | far links (> C+A back) | precision of recalled |"
        " recalled / message | LoCoMo evidence, stream | LoCoMo evidence, alone |"
        " recalled / question |\n|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    for name in methods:
        s = irc[name]
        stream, alone = locomo.get(name, (EvidenceScore(), EvidenceScore()))
        print(
            f"| {name} | {_pct(s.in_context, s.links)} | {_pct(s.far_in_context, s.far)} |"
            f" {_pct(s.same_conversation, s.judged)} | {s.recalled / max(1, s.links):.2f} |"
            f" {_pct(stream.found, stream.questions)} | {_pct(alone.found, alone.questions)} |"
            f" {alone.recalled / max(1, alone.questions):.2f} |"
        )
    links = irc[next(iter(methods))]
    questions = next(iter(locomo.values()))[1].questions if locomo else 0
    print(
        f"\nIRC: {links.links:,} gold links ({links.far} far) in {len(channels)} logs; LoCoMo:"
        f" {questions:,} questions in {len(conversations)} conversations; sample {args.sample}"
        f"{' (held out: what the sample leaves out)' if args.held_out else ''}."
    )
    for name in methods:
        reasons = irc[name].reasons
        if any(reasons):
            print(
                f"{name}, precision by reason: "
                + ", ".join(f"{r} {same}/{judged}" for r, (judged, same) in sorted(reasons.items()))
            )
    print(
        f"Prepare {prepared - started:.1f} s, score {scored - prepared:.1f} s; prefix invariant"
        f" held for every method on {checked} re-read messages."
    )
    return 0


def _pct(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "–"


if __name__ == "__main__":
    sys.exit(main())
