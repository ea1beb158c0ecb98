"""Exact k nearest neighbours of unit vectors, found afresh or extended from a prefix of them.

Why extended: the re-clustering job clusters a long speaker at every fixed point of their
thoughts (:mod:`.fixed_points`), 4, 5, 6, 7, 8, 10, … thousand, and the knn-graph algorithm
(:mod:`.clustering`) needs every thought's nearest neighbours among all of them: n² distances at
each point, most of a catch-up's time. The thoughts at one point are a prefix of those at the
next, so the neighbours of the old rows there are their old neighbours merged with the nearest
of the rows added, and only the new rows need a full pass: about a third of the distances over
a speaker's points.

Extending must give exactly what a fresh search gives, or a clustering would depend on whether
the job happened to make the point below first (a reading clustering on demand must equal the
run the job stores). Two things make that hold by construction, not by luck:

- Ties are broken by row: each row keeps the ``k + 1`` smallest of (distance, row), a total
  order, so the same set comes out whichever subsets it was taken from. (A plain partition
  picks among equal distances arbitrarily, and repeated thoughts make equal distances common.)
- Every distance is computed in one fixed way: the dot product of a ``TILE``-row block of the
  zero-padded points with another such block, always the same shape, so the BLAS takes the
  same path for it whether the rest of the matrix is computed or not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TILE = 256
SELECT_ROWS = 64  # rows whose keys are selected at once: 64 × n int64
_COLUMN = np.int64(0xFFFFFFFF)


@dataclass(frozen=True)
class Neighbours:
    """Each row's ``k + 1`` nearest rows among ``points`` (itself included, as a fresh search
    finds it), ordered by (distance, row)."""

    points: np.ndarray  # float32 (n, d): kept so a later call can check it extends them
    nearest: np.ndarray  # int64 (n, k + 1)
    distance: np.ndarray  # float32 (n, k + 1)

    @property
    def k(self) -> int:
        return self.nearest.shape[1] - 1


def nearest_neighbours(points: np.ndarray, k: int, known: Neighbours | None = None) -> Neighbours:
    """The ``k + 1`` nearest rows of each row of ``points`` (float32, unit length), the row
    itself at distance 0 among them: extended from ``known`` when its points are a prefix of
    ``points`` and its ``k`` the same, else found afresh. Either way the result is the same."""
    count = len(points)
    if not 0 <= k < count:
        raise ValueError(f"{k} neighbours need at least {k + 1} points, not {count}")
    padded = np.zeros((-(-count // TILE) * TILE, points.shape[1]), dtype=np.float32)
    padded[:count] = points
    old = len(known.points) if known is not None and _extends(known, points, k) else 0
    keys = np.empty((count, k + 1), dtype=np.int64)
    for start in range(0, count, TILE):
        stop = min(count, start + TILE)
        if stop <= old:
            # Rows found before: their old neighbours, merged with the nearest rows added.
            assert known is not None
            first = old - old % TILE  # the tile holding the first added row
            values = _distances(padded, start, first, count)
            values[:, : old - first] = np.inf
            both = np.concatenate(
                [
                    _keys(known.nearest[start:stop], known.distance[start:stop]),
                    _smallest(values[: stop - start], k + 1, first),
                ],
                axis=1,
            )
            keys[start:stop] = np.sort(both, axis=1)[:, : k + 1]
        else:
            values = _distances(padded, start, 0, count)
            values[np.arange(TILE), np.arange(start, start + TILE)] = 0.0
            keys[start:stop] = _smallest(values[: stop - start], k + 1, 0)
    nearest = keys & _COLUMN
    distance = (keys >> 32).astype(np.int32).view(np.float32)
    return Neighbours(points=points, nearest=nearest, distance=distance)


def _extends(known: Neighbours, points: np.ndarray, k: int) -> bool:
    """Whether ``known`` was found for a prefix of ``points`` with the same ``k``."""
    size = len(known.points)
    return (
        known.k == k
        and size <= len(points)
        and known.points.shape[1:] == points.shape[1:]
        and np.array_equal(known.points, points[:size])
    )


def _distances(padded: np.ndarray, start: int, first: int, count: int) -> np.ndarray:
    """Euclidean distances of padded rows ``start:start + TILE`` to rows ``first:`` (a multiple
    of ``TILE``), one fixed-shape tile product at a time; padding rows are infinitely far."""
    rows = padded[start : start + TILE]
    out = np.empty((TILE, len(padded) - first), dtype=np.float32)
    tile = np.empty((TILE, TILE), dtype=np.float32)
    for column in range(first, len(padded), TILE):
        np.matmul(rows, padded[column : column + TILE].T, out=tile)
        out[:, column - first : column - first + TILE] = tile
    # |a − b|² = 2 − 2·a·b for unit vectors; clipped because rounding can make it slightly < 0.
    np.multiply(out, -2.0, out=out)
    out += 2.0
    np.maximum(out, 0.0, out=out)
    np.sqrt(out, out=out)
    out[:, max(0, count - first) :] = np.inf
    return out


def _keys(nearest: np.ndarray, distance: np.ndarray) -> np.ndarray:
    """(distance, row) as one int64 per entry, ordered as the pair is: a non-negative float32's
    bits order like the integer they spell, so they go above the row's 32 bits."""
    return (np.ascontiguousarray(distance).view(np.int32).astype(np.int64) << 32) | nearest


def _smallest(values: np.ndarray, count: int, first: int) -> np.ndarray:
    """The keys of each row's ``count`` smallest (distance, column) pairs, ascending; column
    ``j`` of ``values`` is row ``first + j`` of the points."""
    columns = np.arange(first, first + values.shape[1], dtype=np.int64)
    out = np.empty((len(values), min(count, values.shape[1])), dtype=np.int64)
    for start in range(0, len(values), SELECT_ROWS):
        keys = _keys(
            np.broadcast_to(columns, values[start : start + SELECT_ROWS].shape),
            values[start : start + SELECT_ROWS],
        )
        if keys.shape[1] > count:
            keys = np.partition(keys, count - 1, axis=1)[:, :count]
        out[start : start + SELECT_ROWS] = np.sort(keys, axis=1)
    return out
