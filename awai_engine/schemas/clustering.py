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

Plain HDBSCAN finds little in the few dozen thoughts most people say in a channel: in a labelled
launch chat a person raised the same payment worry eight times and got no schema (measured in
``bench/preconceptions.py``). The causes, each fixed here:

- ``min_samples`` equal to ``min_cluster_size`` (3) makes every thought's core distance its
  third-nearest neighbour; among 20 thoughts, paraphrases of one worry are rarely each other's
  three nearest, so most of them became noise. ``min_samples`` is now its own setting (2).
- Excess of mass never selects the root, so a speaker with one concern and some chatter (one
  cluster and noise) had none. When nothing else forms, one cluster may stand alone.
- The similarity floors were set on template sentences (0.42–0.55 inside a topic); one concern
  in varied words sits at 0.2–0.4 with MiniLM against 0.1 for unrelated lines, so a floor of 0.3
  per member (0.45 for a lone cluster) dropped it. Now 0.2 per member, 0.25 for a lone cluster.
- HDBSCAN leaves the border of a sparse cluster as noise. A noise thought whose mean similarity
  to a cluster's members reaches ``join_similarity`` joins it, which is the membership test of
  :func:`_cohesive` applied the other way; only when that cluster is the one it reaches (below).
- Acknowledgements ("ok", "thanks!", "了解です") are alike among themselves and formed a
  "schema" of chatter: thoughts of fewer than ``min_words`` words, or fewer than
  ``min_content_words`` words that could say what they are about (not reactions, fillers or the
  name addressed, :mod:`.substance`), join none. With floors this low, a few unrelated remarks
  can pass as a cluster by meaning alone, so a cluster's core must also share a content word
  (:func:`_worded`).

Long speakers (hundreds of thoughts over months, as in LoCoMo) broke two of those fixes; the
causes, measured in ``bench/preconceptions.py`` (three conversations: a topic's messages inside
one schema 0.71 but only 0.09 of uncited lines kept out, one speaker with a single 220-thought
schema):

- Excess of mass may select one huge cluster over its parts. The member floor then trimmed it to
  a catch-all of 193 thoughts at mean similarity 0.2, the speaker's background. A selected cluster
  that is not clearly more alike than the speaker's thoughts in general is a mixture, not a
  concern: its cohesion must close ``concern_margin`` of the gap between the speaker's mean
  similarity and 1 (and reach ``min_cohesion``). A long speaker's lines are alike in register
  (0.19 on average in LoCoMo, once reactions are out), so an absolute floor let catch-alls of
  300 thoughts at 0.27 through. HDBSCAN is run again on a mixture's members alone, which never
  returns them as one cluster (:func:`_split`), until the parts are alike or too small; the
  split is kept only when its parts hold ``SPLIT_SHARE`` of the members. Re-clustered alone, a
  real concern said in varied words falls apart into crumbs and noise; a mixture falls into
  its topics.
- With thirty schemas the best of thirty mean similarities reaches the joining floor by chance:
  nearly every line joined one. A border thought of a concern is near that concern, not near
  several, so a thought joins only when exactly one schema reaches the floor. A small speaker with
  one schema is unaffected.
``auto`` (the default) is exact up to ``exact_max_thoughts`` and knn-graph above it. Everything
is deterministic for the same vectors, which the no-future-leak guarantee relies on: a schema
clustered on demand for a reading must equal the one the scheduler stores for the same prefix.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from awai_engine.schemas import hdbscan_core
from awai_engine.schemas.neighbours import Neighbours, nearest_neighbours
from awai_engine.schemas.substance import content_words
from awai_engine.settings import SchemaSettings
from awai_engine.text import words

# hdbscan's compiled routines (see hdbscan_core) and scipy.sparse are imported where they are
# used: every ``awai`` command would pay for them at start-up otherwise.

