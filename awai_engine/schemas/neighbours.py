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

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

TILE = 256
SELECT_ROWS = 64  # rows whose keys are selected at once: 64 × n int64
FAST_COLUMNS = 8192  # from this many columns on, candidates are found by a bound first
SAMPLE_COLUMNS = 2048  # columns sampled for that bound
MARGIN = 1e-4  # of a dot product: far wider than float32 rounding, so it separates distances
_COLUMN = np.int64(0xFFFFFFFF)


@dataclass(frozen=True)
class Neighbours:
    """Each row's ``k + 1`` nearest rows among ``points`` (itself included, as a fresh search
    finds it), ordered by (distance, row).

    The points themselves are not kept, only their number and a fingerprint of their bytes, by
    which a later call checks that they are a prefix of its own: the re-clustering job keeps a
    long speaker's neighbours between its runs (:class:`.clustering.ChainMemo`), and a copy of
    their vectors would be several times the neighbours' size."""

    count: int
    fingerprint: bytes  # of the points (float32, C order): see _fingerprint
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
    points = np.ascontiguousarray(points, dtype=np.float32)
    old = known.count if known is not None and _extends(known, points, k) else 0
    keys = np.empty((count, k + 1), dtype=np.int64)

    def tile(start: int) -> None:
        stop = min(count, start + TILE)
        if stop <= old:
            # Rows found before: their old neighbours, merged with the nearest rows added.
            assert known is not None
            first = old - old % TILE  # the tile holding the first added row
            dots = _dots(padded, start, first, count)
            dots[:, : old - first] = -np.inf
            both = np.concatenate(
                [
                    _keys(known.nearest[start:stop], known.distance[start:stop]),
                    _beating(dots[: stop - start], known.distance[start:stop, k], first),
                ],
                axis=1,
            )
            keys[start:stop] = np.sort(both, axis=1)[:, : k + 1]
        else:
            dots = _dots(padded, start, 0, count)
            dots[np.arange(TILE), np.arange(start, start + TILE)] = np.inf  # itself: distance 0
            keys[start:stop] = _nearest(dots[: stop - start], k + 1, 0)

    # Tiles of rows are independent, and numpy leaves the GIL while it multiplies: one thread per
    # core (BLAS itself runs single-threaded in AWAI, see engine.limit_blas_threads).
    with ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as pool:
        list(pool.map(tile, range(0, count, TILE)))
    nearest = keys & _COLUMN
    distance = (keys >> 32).astype(np.int32).view(np.float32)
    return Neighbours(count, _fingerprint(points), nearest, distance)


def _extends(known: Neighbours, points: np.ndarray, k: int) -> bool:
    """Whether ``known`` was found for a prefix of ``points`` with the same ``k``."""
    return (
        known.k == k
        and known.count <= len(points)
        and known.fingerprint == _fingerprint(points[: known.count])
    )


def _fingerprint(points: np.ndarray) -> bytes:
    """BLAKE2b of the points' shape and float32 bytes: equal for equal points, and a different
    prefix (an edit, a removal, another model's vectors) gives another one."""
    digest = hashlib.blake2b(repr(points.shape).encode(), digest_size=16)
    digest.update(np.ascontiguousarray(points, dtype=np.float32).data)
    return digest.digest()


def _dots(padded: np.ndarray, start: int, first: int, count: int) -> np.ndarray:
    """Dot products of padded rows ``start:start + TILE`` with rows ``first:`` (a multiple of
    ``TILE``), one fixed-shape tile product at a time; padding rows get −∞ (infinitely far)."""
    rows = padded[start : start + TILE]
    out = np.empty((TILE, len(padded) - first), dtype=np.float32)
    tile = np.empty((TILE, TILE), dtype=np.float32)
    for column in range(first, len(padded), TILE):
        np.matmul(rows, padded[column : column + TILE].T, out=tile)
        out[:, column - first : column - first + TILE] = tile
    out[:, max(0, count - first) :] = -np.inf
    return out


def _to_distance(dots: np.ndarray) -> np.ndarray:
    """Euclidean distances of unit vectors from their dot products, in place: |a − b|² =
    2 − 2·a·b, clipped because rounding can make it slightly < 0 (+∞ gives 0, −∞ gives ∞).
    Elementwise, so a value comes out the same whether computed alone or in a whole tile."""
    np.multiply(dots, -2.0, out=dots)
    dots += 2.0
    np.maximum(dots, 0.0, out=dots)
    np.sqrt(dots, out=dots)
    return dots


def _nearest(dots: np.ndarray, count: int, first: int) -> np.ndarray:
    """The keys of each row's ``count`` smallest (distance, column) pairs, ascending, from its
    dot products (column ``j`` is row ``first + j``): exactly :func:`_smallest` of the
    distances, without turning every product into a distance or ordering all of them.

    The ``count``-th largest product among a sample of the columns bounds the row's:
    every pair that can be among the nearest has a product at least that bound less
    ``MARGIN``, provided the margin separates the two in distance (checked per row; a row it
    does not, and a narrow tile, is done the full way). Only those candidates become distances.
    """
    columns = dots.shape[1]
    if columns < FAST_COLUMNS:
        return _smallest(_to_distance(dots), count, first)
    sample = dots[:, :: columns // SAMPLE_COLUMNS]
    bar = np.partition(sample, -count, axis=1)[:, -count]
    low = bar - np.float32(MARGIN)
    separated = _to_distance(low.copy()) > _to_distance(bar.copy())
    low[~separated] = np.inf  # no candidate: done the full way below
    out = np.sort(_candidates(dots, low, first, count), axis=1)[:, :count]
    bad = np.flatnonzero(~separated)
    if len(bad):
        out[bad] = _smallest(_to_distance(dots[bad]), count, first)
    return out


def _beating(dots: np.ndarray, worst: np.ndarray, first: int) -> np.ndarray:
    """The keys of every column of each row that may come before the row's ``worst`` distance
    (its ``k + 1``-th nearest so far), unordered, padded with the largest key.

    A row extended by new columns keeps nearly all its neighbours: only columns whose product
    reaches the product at ``worst`` less ``MARGIN`` become distances. The distance is a
    non-increasing function of the product (each float32 step is monotone), so a column under
    that bound is farther than ``worst`` whenever the margin separates the two distances, which
    is checked per row (a row it does not is given every column). A new column never wins a
    tie with ``worst``: its row comes after every row found before."""
    low = np.float32(1.0) - worst * worst / np.float32(2.0) - np.float32(MARGIN)
    low[~(_to_distance(low.copy()) > worst)] = -np.inf
    return _candidates(dots, low, first, 1)


def _candidates(dots: np.ndarray, low: np.ndarray, first: int, width: int) -> np.ndarray:
    """The keys of each row's columns whose product reaches the row's ``low``, side by side,
    padded with the largest key to at least ``width`` columns."""
    rows, found = np.nonzero(dots >= low[:, None])
    held = np.bincount(rows, minlength=len(dots))
    starts = np.cumsum(held) - held
    table = np.full((len(dots), max(int(held.max(initial=0)), width)), np.iinfo(np.int64).max)
    table[rows, np.arange(len(rows)) - starts[rows]] = _keys(
        found + first, _to_distance(dots[rows, found])
    )
    return table


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
