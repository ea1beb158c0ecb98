"""The annotated IRC logs as engine timelines with their candidates' features, for the scorer.

Why not through the store: fitting needs the features of some fifty thousand annotated messages,
and ingesting the training split through the engine (SQL, Chroma, read model) would take far
longer than the features. The timelines here are built as the engine builds them — each line's
thoughts from the offline extraction, their MiniLM vectors from the runtime's embedder, the
adapter's addressees — and the features come from the same function a reading calls
(:func:`awai_engine.reply_target.features.candidate_features`), so what is fitted is what runs.

Embedding is the slow part: vectors are cached under ``bench/.cache/reply_target`` per log, keyed
by a hash of its thought texts and the embedding model, and only lines within reach of an
annotated message are embedded (the others keep zero vectors: no feature of an annotated message
reads them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from awai_engine.backends.offline import OfflineBackend
from awai_engine.embedding import Embedder
from awai_engine.reply_target.features import WINDOW, candidate_features
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef
from bench.eval_reply_links import ChannelLog, GoldLink, read_logs

CACHE = Path(__file__).resolve().parent / ".cache" / "reply_target"


@dataclass(frozen=True)
class Example:
    """One annotated message: its candidates' features and which candidates are its parents."""

    log: str
    position: int
    candidates: tuple[int, ...]
    features: np.ndarray
    gold: np.ndarray  # bool per candidate
    has_parent: bool  # a gold parent exists (maybe out of the window)
    nearest_back: int  # lines back of the nearest parent (0 when none)


def timeline_of(log: ChannelLog, embedder: Embedder, reach: int = WINDOW + 10) -> Timeline:
    """The log as a timeline, vectors cached; lines more than ``reach`` before the first
    annotated message are not embedded."""
    extract = OfflineBackend().extract_one
    thoughts = [extract(u.text).thoughts for u in log.utterances]
    first = min(log.annotated, default=len(log.utterances))
    start = max(0, first - reach)
    texts = [t.text for ts in thoughts[start:] for t in ts]
    key = hashlib.sha256("\x1f".join([embedder.model_name, *texts]).encode("utf-8")).hexdigest()[
        :16
    ]
    path = CACHE / f"{log.channel.replace(':', '_').replace('/', '_')}-{key}.npy"
    if path.exists():
        needed = np.load(path)
    else:
        needed = embedder.encode(texts) if texts else np.empty((0, embedder.dimension), "f4")
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(path, needed)
    timeline = Timeline(dimension=embedder.dimension)
    row = 0
    for position, (utterance, said) in enumerate(zip(log.utterances, thoughts, strict=True)):
        if position < start:
            vectors = np.zeros((len(said), embedder.dimension), dtype=np.float32)
        else:
            vectors = needed[row : row + len(said)]
            row += len(said)
        ref = MessageRef(
            message_id=utterance.message_id,
            speaker_id=utterance.speaker_id,
            speaker_name=utterance.speaker_name or utterance.speaker_id,
            ts=utterance.ts,
            position=position,
        )
        timeline.append(ref, utterance.text, "", said, vectors, tuple(utterance.addressees))
    return timeline


def examples(log: ChannelLog, timeline: Timeline) -> Iterator[Example]:
    """An example per annotated message of the log (with or without a parent)."""
    gold = {link.position: link for link in log.gold}
    for position in log.annotated:
        found = candidate_features(timeline, position)
        link: GoldLink | None = gold.get(position)
        parents = link.parents if link else frozenset()
        yield Example(
            log=log.channel,
            position=position,
            candidates=found.positions,
            features=found.features,
            gold=np.array(
                [timeline.messages[q].message_id in parents for q in found.positions], dtype=bool
            ),
            has_parent=link is not None,
            nearest_back=link.nearest_back if link else 0,
        )


def main() -> None:
    """Embed (and cache) every log of the training and dev files: run once, early."""
    from awai_engine.settings import Settings
    from bench.eval_reply_links import DATA

    embedder = Embedder(Settings(_env_file=None).embedding)  # type: ignore[call-arg]
    for name in ("ubuntu-dev.jsonl", "channel-two-dev.jsonl", "ubuntu-train.jsonl.gz"):
        for log in sorted(read_logs(DATA / name), key=lambda log: log.channel):
            timeline_of(log, embedder)
            print(f"{log.channel}: {len(log.utterances)} lines", flush=True)


if __name__ == "__main__":
    main()
