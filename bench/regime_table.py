"""The regime columns (:mod:`awai_engine.reply_target.regime`) of the annotated logs' candidates,
row for row beside the base feature table of :mod:`bench.reply_target_data`.

Why apart: the base table of the training logs takes long to build and is cached under a key of
the base features' sources; the regime columns are cheap (who spoke and when, the message's
opening) and are cached under their own key, so adding or changing them reuses the base table,
and a change to the base features does not rebuild these. Each log's rows are the base table's
rows of that log (its annotated messages in order, each one's candidates newest first), checked
against the base table's lines-back column.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from awai_engine.embedding import Embedder
from awai_engine.reply_target.features import Candidates
from awai_engine.reply_target.regime import REGIME_NAMES, regime_columns
from bench.eval_reply_links import ChannelLog, read_logs
from bench.reply_target_data import CACHE, ROOT, Table, source_files, timeline_of

SOURCES_OF = ("awai_engine.reply_target.regime", __name__)


def regime_key(embedder: Embedder) -> str:
    """What the cached columns depend on: the sources of the regime module and this one (their
    imports within the repository included) and the embedding model (the timelines' thoughts)."""
    digest = hashlib.sha256()
    for path in sorted(source_files(SOURCES_OF)):
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(f"{embedder.model_name}\x1f{np.__version__}".encode())
    return digest.hexdigest()[:12]


def regime_table(
    files: Sequence[Path], embedder: Embedder, base: Table, every: int = 1
) -> np.ndarray:
    """The regime columns of every row of ``base`` (the table of ``files``, every ``every``-th
    log by name, as :func:`bench.reply_target_data.table` built it)."""
    key = regime_key(embedder)
    parts: list[np.ndarray] = []
    message = 0
    for path in files:
        for log in sorted(read_logs(path), key=lambda log: log.channel)[::every]:
            name = log.channel.replace(":", "_").replace("/", "_")
            cached = CACHE / f"regime-{name}-{key}.npy"
            rows = slice(*np.searchsorted(base.group, [message, message + len(log.annotated)]))
            if cached.exists():
                part = np.load(cached)
            else:
                part = _log_columns(log, embedder, base, rows, message)
                CACHE.mkdir(parents=True, exist_ok=True)
                np.save(cached, part)
            if len(part) != rows.stop - rows.start:
                raise ValueError(f"{log.channel}: {len(part)} regime rows, base has another count")
            parts.append(part)
            message += len(log.annotated)
    if message != base.messages:
        raise ValueError(f"{message} annotated messages against the base table's {base.messages}")
    return np.concatenate(parts) if parts else np.empty((0, len(REGIME_NAMES)), np.float32)


def _log_columns(
    log: ChannelLog, embedder: Embedder, base: Table, rows: slice, first: int
) -> np.ndarray:
    """One log's columns, from its timeline and its rows of the base table."""
    timeline = timeline_of(log, embedder)
    group, back, x = base.group[rows], base.back[rows], base.x[rows]
    out = []
    for k, position in enumerate(log.annotated):
        mine = group == first + k
        positions = tuple((position - back[mine]).tolist())
        out.append(regime_columns(timeline, position, Candidates(positions, x[mine])))
    return np.concatenate(out) if out else np.empty((0, len(REGIME_NAMES)), np.float32)
