"""Cells over a channel's thought vectors, fitted on its first rows only, finer as it grows.

Why it exists: a reading of an old or a late message in a large channel must not compare its
thoughts with every earlier one, yet no approximate index may let later messages change what an
earlier reading finds (the product's invariant). So every piece of the index is fixed by a
prefix of the channel. Cells form a tree, finer at each level:

- level 0: ``cells`` centroids fitted by k-means on the channel's first rows;
- level k: each level-(k−1) cell split into at most ``split`` children by k-means on its rows
  among the first ``R_k`` rows, where ``R_k = max(exact_rows, LEAF_ROWS · cells · split^k)``:
  a level is added whenever the channel holds about ``LEAF_ROWS`` rows per finest cell, so the
  finest cells hold a few dozen rows at most however long the channel grows;
- a row is filed, at every level, under the nearest child of its cell one level up, one
  matrix-vector product at a time, so its cell never depends on which rows came with it.

The coarsest level is small so that scoring it stays in the CPU cache; a query then descends,
scoring only the children of the cells it kept one level up.

A reading of the row range ``[0, end)`` uses only the levels fitted on rows before ``end``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from awai_engine.growth import grown_length
from awai_engine.ordering import stable_order
from awai_engine.settings import RecallIndexSettings

KMEANS_ROUNDS = 8
LEAF_ROWS = 4  # rows per finest cell when a level is fitted
_ARRAY_OBJECT = 112  # bytes of a small numpy array object besides its data (sys.getsizeof)


@dataclass
class _Level:
    """Centroids fitted on the first ``fitted_rows`` rows, and the rows filed under each."""

    fitted_rows: int
    centroids: np.ndarray
    # Children of parent cell p (one level up) are cells child_start[p] to child_start[p + 1];
    # ``None`` at level 0, whose cells have no parent.
    child_start: np.ndarray | None
    cell_rows: list[np.ndarray] = field(init=False)
    cell_sizes: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.cell_rows = [np.empty(4, dtype=np.int64) for _ in range(len(self.centroids))]
        self.cell_sizes = np.zeros(len(self.centroids), dtype=np.int64)

    def file(self, cell: int, row: int) -> None:
        size = self.cell_sizes[cell]
        if size == len(self.cell_rows[cell]):
            grown = np.empty(2 * size, dtype=np.int64)
            grown[:size] = self.cell_rows[cell]
            self.cell_rows[cell] = grown
        self.cell_rows[cell][size] = row
        self.cell_sizes[cell] = size + 1

    def children(self, parents: np.ndarray) -> np.ndarray:
        """The cells of this level under the given cells of the level above."""
        assert self.child_start is not None
        starts, ends = self.child_start[parents], self.child_start[parents + 1]
        counts = ends - starts
        offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        return np.repeat(starts, counts) + offsets

    def rows_before(self, cells: np.ndarray, cut: int) -> list[np.ndarray]:
        """The rows filed under each cell that come before row ``cut``."""
        found = []
        for cell in cells.tolist():
            rows, size = self.cell_rows[cell], int(self.cell_sizes[cell])
            found.append(
                rows[:size]
                if size and rows[size - 1] < cut
                else rows[: rows[:size].searchsorted(cut)]
            )
        return found


@dataclass(frozen=True)
class LevelState:
    """One level as persisted: what was fitted. Which rows each cell holds is not kept: it is
    the level's column of :attr:`CellState.row_cells`, grouped at restore."""

    fitted_rows: int
    centroids: np.ndarray
    child_start: np.ndarray | None


@dataclass(frozen=True)
class CellState:
    """A :class:`CellIndex` as persisted (see :meth:`CellIndex.state`): every row's cell at
    every level (one column per level), which only grows by rows as the channel grows, so a
    file of it is appended to, never rewritten."""

    filed: int
    row_cells: np.ndarray
    levels: tuple[LevelState, ...]