NOISE = -1
ROW_BLOCK = 1024
SMALL_K = 8
COMPILED_PRIM = 1024  # up to this many points, the exact tree's Prim is hdbscan's (8 MiB matrix)
SPLIT_SHARE = 0.3  # see _split
LOOSE = 0.5  # of the concern gap: under it a cluster is a catch-all (see _split)
# The sparse spanning-tree code drops zero weights; duplicates get this instead, and 0 back after.
_TINY = 1e-30


@dataclass
class ChainMemo:
    """What one walk up a speaker's fixed points carries from each clustering to the next.

    One per walk (the re-clustering job's catch-up of a speaker, or a reading clustering the
    points the job has not stored yet): each point's thoughts extend the last point's, so the
    knn graph's neighbours are extended (:func:`.neighbours.nearest_neighbours`) and only the new
    thoughts are judged :func:`eligible`. The job keeps a long speaker's memo from one run to
    the next (:class:`.service.SchemaService`). Both are checked to be of a prefix before use,
    and change the speed only, never the labels.
    """

    neighbours: Neighbours | None = None
    texts: tuple[str, ...] = ()
    eligible: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # The last clustering's labels, by a fingerprint of what it clustered: see _clustered_once.
    clustered: tuple[bytes, np.ndarray] | None = None


def method_for(count: int, settings: SchemaSettings) -> str:
    """The algorithm and parameters that cluster ``count`` thoughts: stored with every run.

    A stored run is reused for a reading only when the method would be the same today, so
    changing a setting never mixes clusterings made two ways. The fixed points are part of it:
    a run's ids come from the run at the fixed point below it (:mod:`.fixed_points`).
    """
    algorithm = _algorithm(count, settings)
    name = (
        f"hdbscan-{algorithm}/mcs{settings.rules.min_cluster_size}/ms{settings.rules.min_samples}"
        f"/cohesion{settings.rules.min_cohesion:g}/join{settings.rules.join_similarity:g}"
        f"/words{settings.rules.min_words}/content{settings.rules.min_content_words}"
        f"/split-mixtures{settings.rules.concern_margin:g}/join-one"
        f"/points{settings.rules.fixed_point_bits}"
    )
    # "by-row": neighbours tied in distance are taken by row (.neighbours), not as a partition
    # happens to order them, so runs stored before that are not mixed with these.
    knn = f"{name}/k{settings.rules.knn_neighbours}/by-row"
    return knn if algorithm == "knn-graph" else name


def _algorithm(count: int, settings: SchemaSettings) -> str:
    """ "exact" or "knn-graph" for ``count`` thoughts (the settings' choice, or by size)."""
    algorithm = settings.rules.algorithm
    if algorithm == "auto":
        return "exact" if count <= settings.rules.exact_max_thoughts else "knn-graph"
    return algorithm


def eligible(texts: Sequence[str], settings: SchemaSettings) -> np.ndarray:
    """Which thoughts may join a schema: at least ``min_words`` words, of which at least
    ``min_content_words`` could say what the thought is about (:mod:`.substance`)."""
    rules = settings.rules
    judged = []
    for text in texts:
        content = len(content_words(text))
        # Content words are distinct words of the text: as many of them are as many words, so
        # the text is split again only when they are too few to tell (5% of a re-clustering).
        judged.append(
            content >= rules.min_content_words
            and (content >= rules.min_words or len(words(text)) >= rules.min_words)
        )
    return np.array(judged, dtype=bool)


def cluster_labels(
    vectors: np.ndarray,
    settings: SchemaSettings,
    texts: Sequence[str] | None = None,
    memo: ChainMemo | None = None,
) -> np.ndarray:
    """One label per row (``-1`` for noise), clusters numbered in order of their first row.

    With ``texts`` (one per row), thoughts too slight to carry a concern (:func:`eligible`) stay
    noise and take no part, and a cluster whose core shares no content word is dropped
    (:func:`_worded`). ``memo`` carries the knn graph's neighbours and which thoughts were
    eligible from the clustering of a prefix of these to this one (the same labels, found
    faster: :class:`ChainMemo`).
    """
    count = len(vectors)
    labels = np.full(count, NOISE, dtype=np.int64)
    rows = np.arange(count) if texts is None else np.flatnonzero(_eligible(texts, settings, memo))
    if len(rows) > settings.rules.min_cluster_size:
        kept = [texts[int(row)] for row in rows] if texts is not None else None
        points = np.ascontiguousarray(vectors[rows], dtype=np.float32)
        labels[rows] = _clustered_once(points, kept, settings, memo)
    return _renumber(labels)


