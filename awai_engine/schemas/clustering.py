"""HDBSCAN on one speaker's unit-length float32 thought vectors: labels, noise as ``-1``.

Why not simply ``hdbscan.HDBSCAN``: on 384-d sentence vectors its tree algorithms are slow (12 s at
5k thoughts) and its ``generic`` algorithm holds several float64 n×n matrices (0.55 GB at 5k,
6.3 GB at 20k, and float64 products of ≥ 15.5k rows crashed this machine's OpenBLAS). Reducing to
10 PCA dimensions first is fast but measurably worse here: on topic sentences it merged noise
into clusters, and on real IRC chat it found 2 clusters where full-dimensional HDBSCAN found 37.
So the minimum spanning tree of the mutual-reachability graph is built here, then handed to the
hdbscan package's own cluster-tree code (condense, stability, excess-of-mass selection):

- ``exact``: one float32 n×n distance matrix (n²·4 bytes: 100 MB at 5k) and Prim's algorithm in
  numpy, with ties broken and edges sorted as the hdbscan package does: it gives the labels of
  ``hdbscan.HDBSCAN(algorithm="generic")`` (a test checks it; identical on 3k real IRC lines too).
- ``knn-graph``: for large n, the tree is built on the k-nearest-neighbour graph only, with
  exact neighbours found in float32 row blocks (memory n·k). Far-apart groups the graph leaves
  unconnected are joined at infinite distance, which only affects the top of the hierarchy.
  Agreement with ``exact`` measured on 5k IRC messages: adjusted Rand index 0.96.

Two additions to plain HDBSCAN (:func:`_cohesive`): a thought or a cluster that is not similar
enough to the rest of its cluster is noise, and when nothing else forms, one tight cluster may
stand alone.
``auto`` (the default) is exact up to ``exact_max_thoughts`` and knn-graph above it. Everything
is deterministic for the same vectors, which the no-future-leak guarantee relies on: a schema
clustered on demand for a reading must equal the one the scheduler stores for the same prefix.
"""

from __future__ import annotations

import numpy as np

from awai_engine.settings import SchemaSettings

# hdbscan (which imports scikit-learn) and scipy.sparse are imported where they are used: they
# take seconds to import, which every ``awai`` command would pay at start-up otherwise.

NOISE = -1
ROW_BLOCK = 1024
KNN_BLOCK = 256  # rows per block in knn-graph: its index arrays are int64, block × n
SMALL_K = 8
# The sparse spanning-tree code drops zero weights; duplicates get this instead, and 0 back after.
_TINY = 1e-30


def method_for(count: int, settings: SchemaSettings) -> str:
    """The algorithm and parameters that cluster ``count`` thoughts: stored with every run.

    A stored run is reused for a reading only when the method would be the same today, so
    changing a setting never mixes clusterings made two ways.
    """
    algorithm = settings.algorithm
    if algorithm == "auto":
        algorithm = "exact" if count <= settings.exact_max_thoughts else "knn-graph"
    name = (
        f"hdbscan-{algorithm}/mcs{settings.min_cluster_size}"
        f"/cohesion{settings.min_cohesion:g}/lone{settings.recall_threshold:g}"
    )
    return f"{name}/k{settings.knn_neighbours}" if algorithm == "knn-graph" else name


def cluster_labels(vectors: np.ndarray, settings: SchemaSettings) -> np.ndarray:
    """One label per row (``-1`` for noise), clusters numbered in order of their first row."""
    from hdbscan._hdbscan_linkage import label
    from hdbscan._hdbscan_tree import condense_tree

    count = len(vectors)
    size = settings.min_cluster_size
    if count <= size:
        return np.full(count, NOISE, dtype=np.int64)
    points = np.ascontiguousarray(vectors, dtype=np.float32)
    min_samples = min(count - 1, size)
    if method_for(count, settings).startswith("hdbscan-exact"):
        edges = _exact_tree(points, min_samples)
    else:
        edges = _knn_graph_tree(points, min_samples, settings.knn_neighbours)
    edges = edges[np.argsort(edges[:, 2])]  # hdbscan's own sort: tied weights ordered alike
    condensed = condense_tree(label(edges), size)
    floor = settings.min_cohesion
    labels = _cohesive(points, _select(condensed, single=False), floor, floor, size)
    if labels.max(initial=NOISE) == NOISE:
        lone = _select(condensed, single=True)
        labels = _cohesive(points, lone, floor, settings.recall_threshold, size)
    return _renumber(labels)


