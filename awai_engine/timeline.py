"""The point-in-time read model of one channel: messages in channel order and their vectors.

Why it exists: the reading of message ``i`` may use only what came before ``i``. Keeping the
channel's thought vectors as one float32 matrix in channel order makes "everything before ``i``"
a prefix slice, searched exactly. An approximate index (Chroma's HNSW) would both need a
brute-force filter for old messages and return neighbours that depend on vectors added later,
which would let later messages change the reading of an earlier one.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

from awai_engine.settings import RecallIndexSettings
from awai_engine.values import MessageRef, Thought

KMEANS_ROUNDS = 8


@dataclass(frozen=True)
class TimelineMessage:
    """One stored message as the engine sees it; ``first_row`` indexes its thoughts' vectors."""

    ref: MessageRef
    text: str
    summary: str
    thoughts: tuple[Thought, ...]
    first_row: int
    addressees: tuple[str, ...] = ()

    @property
    def message_id(self) -> str:
        return self.ref.message_id

    @property
    def is_reply(self) -> bool:
        return self.ref.thread_root is not None and self.ref.thread_root != self.ref.message_id


@dataclass
class Timeline:
    """Append-only view of a channel; a change other than an append builds a new one.

    Readers slice rows before a position, and appends only add rows after the last one, so a
    reader needs no lock: what it reads is never modified underneath it.
    """

    dimension: int
    revision: int = 0
    index: RecallIndexSettings = field(default_factory=RecallIndexSettings)
    messages: list[TimelineMessage] = field(default_factory=list)
    position_of: dict[str, int] = field(default_factory=dict)
    top_level: list[int] = field(default_factory=list)
    threads: dict[str, list[int]] = field(default_factory=dict)
    _vectors: np.ndarray = field(default_factory=lambda: np.empty((0, 0), dtype=np.float32))
    _row_positions: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    _row_thought: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    _ts: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.float64))
    rows: int = 0
    _centroids: np.ndarray | None = None
    _cell_rows: list[np.ndarray] = field(default_factory=list)
    _cell_sizes: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))

    def __post_init__(self) -> None:
        if self._vectors.shape[1:] != (self.dimension,):
            self._vectors = np.empty((0, self.dimension), dtype=np.float32)

    @property
    def vectors(self) -> np.ndarray:
        return self._vectors[: self.rows]

    @property
    def row_positions(self) -> np.ndarray:
        """Position (channel order) of the message each vector row belongs to."""
        return self._row_positions[: self.rows]

    @property
    def row_thought(self) -> np.ndarray:
        """Index of the thought within its message, for each vector row."""
        return self._row_thought[: self.rows]

    @property
    def timestamps(self) -> np.ndarray:
        """``ts`` of each message, by position."""
        return self._ts[: len(self.messages)]

    def append(
        self,
        ref: MessageRef,
        text: str,
        summary: str,
        thoughts: tuple[Thought, ...],
        vectors: np.ndarray,
        addressees: tuple[str, ...] = (),
    ) -> None:
        """Add the newest message; ``ref.position`` must be the next position."""
        position = len(self.messages)
        if ref.position != position:
            raise ValueError(f"append at position {ref.position}, expected {position}")
        if len(thoughts) != len(vectors):
            raise ValueError("one vector per thought")
        self._reserve(self.rows + len(vectors), position + 1)
        end = self.rows + len(vectors)
        self._vectors[self.rows : end] = vectors
        self._row_positions[self.rows : end] = position
        self._row_thought[self.rows : end] = [thought.index for thought in thoughts]
        self._ts[position] = ref.ts
        message = TimelineMessage(ref, text, summary, thoughts, self.rows, addressees)
        self.messages.append(message)
        self.position_of[ref.message_id] = position
        if message.is_reply:
            self.threads.setdefault(ref.thread_root or "", []).append(position)
        else:
            self.top_level.append(position)
        self.rows = end
        if self._centroids is None and self.rows >= self.index.exact_rows:
            self._fit_cells()
            self._file_rows(self.index.exact_rows, self.rows)
        elif self._centroids is not None:
            self._file_rows(end - len(vectors), end)

    def search(self, queries: np.ndarray, end_row: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows before ``end_row`` worth comparing with ``queries``, and their similarities.

        Rows under ``exact_rows`` are all returned; later rows come from the cells nearest to each
        query. Everything used (rows, centroids fitted on the first rows) lies before ``end_row``
        for any message past the exact rows, so the answer depends only on the prefix.
        Returns ``(rows ascending, similarities of shape (len(rows), len(queries)))``.
        """
        exact_end = min(end_row, self.index.exact_rows)
        if self._centroids is None or end_row <= exact_end:
            return np.arange(exact_end), self._vectors[:exact_end] @ queries.T
        nearest = np.argsort(-(queries @ self._centroids.T), axis=1, kind="stable")
        cells = np.unique(nearest[:, : self.index.probes])
        filed = [self._cell_rows[c][: self._cell_sizes[c]] for c in cells]
        later = np.sort(np.concatenate([rows[: np.searchsorted(rows, end_row)] for rows in filed]))
        rows = np.concatenate([np.arange(exact_end), later])
        exact = self._vectors[:exact_end] @ queries.T
        return rows, np.concatenate([exact, self._vectors[later] @ queries.T])

    def _fit_cells(self) -> None:
        """k-means on the first ``exact_rows`` vectors: deterministic start, fixed rounds."""
        sample = self._vectors[: self.index.exact_rows]
        count = self.index.cells
        centroids = sample[np.linspace(0, len(sample) - 1, count).astype(np.int64)].copy()
        for _ in range(KMEANS_ROUNDS):
            nearest = (sample @ centroids.T).argmax(axis=1)
            sums = np.zeros_like(centroids)
            np.add.at(sums, nearest, sample)
            norms = np.linalg.norm(sums, axis=1, keepdims=True)
            filled = norms[:, 0] > 0
            centroids[filled] = sums[filled] / norms[filled]
        self._centroids = centroids
        self._cell_rows = [np.empty(16, dtype=np.int64) for _ in range(count)]
        self._cell_sizes = np.zeros(count, dtype=np.int64)

    def _file_rows(self, start: int, end: int) -> None:
        """File rows ``[start, end)`` under their nearest centroid, keeping each cell ascending."""
        if self._centroids is None or end <= start:
            return
        nearest = (self._vectors[start:end] @ self._centroids.T).argmax(axis=1)
        for offset, cell in enumerate(nearest):
            size = self._cell_sizes[cell]
            if size == len(self._cell_rows[cell]):
                grown = np.empty(2 * size, dtype=np.int64)
                grown[:size] = self._cell_rows[cell]
                self._cell_rows[cell] = grown
            self._cell_rows[cell][size] = start + offset
            self._cell_sizes[cell] = size + 1

    def _reserve(self, rows: int, messages: int) -> None:
        if rows > len(self._vectors):
            capacity = max(rows, 2 * len(self._vectors), 256)
            grown = np.empty((capacity, self.dimension), dtype=np.float32)
            grown[: self.rows] = self._vectors[: self.rows]
            positions = np.empty(capacity, dtype=np.int64)
            positions[: self.rows] = self._row_positions[: self.rows]
            thought = np.empty(capacity, dtype=np.int64)
            thought[: self.rows] = self._row_thought[: self.rows]
            self._vectors, self._row_positions, self._row_thought = grown, positions, thought
        if messages > len(self._ts):
            ts = np.empty(max(messages, 2 * len(self._ts), 256), dtype=np.float64)
            ts[: len(self.messages)] = self._ts[: len(self.messages)]
            self._ts = ts

    def line_before(self, position: int, last: int) -> tuple[str, list[int]]:
        """The line of the message at ``position`` (its thread, or the top level): the positions
        of at most ``last`` messages of it just before, oldest first (a slice, not the whole line,
        so the cost does not grow with the channel)."""
        message = self.messages[position]
        if message.is_reply:
            root = message.ref.thread_root or ""
            replies = self.threads.get(root, [])
            end = bisect.bisect_left(replies, position)
            earlier = replies[max(0, end - last) : end]
            root_position = self.position_of.get(root)
            if root_position is not None and root_position < position and end < last:
                earlier = [root_position, *earlier]
            return "thread", earlier
        end = bisect.bisect_left(self.top_level, position)
        return "top-level", self.top_level[max(0, end - last) : end]

    def rows_of(self, position: int) -> range:
        message = self.messages[position]
        return range(message.first_row, message.first_row + len(message.thoughts))