def _clustered_once(
    points: np.ndarray,
    texts: Sequence[str] | None,
    settings: SchemaSettings,
    memo: ChainMemo | None,
) -> np.ndarray:
    """:func:`_clustered`, or the memo's last labels when it clustered these very points.

    Why: between two of a speaker's fixed points, often no new thought is eligible (chat is
    full of "ok" and "thanks"), and the points clustered are the last point's again: an eighth
    of a real channel's clusterings. The fingerprint covers the points' bits, their texts and
    the method (every rule it names), so the labels are what clustering them again would give.
    """
    if memo is None:
        return _clustered(points, texts, settings, memo)
    fingerprint = hashlib.blake2b(points.tobytes(), digest_size=16)
    fingerprint.update(method_for(len(points), settings).encode())
    for text in texts or ():  # each with its length: no separator a text may hold
        encoded = text.encode()
        fingerprint.update(len(encoded).to_bytes(8, "little") + encoded)
    key = fingerprint.digest()
    if memo.clustered is not None and memo.clustered[0] == key:
        return memo.clustered[1].copy()
    labels = _clustered(points, texts, settings, memo)
    memo.clustered = (key, labels.copy())
    return labels


def _eligible(texts: Sequence[str], settings: SchemaSettings, memo: ChainMemo | None) -> np.ndarray:
    """:func:`eligible`, judging only the texts past those the memo judged (a prefix of these)."""
    if memo is None:
        return eligible(texts, settings)
    said = tuple(texts)
    known = len(memo.texts)
    if known <= len(said) and said[:known] == memo.texts:
        judged = np.concatenate([memo.eligible, eligible(said[known:], settings)])
    else:
        judged = eligible(said, settings)
    memo.texts, memo.eligible = said, judged
    return judged


def _clustered(
    points: np.ndarray,
    texts: Sequence[str] | None,
    settings: SchemaSettings,
    memo: ChainMemo | None,
) -> np.ndarray:
    size = settings.rules.min_cluster_size
    floor = settings.rules.min_cohesion
    condensed = _condensed(points, settings, memo)
    # A concern closes ``concern_margin`` of the gap between the speaker's mean similarity and 1.
    background = cohesion(points)
    gap = settings.rules.concern_margin * (1.0 - background)
    floors = (max(floor, background + LOOSE * gap), max(floor, background + gap))
    selected = _split(points, _select(condensed, single=False), settings, floors)
    labels = _cohesive(points, selected, floor, floor, size)
    if labels.max(initial=NOISE) == NOISE:
        lone = _select(condensed, single=True)
        labels = _cohesive(points, lone, floor, settings.rules.join_similarity, size)
    if texts is not None:
        labels = _worded(labels, texts)
    return _joined(points, labels, settings.rules.join_similarity)


def _condensed(
    points: np.ndarray, settings: SchemaSettings, memo: ChainMemo | None = None
) -> np.ndarray:
    """HDBSCAN's condensed cluster tree of ``points`` (exact or knn-graph by their number)."""
    count = len(points)
    min_samples = min(count - 1, settings.rules.min_samples)
    if _algorithm(count, settings) == "exact":
        edges = _exact_tree(points, min_samples)
    else:
        edges = _knn_graph_tree(points, min_samples, settings.rules.knn_neighbours, memo)
    edges = edges[np.argsort(edges[:, 2])]  # hdbscan's own sort: tied weights ordered alike
    single_linkage = hdbscan_core.linkage().label(edges)
    return hdbscan_core.tree().condense_tree(single_linkage, settings.rules.min_cluster_size)


