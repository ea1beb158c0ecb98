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

import ast
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from awai_engine.backends.offline import OfflineBackend
from awai_engine.embedding import Embedder
from awai_engine.reply_target.features import WINDOW, candidate_features
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef
from bench.eval_reply_links import ChannelLog, GoldLink, read_logs

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache" / "reply_target"


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


@dataclass(frozen=True)
class Table:
    """Candidates of many messages as one matrix: ``group`` says whose candidate each row is."""

    x: np.ndarray
    y: np.ndarray
    group: np.ndarray  # message number of each row
    back: np.ndarray  # lines back of each row's candidate
    has_parent: np.ndarray  # per message

    @property
    def messages(self) -> int:
        return len(self.has_parent)


def table(files: Sequence[Path], embedder: Embedder, every: int = 1) -> Table:
    """The candidates of every annotated message of ``files`` (of every ``every``-th log by
    name), each log's cached under :func:`tables_key`."""
    code = tables_key(embedder)
    parts: list[Table] = []
    for path in files:
        for log in sorted(read_logs(path), key=lambda log: log.channel)[::every]:
            name = log.channel.replace(":", "_").replace("/", "_")
            cached = CACHE / f"table-{name}-{code}.npz"
            if cached.exists():
                with np.load(cached) as saved:
                    parts.append(Table(**{f: saved[f] for f in Table.__dataclass_fields__}))
                continue
            made = _table(list(examples(log, timeline_of(log, embedder))))
            CACHE.mkdir(parents=True, exist_ok=True)
            np.savez(cached, **{f: getattr(made, f) for f in Table.__dataclass_fields__})
            parts.append(made)
    offsets = np.cumsum([0, *(part.messages for part in parts[:-1])])
    return Table(
        x=np.concatenate([part.x for part in parts]),
        y=np.concatenate([part.y for part in parts]),
        group=np.concatenate(
            [part.group + offset for part, offset in zip(parts, offsets, strict=True)]
        ),
        back=np.concatenate([part.back for part in parts]),
        has_parent=np.concatenate([part.has_parent for part in parts]),
    )


SOURCES_OF = ("awai_engine.reply_target.features", __name__)
"""Modules whose import closure (within this repository) computes the tables: the features, and
this module (the logs' parsing, timelines and thoughts)."""
_OWN = ("awai_engine", "bench", "bots", "storage")


def tables_key(embedder: Embedder) -> str:
    """What a cached table depends on, hashed: the source of every module of this repository
    the features and this module import (directly or not), the encoder that made the vectors,
    and numpy's version (the features' last bits). A change to any of them, cues or word terms
    included, builds the tables again instead of fitting on stale ones."""
    digest = hashlib.sha256()
    for path in sorted(source_files(SOURCES_OF)):
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    identity = (embedder.model_name, embedder.settings.runtime, np.__version__)
    digest.update("\x1f".join(map(str, identity)).encode())
    return digest.hexdigest()[:12]


def source_files(modules: Sequence[str]) -> set[Path]:
    """The source files of ``modules`` and of every module of this repository they import, their
    packages' ``__init__`` included (read from the code, nothing imported)."""
    found: set[Path] = set()
    todo = list(modules)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name.split(".")[0] not in _OWN:
            continue
        seen.add(name)
        todo.extend(_packages_of(name))
        path = _source(name)
        if path is None:
            continue
        found.add(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.Import):
                todo.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{parent}.{base}".rstrip(".")
                todo.append(base)
                todo.extend(f"{base}.{alias.name}" for alias in node.names)
    return found


def _packages_of(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


def _source(name: str) -> Path | None:
    """The file of module ``name`` of this repository, or None (a name imported from a module
    that is not itself a module: a class, a function)."""
    relative = Path(*name.split("."))
    for path in (ROOT / relative.with_suffix(".py"), ROOT / relative / "__init__.py"):
        if path.is_file():
            return path
    return None


def _table(found: list[Example]) -> Table:
    return Table(
        x=np.concatenate([e.features for e in found]),
        y=np.concatenate([e.gold for e in found]),
        group=np.concatenate(
            [np.full(len(e.candidates), k, dtype=np.int64) for k, e in enumerate(found)]
        ),
        back=np.concatenate(
            [np.array([e.position - q for q in e.candidates], dtype=np.int64) for e in found]
        ),
        has_parent=np.array([e.has_parent for e in found], dtype=bool),
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
