"""Real chat lines for benchmarks, and synthetic channels of any size built from them.

Lines come from ``../shared/data/irc-disentangle`` (Ubuntu IRC, CC BY 4.0, Kummerfeld et al.
ACL 2019) when it is beside the checkout, else from the shipped sample conversations.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import numpy as np

from awai_engine.backends.offline import OfflineBackend
from awai_engine.embedding import Embedder
from awai_engine.ports import PreparedUtterance
from awai_engine.samples import SAMPLES
from awai_engine.values import Utterance

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
    lines: list[str] = []
    source = SHARED_DATA / "ubuntu-dev.jsonl"
    if source.exists():
        with source.open(encoding="utf-8") as handle:
            for raw in handle:
                record = json.loads(raw)
                if not record["is_system"] and record["text"].strip():
                    lines.append(record["text"])
    else:
        for sample in SAMPLES.values():
            lines.extend(
                json.loads(raw)["text"]
                for raw in sample.path.read_text(encoding="utf-8").splitlines()
            )
    return lines[:limit] if limit else lines


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
    backend = OfflineBackend()
    extractions = [backend.extract_one(text) for text in lines]
    flat = [thought.text for extraction in extractions for thought in extraction.thoughts]
    vectors = embedder.encode(flat)
    offsets = np.cumsum([0] + [len(e.thoughts) for e in extractions])
    rng = random.Random(seed)
    names = [f"user{n}" for n in range(speakers)]
    plan = [(rng.randrange(len(lines)), rng.choice(names)) for _ in range(size)]

    def make(start: int, stop: int) -> list[PreparedUtterance]:
        batch = []
        for position in range(start, stop):
            line, speaker = plan[position]
            root = position - position % thread_every
            threaded = position % thread_every > 0 and position % 3 == 0
            utterance = Utterance(
                channel=channel,
                message_id=f"m{position:07d}",
                speaker_id=speaker,
                speaker_name=speaker,
                text=lines[line],
                ts=1_600_000_000.0 + position,
                thread_root=f"m{root:07d}" if threaded else None,
            )
            batch.append(
                PreparedUtterance(
                    utterance, extractions[line], vectors[offsets[line] : offsets[line + 1]]
                )
            )
        return batch

    return make