def _split(
    points: np.ndarray,
    labels: np.ndarray,
    settings: SchemaSettings,
    floors: tuple[float, float],
) -> np.ndarray:
    """Selected clusters whose cohesion is under ``floors[1]``, clustered again on their own.

    A cluster at least ``floors[0]`` alike stays whole unless its parts hold ``SPLIT_SHARE`` of
    its members: what HDBSCAN finds inside one loosely worded concern is crumbs, and the rest is
    noise. Under ``floors[0]`` the cluster is hardly more alike than the speaker's talk in general
    (a catch-all of 583 thoughts at 0.20 against 0.19), so it is split whatever the parts hold.

    Excess of mass never selects the root of the tree it is given, so each pass returns parts
    strictly smaller than the mixture (or noise), and the recursion ends. Parts are numbered
    after the existing clusters; :func:`cluster_labels` renumbers at the end.
    """
    out = labels.copy()
    following = int(labels.max(initial=NOISE)) + 1
    for cluster in range(int(labels.max(initial=NOISE)) + 1):
        members = np.flatnonzero(labels == cluster)
        if len(members) <= settings.rules.min_cluster_size:
            continue
        mixed = np.ascontiguousarray(points[members])
        alike = cohesion(mixed)
        if alike >= floors[1]:
            continue
        parts = _split(mixed, _select(_condensed(mixed, settings), single=False), settings, floors)
        if alike >= floors[0] and np.count_nonzero(parts != NOISE) < SPLIT_SHARE * len(members):
            continue
        out[members] = NOISE
        for part in range(int(parts.max(initial=NOISE)) + 1):
            out[members[parts == part]] = following
            following += 1
    return out


def _worded(labels: np.ndarray, texts: Sequence[str]) -> np.ndarray:
    """Clusters whose members share a content word (two members at least); the rest is noise.

    Why: a person who keeps coming back to something keeps using some of its words ("charged
    twice", "billed twice"; "テスト"), while the densest handful of unrelated remarks can be as
    similar by meaning alone (a cat, a parking spot and an umbrella: 0.31 with MiniLM, above
    the core of a real concern at 0.26). Judged on HDBSCAN's core, before any thought joins.
    """
    kept = labels.copy()
    for cluster in np.unique(labels[labels != NOISE]):
        members = np.flatnonzero(labels == cluster)
        seen: set[str] = set()
        shared = False
        for row in members:
            content = content_words(texts[int(row)])
            if content & seen:
                shared = True
                break
            seen |= content
        if not shared:
            kept[members] = NOISE
    return kept


