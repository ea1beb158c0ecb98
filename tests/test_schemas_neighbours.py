"""Nearest neighbours extended up a speaker's fixed points equal those found afresh.

The re-clustering job extends each point's neighbours from the point below
(:mod:`awai_engine.schemas.neighbours`); a reading clustering on demand may find them afresh.
Both must give the same graph, so the same schemas, or a reading would depend on what the job
happened to do first.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from awai_engine.schemas.clustering import ChainMemo, cluster_labels
from awai_engine.schemas.neighbours import (
    FAST_COLUMNS,
    TILE,
    _nearest,
    _smallest,
    _to_distance,
    nearest_neighbours,
)
from awai_engine.schemas.settings import SchemaRules, SchemaSettings


def lattice(seed: int, distinct: int, count: int) -> np.ndarray:
    """Unit vectors of four ±½ entries, drawn with repeats: their dot products are multiples of
    ¼, exact in float32, so distances tie often (as repeated thoughts do) and are known exactly."""
    rng = np.random.default_rng(seed)
    base = np.zeros((distinct, 384), dtype=np.float32)
    for row in base:
        row[rng.choice(8, size=4, replace=False)] = rng.choice([-0.5, 0.5], size=4)
    return base[rng.integers(0, distinct, size=count)]


def gaussian(seed: int, count: int) -> np.ndarray:
    """Unit vectors in clumps, some repeated: distances as MiniLM's are, rounded in float32."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(max(2, count // 40), 384))
    points = centres[rng.integers(0, len(centres), size=count)] + 0.7 * rng.normal(
        size=(count, 384)
    )
    points[rng.random(count) < 0.2] = points[0]
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


def extended(points: np.ndarray, k: int, cuts: list[int]):
    """The neighbours found for each cut in turn, each extending the last, then for all."""
    known = None
    for cut in [*sorted(cuts), len(points)]:
        known = nearest_neighbours(points[:cut], k, known)
    return known


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    distinct=st.integers(2, 60),
    count=st.integers(32, 700),
    k=st.integers(1, 30),
    cuts=st.lists(st.floats(0.05, 1.0), max_size=4),
)
def test_neighbours_extended_from_prefixes_are_those_of_the_whole_by_distance_then_row(
    seed: int, distinct: int, count: int, k: int, cuts: list[float]
) -> None:
    points = lattice(seed, distinct, count)
    k = min(k, count - 1)
    prefixes = sorted({max(k + 1, int(share * count)) for share in cuts})
    fresh = nearest_neighbours(points, k)
    grown = extended(points, k, prefixes)
    assert np.array_equal(grown.nearest, fresh.nearest)
    assert np.array_equal(grown.distance.view(np.int32), fresh.distance.view(np.int32))
    # The k + 1 smallest (distance, row) pairs of each row, with exact distances.
    distance = np.sqrt(np.maximum(2.0 - 2.0 * (points @ points.T), 0.0), dtype=np.float32)
    np.fill_diagonal(distance, 0.0)
    for row in range(count):
        order = np.lexsort((np.arange(count), distance[row]))[: k + 1]
        assert fresh.nearest[row].tolist() == order.tolist()
        assert np.array_equal(fresh.distance[row], distance[row, order])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**16), count=st.integers(300, 1100), first=st.floats(0.1, 0.9))
def test_neighbours_of_rounded_distances_extend_bit_for_bit(
    seed: int, count: int, first: float
) -> None:
    points = gaussian(seed, count)
    cut = int(first * count)
    grown = extended(points, 24, [cut, (cut + count) // 2])
    fresh = nearest_neighbours(points, 24)
    assert np.array_equal(grown.nearest, fresh.nearest)
    assert np.array_equal(grown.distance.view(np.int32), fresh.distance.view(np.int32))


def test_neighbours_of_other_points_are_found_afresh_not_extended() -> None:
    points = gaussian(3, 600)
    other = nearest_neighbours(gaussian(4, 400), 24)
    mixed = nearest_neighbours(points, 24, other)
    fresh = nearest_neighbours(points, 24)
    assert np.array_equal(mixed.nearest, fresh.nearest)
    assert np.array_equal(
        nearest_neighbours(points, 12, fresh).nearest, nearest_neighbours(points, 12).nearest
    )


def test_a_speaker_clustered_up_their_points_with_a_memo_gets_the_labels_found_afresh() -> None:
    points = gaussian(11, 1400)
    rng = np.random.default_rng(11)
    words = ["battery", "drains", "overnight", "charger", "sync", "worker", "again", "phone"]
    texts = tuple(
        "ok thanks" if rng.random() < 0.15 else " ".join(rng.choice(words, size=5))
        for _ in range(len(points))
    )
    knn = SchemaSettings(rules=SchemaRules(algorithm="knn-graph"))
    memo = ChainMemo()
    for count in (640, 768, 896, 1024, 1280, 1400):
        carried = cluster_labels(points[:count], knn, texts[:count], memo=memo)
        assert np.array_equal(carried, cluster_labels(points[:count], knn, texts[:count]))
        assert memo.neighbours is not None and len(memo.texts) == count
    assert carried.max() >= 1  # the clumps were found: the labels compared mean something
    assert (carried[np.array(texts) == "ok thanks"] == -1).all()  # and slight thoughts left out
    # A memo of other thoughts is not taken for a prefix of these.
    other = ChainMemo()
    cluster_labels(gaussian(12, 700), knn, texts[100:800], memo=other)
    assert np.array_equal(
        cluster_labels(points, knn, texts, memo=other), cluster_labels(points, knn, texts)
    )


@pytest.mark.parametrize("points", ["lattice", "gaussian"])
def test_wide_tiles_found_through_a_bound_equal_every_distance_ordered(points: str) -> None:
    """From ``FAST_COLUMNS`` columns on, a row's neighbours come from candidates whose products
    reach a sampled bound: they must be exactly those of ordering every distance, with ties
    (lattice: products tie exactly), far columns (−∞), the row itself (+∞), and a row with fewer
    near columns than neighbours among them."""
    count = FAST_COLUMNS + 700
    vectors = lattice(3, 40, count) if points == "lattice" else gaussian(3, count)
    dots = vectors[:TILE] @ vectors.T
    dots[:, :300] = -np.inf  # columns a tile leaves out (rows found before, padding)
    dots[np.arange(TILE), np.arange(TILE)] = np.inf
    dots[7, 310:] = -np.inf  # fewer candidates than neighbours: this row is done the full way
    for first in (0, TILE):
        expected = _smallest(_to_distance(dots.copy()), 25, first)
        np.testing.assert_array_equal(_nearest(dots.copy(), 25, first), expected)