def _select(condensed: np.ndarray, single: bool) -> np.ndarray:
    """Excess-of-mass selection; ``single`` lets the whole tree's core count as one cluster."""
    from hdbscan._hdbscan_tree import compute_stability, get_clusters

    labels, _, _ = get_clusters(
        condensed,
        compute_stability(condensed),
        cluster_selection_method="eom",
        allow_single_cluster=single,
    )
    return np.asarray(labels, dtype=np.int64)


def cohesion(vectors: np.ndarray) -> float:
    """Mean similarity of distinct pairs of unit vectors: (|Σv|² − n) / (n(n − 1))."""
    count = len(vectors)
    if count < 2:
        return 1.0
    total = vectors.astype(np.float64).sum(axis=0)
    return (float(total @ total) - count) / (count * (count - 1))


def _cohesive(
    points: np.ndarray, labels: np.ndarray, member_floor: float, cluster_floor: float, size: int
) -> np.ndarray:
    """Clusters of thoughts that are similar enough to each other; the rest becomes noise.

    HDBSCAN finds groups dense *relative to the speaker's other thoughts*, and with a few dozen
    thoughts that is coarse: unrelated lines get attached to a topic (three everyday remarks
    joined eight battery complaints, at mean similarity 0.1 to them), or the least sparse lines
    form a "cluster" (remarks about a cat, a printer, parking and an umbrella: 0.24 with MiniLM).
    So a thought stays in its cluster only if its mean similarity to the other members reaches
    ``member_floor``, and a cluster stays only with ``size`` members whose mean pairwise
    similarity reaches ``cluster_floor``. With ``min_cohesion`` 0.3 for both, topic groups
    (0.42–0.55) keep their members and no cluster of 3k real IRC lines was dropped.

    The lone-cluster pass is stricter (``cluster_floor`` = ``recall_threshold``): excess of mass
    never selects the root, so someone who keeps coming back to one thing and says little else
    (the sample's accessibility advocate) would get no schema at all, while allowing a single
    cluster everywhere merged every topic of a several-topic speaker into one. So one cluster is
    asked for only when nothing else formed, and kept only if it is as tight as a thought must be
    to recall a schema: 98% of lone clusters of random chat lines fall below it (mean 0.23), the
    sample's accessibility thoughts reach 0.50.
    """
    kept = labels.copy()
    for cluster in range(int(labels.max(initial=NOISE)) + 1):
        members = np.flatnonzero(labels == cluster)
        if len(members) < 2:
            kept[members] = NOISE
            continue
        total = points[members].astype(np.float64).sum(axis=0)
        to_others = (points[members] @ total - 1.0) / (len(members) - 1)
        staying = members[to_others >= member_floor]
        kept[members[to_others < member_floor]] = NOISE
        if len(staying) < size or cohesion(points[staying]) < cluster_floor:
            kept[staying] = NOISE
    return kept


def _renumber(labels: np.ndarray) -> np.ndarray:
    """Clusters numbered by their earliest member, so the numbering says nothing arbitrary."""
    out = np.full(len(labels), NOISE, dtype=np.int64)
    order = [int(c) for c in dict.fromkeys(labels.tolist()) if c != NOISE]
    for new, old in enumerate(order):
        out[labels == old] = new
    return out


def _distance_block(points: np.ndarray, start: int, out: np.ndarray) -> None:
    """Euclidean distances of rows ``start:`` + len(out) to all rows, into ``out`` (float32)."""
    np.matmul(points[start : start + len(out)], points.T, out=out)
    # |a − b|² = 2 − 2·a·b for unit vectors; clipped because rounding can make it slightly < 0.
    np.multiply(out, -2.0, out=out)
    out += 2.0
    np.maximum(out, 0.0, out=out)
    np.sqrt(out, out=out)