def _select(condensed: np.ndarray, single: bool) -> np.ndarray:
    """Excess-of-mass selection; ``single`` lets the whole tree's core count as one cluster."""
    tree = hdbscan_core.tree()
    labels, _, _ = tree.get_clusters(
        condensed,
        tree.compute_stability(condensed),
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
    similarity reaches ``cluster_floor`` (``min_cohesion``, 0.2: one concern said in varied words
    sits at 0.2–0.4, unrelated lines at about 0.1).

    The lone-cluster pass is stricter (``cluster_floor`` = ``join_similarity``): one cluster is
    asked for only when nothing else formed (allowing a single cluster everywhere merged every
    topic of a several-topic speaker into one), and it is the pass where the densest handful of
    unrelated lines could pose as a concern.
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


def _joined(points: np.ndarray, labels: np.ndarray, floor: float) -> np.ndarray:
    """A noise thought joins the one cluster whose members' mean similarity to it reaches ``floor``.

    Judged against the members HDBSCAN chose (one pass, so the order of thoughts cannot matter).
    Why: on a few dozen thoughts HDBSCAN keeps only the densest core of a concern and calls its
    border noise; in the labelled chats half of a concern's messages were such border, each as
    close to the core as the core's own members. A thought that reaches two clusters or more is
    near the speaker's usual register, not the border of one concern, and stays noise: a speaker
    with thirty schemas otherwise had nearly every line joined to one.
    """
    clusters = np.unique(labels[labels != NOISE])
    noise = np.flatnonzero(labels == NOISE)
    if len(clusters) == 0 or len(noise) == 0:
        return labels
    totals = np.vstack(
        [points[labels == cluster].astype(np.float64).sum(axis=0) for cluster in clusters]
    )
    sizes = np.array([np.count_nonzero(labels == cluster) for cluster in clusters])
    mean_similarity = (points[noise].astype(np.float64) @ totals.T) / sizes
    closest = mean_similarity.argmax(axis=1)
    reached = np.count_nonzero(mean_similarity >= floor, axis=1) == 1
    joined = labels.copy()
    joined[noise[reached]] = clusters[closest[reached]]
    return joined


def _renumber(labels: np.ndarray) -> np.ndarray:
    """Clusters numbered by their earliest member, so the numbering says nothing arbitrary."""
    out = np.full(len(labels), NOISE, dtype=np.int64)
    order = [int(c) for c in dict.fromkeys(labels.tolist()) if c != NOISE]
    for new, old in enumerate(order):
        out[labels == old] = new
    return out


def _to_distances(block: np.ndarray) -> None:
    """Dot products of unit vectors to Euclidean distances, in place (float32)."""
    # |a − b|² = 2 − 2·a·b for unit vectors; clipped because rounding can make it slightly < 0.
    np.multiply(block, -2.0, out=block)
    block += 2.0
    np.maximum(block, 0.0, out=block)
    np.sqrt(block, out=block)


def _exact_tree(points: np.ndarray, min_samples: int) -> np.ndarray:
    """Prim's minimum spanning tree of the mutual-reachability graph, on a dense float32 matrix."""
    count = len(points)
    distance = np.empty((count, count), dtype=np.float32)
    # One product of the points with themselves: numpy hands ``a @ a.T`` to the BLAS as a
    # symmetric product (half the work of the row blocks it was, and symmetric to the bit).
    np.matmul(points, points.T, out=distance)
    core = np.empty(count, dtype=np.float32)
    for start in range(0, count, ROW_BLOCK):
        block = distance[start : start + ROW_BLOCK]
        _to_distances(block)
        block[np.arange(len(block)), np.arange(start, start + len(block))] = 0.0
        core[start : start + len(block)] = _kth_smallest(block, min_samples)
    if count <= COMPILED_PRIM:
        return _compiled_prim(distance, core)
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


def _compiled_prim(distance: np.ndarray, core: np.ndarray) -> np.ndarray:
    """The same tree as the row-at-a-time loop, by hdbscan's compiled Prim on the whole
    mutual-reachability matrix (float64, so kept to :data:`COMPILED_PRIM` points).

    Why: most speakers of a real channel have a few dozen thoughts, and the loop's numpy calls
    per step cost more than the step: a channel's first re-clustering spent a tenth of its
    time there. Both start at row 0, take the first of tied rows and replace a row's best edge
    only by a strictly shorter one, on the same float32 values, so the edges are the same."""
    reach = np.maximum(distance, core[:, None])
    np.maximum(reach, core[None, :], out=reach)
    return np.asarray(hdbscan_core.linkage().mst_linkage_core(reach.astype(np.float64)))


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


def _knn_graph_tree(
    points: np.ndarray, min_samples: int, neighbours: int, memo: ChainMemo | None = None
) -> np.ndarray:
    """Spanning tree of mutual reachability restricted to each point's k nearest neighbours."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components, minimum_spanning_tree

    count = len(points)
    k = min(count - 1, max(neighbours, min_samples))
    found = nearest_neighbours(points, k, memo.neighbours if memo else None)
    if memo is not None:
        memo.neighbours = found
    nearest, distance = found.nearest, found.distance
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
