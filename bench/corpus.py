"""Real chat lines for benchmarks, and synthetic channels of any size built from them.

Lines come from ``../shared/data/irc-disentangle`` (Ubuntu IRC, CC BY 4.0, Kummerfeld et al.
ACL 2019) when it is beside the checkout, else from the shipped sample conversations.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Callable
from pathlib import Path

import numpy as np

from awai_engine.backends.offline import OfflineBackend
from awai_engine.embedding import Embedder
from awai_engine.ports import PreparedUtterance
from awai_engine.samples import SAMPLES
from awai_engine.values import Extraction, Utterance
from bots.terminal.transcript import SpeakerIndex, addressees

# ``shared/`` beside the checkout, or beside a folder of worktrees that holds it.
SHARED_DATA = next(
    (
        parent / "shared" / "data" / "irc-disentangle"
        for parent in Path(__file__).resolve().parents[1:4]
        if (parent / "shared" / "data" / "irc-disentangle").is_dir()
    ),
    Path(__file__).resolve().parents[2] / "shared" / "data" / "irc-disentangle",
)


def chat_lines(limit: int | None = None) -> list[str]:
    """Non-system chat lines, in file order."""
    return [text for _, text in chat_records(limit)]


def chat_records(limit: int | None = None) -> list[tuple[str, str]]:
    """(speaker, text) of the non-system chat lines, in file order."""
    records: list[tuple[str, str]] = []
    source = SHARED_DATA / "ubuntu-dev.jsonl"
    if source.exists():
        with source.open(encoding="utf-8") as handle:
            for raw in handle:
                record = json.loads(raw)
                if not record["is_system"] and record["text"].strip():
                    records.append((record["speaker"], record["text"]))
    else:
        for sample in SAMPLES.values():
            for raw in sample.path.read_text(encoding="utf-8").splitlines():
                record = json.loads(raw)
                records.append((record["speaker"], record["text"]))
    return records[:limit] if limit else records


def train_records(skip: int, limit: int) -> list[tuple[str, str]]:
    """(speaker, text) of ``limit`` non-system lines of the #ubuntu training split, in file
    order, from its ``skip``-th: distinct real lines with their own speakers (8,455 in the
    100,000 after the first 10,000), where :func:`chat_records` is the dev split's 11,641
    lines."""
    records: list[tuple[str, str]] = []
    with gzip.open(SHARED_DATA / "ubuntu-train.jsonl.gz", "rt", encoding="utf-8") as source:
        for raw in source:
            record = json.loads(raw)
            if record["is_system"] or not record["speaker"] or not record["text"].strip():
                continue
            if skip:
                skip -= 1
                continue
            records.append((record["speaker"], record["text"]))
            if len(records) == limit:
                break
    return records


def _prepared(
    embedder: Embedder, lines: list[str]
) -> Callable[[int], tuple[Extraction, np.ndarray]]:
    """Each distinct line's extraction (the offline backend's, as ingest does) and vectors,
    computed once; by line index."""
    backend = OfflineBackend()
    extractions = [backend.extract_one(text) for text in lines]
    flat = [thought.text for extraction in extractions for thought in extraction.thoughts]
    vectors = embedder.encode(flat)
    offsets = np.cumsum([0] + [len(e.thoughts) for e in extractions])
    return lambda line: (extractions[line], vectors[offsets[line] : offsets[line + 1]])


def _said(channel: str, position: int, speaker: str, text: str, **extra: object) -> Utterance:
    """The bench channels' message at ``position``: its id and time follow from the position, one
    message a second, and the speaker's id is their name."""
    return Utterance(
        channel=channel,
        message_id=f"m{position:07d}",
        speaker_id=speaker,
        speaker_name=speaker,
        text=text,
        ts=1_600_000_000.0 + position,
        **extra,  # type: ignore[arg-type]
    )


def synthetic_channel(
    channel: str,
    size: int,
    embedder: Embedder,
    lines: list[str],
    thread_every: int = 25,
    seed: int = 7,
    speakers: int = 40,
) -> Callable[[int, int], list[PreparedUtterance]]:
    """A factory of prepared utterances for positions [start, stop) of a channel of ``size``.

    Real lines and their real vectors, cycled (with one of ``speakers`` random speakers and some
    threads), so a 100k-message channel costs the embedding of the distinct lines only; few
    speakers repeat themselves, so their preconceptions form.
    """
    prepared = _prepared(embedder, lines)
    rng = random.Random(seed)
    names = [f"user{n}" for n in range(speakers)]
    plan = [(rng.randrange(len(lines)), rng.choice(names)) for _ in range(size)]

    def make(start: int, stop: int) -> list[PreparedUtterance]:
        batch = []
        for position in range(start, stop):
            line, speaker = plan[position]
            root = position - position % thread_every
            threaded = position % thread_every > 0 and position % 3 == 0
            utterance = _said(
                channel,
                position,
                speaker,
                lines[line],
                thread_root=f"m{root:07d}" if threaded else None,
            )
            batch.append(PreparedUtterance(utterance, *prepared(line)))
        return batch

    return make


def replayed_channel(
    channel: str, size: int, embedder: Embedder, records: list[tuple[str, str]]
) -> Callable[[int, int], list[PreparedUtterance]]:
    """A factory of prepared utterances for positions [start, stop) of a channel of ``size``:
    a real log replayed in order with its own speakers, cycled.

    Unlike :func:`synthetic_channel`, people address each other as often as in the log
    (``nick:`` at the start, ``@nick``, found among the speakers seen so far as the terminal's
    import does), so exchanges, inferred conversations and named speakers are as in real chat.
    """
    lines = [text for _, text in records]
    prepared = _prepared(embedder, lines)
    seen = SpeakerIndex()
    said_to: list[tuple[str, ...]] = []
    for position in range(size):
        speaker, text = records[position % len(records)]
        said_to.append(addressees(text, seen))
        seen.add(speaker)

    def make(start: int, stop: int) -> list[PreparedUtterance]:
        batch = []
        for position in range(start, stop):
            line = position % len(records)
            speaker = records[line][0]
            utterance = _said(channel, position, speaker, lines[line], addressees=said_to[position])
            batch.append(PreparedUtterance(utterance, *prepared(line)))
        return batch

    return make
