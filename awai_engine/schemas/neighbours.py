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
  same path for it whether the rest of the matrix is computed or not. A pair's product is taken
  from the block above the diagonal (or on it, above its diagonal) for both of its rows: half
  the products, and a graph whose distances are symmetric to the bit.

Only products that reach a row's bar become distances: a bar every one of the row's nearest
reaches, from a sample of the columns (a new row) or from its ``k + 1``-th distance so far (a
row found before). The bar only saves work; which rows are nearest does not depend on it.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from awai_engine.ordering import stable_order

TILE = 256
SAMPLE_COLUMNS = 2048  # columns sampled for each row's bar
BLOCK = 4  # tiles searched at once: 256 × 1,024 products (1 MiB, a core's L2 cache here)
GROUP = 8  # sampled columns whose largest product stands for them in the bar (_sampled_bound)
SAMPLE_ROWS = 1024  # rows whose sampled products are held at once: 1024 × 2048 float32
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
    points = np.ascontiguousarray(points, dtype=np.float32)
    tiles = -(-count // TILE)
    padded = np.zeros((tiles * TILE, points.shape[1]), dtype=np.float32)
    padded[:count] = points
    old = known.count if known is not None and _extends(known, points, k) else 0
    # Each row's bar (padding rows: +inf, never a target): only products reaching it can count.
    # Rows and strips are independent, and numpy leaves the GIL while it multiplies: one thread
    # per core (BLAS itself runs single-threaded in AWAI, see engine.limit_blas_threads).
    pool = ThreadPoolExecutor(max(1, os.cpu_count() or 1))
    fingerprint = pool.submit(_fingerprint, points)  # hashing leaves the GIL: it overlaps
    low = np.full(tiles * TILE, np.inf, dtype=np.float32)
    sampled = np.arange(0, count, max(1, count // SAMPLE_COLUMNS))
    columns = np.ascontiguousarray(points[sampled].T)

    def bound(row: int) -> None:
        stop = min(row + SAMPLE_ROWS, count)
        low[row:stop] = _sampled_bound(points[row:stop], row, columns, sampled, k + 1)

    list(pool.map(bound, range(old, count, SAMPLE_ROWS)))
    if known is not None and old:
        low[:old] = _worst_bound(known.distance[:, k])
    pieces: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in range(tiles)]
    for row in range(old - old % TILE, count, TILE):  # each new row is its own nearest
        rows = np.arange(max(row, old), min(row + TILE, count), dtype=np.int64)
        pieces[row // TILE].append((rows, rows.copy()))
    if known is not None and old:
        for row in range(0, old, TILE):
            stop = min(row + TILE, old)
            rows = np.repeat(np.arange(row, stop, dtype=np.int64), k + 1)
            keys = _keys(known.nearest[row:stop], known.distance[row:stop]).ravel()
            pieces[row // TILE].append((rows, keys))

    def strip(tile: int) -> None:
        for target, rows, keys in _strip(padded, tile, old // TILE, count, old, low):
            pieces[target].append((rows, keys))  # list.append is atomic: threads may share

    def select(tile: int) -> np.ndarray:
        return _selected(pieces[tile], tile * TILE, min(TILE, count - tile * TILE), k + 1)

    with pool:
        list(pool.map(strip, range(tiles)))
        keys = np.concatenate(list(pool.map(select, range(tiles))))
        found = fingerprint.result()
    nearest = keys & _COLUMN
    distance = (keys >> 32).astype(np.int32).view(np.float32)
    return Neighbours(count, found, nearest, distance)


def _strip(
    padded: np.ndarray, tile: int, first: int, count: int, old: int, low: np.ndarray
) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """The candidates found in the products of row tile ``tile`` with the tiles from
    ``max(tile, first)`` on, as (target tile, target rows, keys) pieces: each pair whose product
    reaches its target row's bar, for the row in this tile and, across the diagonal, for the row
    in the other tile (a product is computed once for both of its rows). Pairs of two rows found
    before (both under ``old``), a row with itself, and padding take no part.

    Each ``BLOCK`` of tile products is searched while it is in the cache, first against the
    lowest bar of its rows and columns (one comparison), then the few products that reach it
    against their own rows' and columns' bars: passes over a whole strip of products cost as
    much as a third of the multiplications. A block rather than a tile: a quarter of the calls,
    each taking the GIL the two threads share.
    """
    start = tile * TILE
    column0 = max(tile, first) * TILE
    rows = padded[start : start + TILE]
    lowest = float(low[start : start + TILE].min())
    block = np.empty((TILE, BLOCK * TILE), dtype=np.float32)
    at_rows, at_columns, at_products = [], [], []
    for column in range(column0, len(padded), BLOCK * TILE):
        width = min(BLOCK * TILE, len(padded) - column)
        dots = block[:, :width]
        for tile_at in range(0, width, TILE):
            tile_columns = padded[column + tile_at : column + tile_at + TILE]
            np.matmul(rows, tile_columns.T, out=dots[:, tile_at : tile_at + TILE])
        if column == start:
            # The diagonal tile: each pair's product as computed above the diagonal, for both rows.
            diagonal = dots[:, :TILE]
            upper = np.triu(diagonal, 1)
            np.add(upper, upper.T, out=diagonal)
            np.fill_diagonal(diagonal, -np.inf)
            theirs = low[column + TILE : column + width]
        else:
            theirs = low[column : column + width]
        bar = min(lowest, float(theirs.min(initial=np.inf)))
        if old > column and old > start:
            dots[: old - start, : old - column] = -np.inf
        if column + width > count:
            dots[:, count - column :] = -np.inf
        if start + TILE > count:
            dots[count - start :] = -np.inf
        at = np.flatnonzero(dots >= bar)
        if len(at):
            found_rows, found_columns = np.divmod(at, width)
            at_rows.append(found_rows)
            at_columns.append(found_columns + column)
            at_products.append(dots[found_rows, found_columns])
    if not at_rows:
        return []
    rows_at = np.concatenate(at_rows)
    columns = np.concatenate(at_columns)
    products = np.concatenate(at_products)
    distances = _to_distance(products.copy())
    mine = products >= low[start + rows_at]
    found = [(tile, rows_at[mine] + start, _keys(columns[mine], distances[mine]))]
    across = start + TILE if column0 == start else start  # the diagonal tile's pairs are both rows'
    other = (products >= low[columns]) & (columns >= across)
    if other.any():
        targets = columns[other]
        keys = _keys(rows_at[other] + start, distances[other])
        tiles = targets // TILE
        order = stable_order(tiles)  # by target tile only
        tiles, targets, keys = tiles[order], targets[order], keys[order]
        first_tile = across // TILE
        bounds = np.searchsorted(tiles, np.arange(first_tile, len(low) // TILE + 1))
        for at_tile, (begin, end) in enumerate(itertools.pairwise(bounds), first_tile):
            if end > begin:
                found.append((at_tile, targets[begin:end], keys[begin:end]))
    return found


def _selected(
    pieces: list[tuple[np.ndarray, np.ndarray]], start: int, rows: int, count: int
) -> np.ndarray:
    """The ``count`` smallest keys of each of rows ``start:start + rows``, ascending, from the
    (rows, keys) pieces gathered for them (in any order: keys are a total order)."""
    targets = np.concatenate([piece[0] for piece in pieces]) - start
    keys = np.concatenate([piece[1] for piece in pieces])
    order = stable_order(targets)
    targets, keys = targets[order], keys[order]
    held = np.bincount(targets, minlength=rows)
    starts = np.cumsum(held) - held
    table = np.full((rows, int(held.max())), np.iinfo(np.int64).max)
    table[targets, np.arange(len(targets)) - starts[targets]] = keys
    if table.shape[1] > count:
        table = np.partition(table, count - 1, axis=1)[:, :count]
    return np.sort(table, axis=1)


def _sampled_bound(
    rows: np.ndarray, first: int, columns: np.ndarray, sampled: np.ndarray, count: int
) -> np.ndarray:
    """For each of ``rows`` (rows ``first:`` of the points), a product every one of its
    ``count`` nearest rows reaches, from its products with ``columns`` (the points' rows
    ``sampled``, transposed).

    The ``count``-th largest of those products (the row itself counted as +∞, as it is at
    distance 0) is reached by ``count`` rows, so the nearest ``count`` are at least as near;
    ``MARGIN`` less covers the rounding between this product and the tiles' (checked per row
    to separate the two in distance; a row it does not gets −∞: every column).
    """
    products = rows @ columns
    own = np.flatnonzero((sampled >= first) & (sampled < first + len(rows)))
    products[sampled[own] - first, own] = np.inf
    groups = len(sampled) // GROUP
    if groups >= count:
        # Each group's largest product stands for the group: ``count`` groups whose largest
        # reach a value are ``count`` distinct columns that reach it. Groups are strided (a
        # maximum of GROUP contiguous slices), and partitioning a GROUP-th of the products
        # took the bar from a fifth of the search to about an eighth.
        products = products[:, : groups * GROUP].reshape(len(rows), GROUP, groups).max(axis=1)
    bar = np.partition(products, -count, axis=1)[:, -count]
    low = bar - np.float32(MARGIN)
    low[~(_to_distance(low.copy()) > _to_distance(bar.copy()))] = -np.inf
    return low


def _worst_bound(worst: np.ndarray) -> np.ndarray:
    """For rows found before, the product a new column must reach to come before the row's
    ``worst`` distance (its ``k + 1``-th nearest so far), ``MARGIN`` less (checked per row, as
    in :func:`_sampled_bound`). A new column never wins a tie with ``worst``: its row comes
    after every row found before."""
    low = np.float32(1.0) - worst * worst / np.float32(2.0) - np.float32(MARGIN)
    low[~(_to_distance(low.copy()) > worst)] = -np.inf
    return low


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


def _to_distance(dots: np.ndarray) -> np.ndarray:
    """Euclidean distances of unit vectors from their dot products, in place: |a − b|² =
    2 − 2·a·b, clipped because rounding can make it slightly < 0 (+∞ gives 0, −∞ gives ∞).
    Elementwise, so a value comes out the same whether computed alone or in a whole tile."""
    np.multiply(dots, -2.0, out=dots)
    dots += 2.0
    np.maximum(dots, 0.0, out=dots)
    np.sqrt(dots, out=dots)
    return dots


def _keys(nearest: np.ndarray, distance: np.ndarray) -> np.ndarray:
    """(distance, row) as one int64 per entry, ordered as the pair is: a non-negative float32's
    bits order like the integer they spell, so they go above the row's 32 bits."""
    return (np.ascontiguousarray(distance).view(np.int32).astype(np.int64) << 32) | nearest