def _exact_tree(points: np.ndarray, min_samples: int) -> np.ndarray:
    """Prim's minimum spanning tree of the mutual-reachability graph, on a dense float32 matrix."""
    count = len(points)
    distance = np.empty((count, count), dtype=np.float32)
    core = np.empty(count, dtype=np.float32)
    for start in range(0, count, ROW_BLOCK):
        block = distance[start : start + ROW_BLOCK]
        _distance_block(points, start, block)
        block[np.arange(len(block)), np.arange(start, start + len(block))] = 0.0
        core[start : start + len(block)] = _kth_smallest(block, min_samples)
    # Mutual reachability max(core_a, core_b, d(a, b)) is formed one row at a time. A point that
    # joins the tree gets an infinite core in ``open_core``, so rows never reach back into it.
    open_core = core.copy()
    best = np.full(count, np.inf, dtype=np.float32)
    source = np.zeros(count, dtype=np.int64)
    edges = np.empty((count - 1, 3), dtype=np.float64)
    row = np.empty(count, dtype=np.float32)
    current = 0
    open_core[current] = np.inf
    for step in range(count - 1):
        np.maximum(distance[current], core[current], out=row)
        np.maximum(row, open_core, out=row)
        closer = row < best
        best[closer] = row[closer]
        source[closer] = current
        nearest = int(best.argmin())
        edges[step] = (source[nearest], nearest, best[nearest])
        best[nearest] = np.inf
        open_core[nearest] = np.inf
        current = nearest
    return edges


def _kth_smallest(rows: np.ndarray, k: int) -> np.ndarray:
    """The k-th smallest value of each row (0-based), as ``np.partition(rows, k)[:, k]``.

    For the usual small k, k passes of argmin over a copy are several times faster than a
    partition, which was a third of the exact algorithm's time at 5k thoughts.
    """
    if k > SMALL_K:
        return np.partition(rows, k, axis=1)[:, k]
    work = rows.copy()
    index = np.arange(len(work))
    for _ in range(k):
        work[index, work.argmin(axis=1)] = np.inf
    return work.min(axis=1)


def _knn_graph_tree(points: np.ndarray, min_samples: int, neighbours: int) -> np.ndarray:
    """Spanning tree of mutual reachability restricted to each point's k nearest neighbours."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components, minimum_spanning_tree

    count = len(points)
    k = min(count - 1, max(neighbours, min_samples))
    nearest = np.empty((count, k + 1), dtype=np.int64)
    distance = np.empty((count, k + 1), dtype=np.float32)
    block = np.empty((min(KNN_BLOCK, count), count), dtype=np.float32)
    for start in range(0, count, KNN_BLOCK):
        rows = block[: min(KNN_BLOCK, count - start)]
        _distance_block(points, start, rows)
        rows[np.arange(len(rows)), np.arange(start, start + len(rows))] = 0.0
        candidates = np.argpartition(rows, k, axis=1)[:, : k + 1]
        found = np.take_along_axis(rows, candidates, axis=1)
        order = np.lexsort((candidates, found), axis=1)
        nearest[start : start + len(rows)] = np.take_along_axis(candidates, order, axis=1)
        distance[start : start + len(rows)] = np.take_along_axis(found, order, axis=1)
    core = distance[:, min_samples]
    source = np.repeat(np.arange(count), k + 1)
    target = nearest.ravel()
    weight = np.maximum(distance.ravel(), np.maximum(core[source], core[target]))
    keep = source != target
    graph = coo_matrix(
        (np.maximum(weight[keep], _TINY).astype(np.float64), (source[keep], target[keep])),
        shape=(count, count),
    ).tocsr()
    tree = minimum_spanning_tree(graph.maximum(graph.T)).tocoo()
    edges = np.column_stack([tree.row, tree.col, tree.data]).astype(np.float64)
    edges[edges[:, 2] <= _TINY, 2] = 0.0
    parts, part_of = connected_components(tree, directed=False)
    if parts > 1:
        firsts = np.array([np.flatnonzero(part_of == part)[0] for part in range(parts)])
        bridges = np.column_stack([firsts[:-1], firsts[1:], np.full(parts - 1, np.inf)])
        edges = np.vstack([edges, bridges])
    return edges