class CellIndex:
    """Where to look, before a given row, for the thoughts nearest to a stored thought."""

    def __init__(self, settings: RecallIndexSettings) -> None:
        self.settings = settings
        self.levels: list[_Level] = []
        self.row_cells = np.empty((0, 0), dtype=np.int32)  # (row, level) → cell
        self.filed = 0

    def state(self) -> CellState:
        """What persisting the index needs: each level's fit, and each filed row's cells (views,
        nothing copied)."""
        return CellState(
            filed=self.filed,
            row_cells=self.row_cells[: self.filed],
            levels=tuple(
                LevelState(level.fitted_rows, level.centroids, level.child_start)
                for level in self.levels
            ),
        )

    @classmethod
    def restored(cls, settings: RecallIndexSettings, state: CellState) -> CellIndex:
        """The index :meth:`state` described. Each cell's rows are its rows in the level's
        column, ascending (the order they were filed in); filing more rows grows copies, never
        the arrays given (each cell's rows are a full view, so the next one is a new array)."""
        index = cls(settings)
        index.filed = state.filed
        index.row_cells = state.row_cells
        for depth, saved in enumerate(state.levels):
            level = _Level(saved.fitted_rows, saved.centroids, saved.child_start)
            column = state.row_cells[: state.filed, depth]
            by_cell = stable_order(column)
            sizes = np.bincount(column, minlength=len(saved.centroids)).astype(np.int64)
            level.cell_rows = [
                rows if len(rows) else np.empty(4, dtype=np.int64)
                for rows in (np.split(by_cell, np.cumsum(sizes)[:-1]) if len(sizes) else [])
            ]
            level.cell_sizes = sizes
            index.levels.append(level)
        return index

    def array_bytes(self) -> int:
        """Bytes the index holds: its arrays as allocated, and each array object's own header."""
        total = self.row_cells.nbytes
        for level in self.levels:
            total += level.centroids.nbytes + level.cell_sizes.nbytes
            total += sum(rows.nbytes for rows in level.cell_rows)
            total += _ARRAY_OBJECT * (len(level.cell_rows) + 3)
        return total

    def add(self, vectors: np.ndarray, rows: int) -> None:
        """Take rows ``[filed, rows)`` of the channel's ``vectors`` in, fitting a new level
        whenever the channel reaches its size."""
        while rows >= self._next_fit():
            fitted = self._next_fit()
            self._file(vectors, self.filed, fitted)
            self.filed = fitted
            self._fit_level(vectors, fitted)
        self._file(vectors, self.filed, rows)
        self.filed = rows

    def usable(self, end: int) -> bool:
        """Whether a reading of rows ``[0, end)`` goes through cells (else it scans them all)."""
        return bool(self.levels) and self.levels[0].fitted_rows < end

    def nearest_rows(
        self, queries: np.ndarray, query_rows: np.ndarray, end: int, cut: int, probes: int
    ) -> np.ndarray:
        """Rows before ``cut`` in about ``probes`` finest cells nearest to ``queries`` (the
        vectors of the stored ``query_rows``) and in each query row's own cell, ascending
        (``probes`` 0: only the own cells).

        Descends the levels fitted before ``end``: at each, every query keeps its ``probes``
        nearest cells among the children of the cells kept one level up (all queries' children,
        scored together to save calls). At the finest level the queries share the ``probes``
        cells, so a message of several thoughts costs about what a message of one does.
        """
        levels = [level for level in self.levels if level.fitted_rows < end]
        kept = np.arange(0)
        for depth, level in enumerate(levels if probes else ()):
            if depth == 0:
                candidates = np.arange(len(level.centroids))
                scores = similarities(level.centroids, queries)
            else:
                candidates = level.children(np.unique(kept))
                scores = similarities(np.take(level.centroids, candidates, axis=0), queries)
            keep = probes if depth < len(levels) - 1 else -(-probes // len(queries))
            if len(candidates) > keep:
                kept = candidates[np.argpartition(-scores, keep - 1, axis=0)[:keep]]
            else:
                kept = candidates
        own = self.row_cells[query_rows, len(levels) - 1]
        chosen = np.union1d(kept, own)
        return np.sort(np.concatenate(levels[-1].rows_before(chosen, cut)))

    def _next_fit(self) -> int:
        leaves = self.settings.rules.cells * self.settings.rules.split ** len(self.levels)
        return max(self.settings.rules.exact_rows, LEAF_ROWS * leaves)

    def _fit_level(self, vectors: np.ndarray, fitted: int) -> None:
        """Fit the next level on rows ``[0, fitted)`` and file the rows taken in so far."""
        if not self.levels:
            level = _Level(fitted, _kmeans(vectors[:fitted], self.settings.rules.cells), None)
        else:
            parent = self.levels[-1]
            groups = []
            for members in parent.rows_before(np.arange(len(parent.centroids)), fitted):
                count = min(self.settings.rules.split, len(members))
                groups.append(_kmeans(vectors[members], count) if count else None)
            # A cell no row of the sample fell into keeps one child: its own centroid.
            centroids = [
                group if group is not None else parent.centroids[cell][None, :]
                for cell, group in enumerate(groups)
            ]
            starts = np.concatenate([[0], np.cumsum([len(group) for group in centroids])])
            level = _Level(fitted, np.vstack(centroids), starts.astype(np.int64))
        self.levels.append(level)
        depth = len(self.levels) - 1
        grown = np.empty((len(vectors), len(self.levels)), dtype=np.int32)
        if depth:
            grown[: self.filed, :depth] = self.row_cells[: self.filed]
        self.row_cells = grown
        for row in range(self.filed):
            parent_cell = self.row_cells[row, depth - 1] if depth else -1
            self.row_cells[row, depth] = self._file_at(level, parent_cell, vectors[row], row)

    def _file(self, vectors: np.ndarray, start: int, end: int) -> None:
        """File rows ``[start, end)`` at every level, each under the nearest child of its cell."""
        if not self.levels or end <= start:
            return
        if len(self.row_cells) < end:
            room = grown_length(end, len(self.row_cells))
            grown = np.empty((room, len(self.levels)), np.int32)
            grown[: self.filed] = self.row_cells[: self.filed]
            self.row_cells = grown
        for row in range(start, end):
            cell = -1
            for depth, level in enumerate(self.levels):
                cell = self._file_at(level, cell, vectors[row], row)
                self.row_cells[row, depth] = cell

    @staticmethod
    def _file_at(level: _Level, parent_cell: int, vector: np.ndarray, row: int) -> int:
        if level.child_start is None:
            cell = int((level.centroids @ vector).argmax())
        else:
            first = int(level.child_start[parent_cell])
            last = int(level.child_start[parent_cell + 1])
            cell = first + int((level.centroids[first:last] @ vector).argmax())
        level.file(cell, row)
        return cell


def _kmeans(sample: np.ndarray, count: int) -> np.ndarray:
    """Spherical k-means: evenly spaced rows as the start, fixed rounds, so it is deterministic."""
    centroids = sample[np.linspace(0, len(sample) - 1, count).astype(np.int64)].copy()
    labels = np.arange(count)
    for _ in range(KMEANS_ROUNDS):
        nearest = (sample @ centroids.T).argmax(axis=1)
        # Sums per centroid as a product with the one-hot assignment: many times faster than
        # np.add.at, which matters when a level splits thousands of cells at once.
        sums = (nearest[None, :] == labels[:, None]).astype(sample.dtype) @ sample
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        filled = norms[:, 0] > 0
        centroids[filled] = sums[filled] / norms[filled]
    return centroids


def similarities(rows: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``rows @ queries.T``, one matrix-vector product per query.

    OpenBLAS multiplies a matrix by two or three vectors at once several times slower than by
    each in turn (measured here: 216 µs against 2 × 23 µs for 1,024 × 384 by two), and a reading
    has one to a few queries.
    """
    if len(queries) == 0:
        return np.empty((len(rows), 0), dtype=np.float32)
    return np.stack([rows @ query for query in queries], axis=1)
