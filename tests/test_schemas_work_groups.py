"""How a re-clustering hands its chains to workers, and what a chain's memo may skip.

A real channel has thousands of speakers who say a few messages each: their chains go to the
workers in groups (:func:`.chains.grouped`), and a point that adds no thought that may join a
schema reuses the last labels (:class:`.clustering.ChainMemo`). Neither may change a label."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from awai_engine.schemas import clustering
from awai_engine.schemas.basis import Basis, RowVectors
from awai_engine.schemas.chains import ChainWork, Point, grouped
from awai_engine.schemas.clustering import ChainMemo, cluster_labels
from awai_engine.schemas.settings import SchemaRules, SchemaSettings
from tests.schema_topics import topic_sentences


def _work(count: int) -> ChainWork:
    """A chain whose last point holds ``count`` thoughts (all grouping looks at)."""
    basis = Basis(
        channel="c",
        speaker_id="u",
        speaker_name="U",
        keys=(),
        texts=(),
        message_ids=(),
        positions=np.zeros(0, dtype=np.int64),
        rows=RowVectors(np.zeros((0, 3), dtype=np.float32)),
        digest="d",
    )
    return ChainWork(basis, (Point(count, "d", "U"),), None, None, SchemaSettings())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 700), max_size=60), st.integers(1, 600))
def test_chains_go_out_in_order_in_groups_that_close_once_they_hold_enough_thoughts(
    counts: list[int], thoughts: int
) -> None:
    chains = [(f"s{n}", _work(count)) for n, count in enumerate(counts)]
    groups = list(grouped(chains, thoughts))
    assert [item for group in groups for item in group] == chains  # each once, in order
    for number, group in enumerate(groups):
        held = [work.points[-1].count for _, work in group]
        assert group and sum(held[:-1]) < thoughts  # closed at the first chain that filled it
        if number < len(groups) - 1:
            assert sum(held) >= thoughts


def _thoughts(seed: int) -> tuple[np.ndarray, list[str]]:
    """Topical thoughts interleaved with chatter too slight to join a schema ("ok")."""
    rng = np.random.default_rng(seed)
    topics = ["battery", "food", "pricing"]
    centres = rng.normal(size=(len(topics) + 1, 384))  # the last: what chatter is near
    texts: list[str] = []
    near: list[int] = []
    for sentence, topic in topic_sentences(topics, 12, seed):
        slight = ["ok", "thanks!"][: int(rng.integers(0, 3))]
        texts += [sentence, *slight]
        near += [topics.index(topic)] + [len(topics)] * len(slight)
    vectors = (centres[near] + 0.5 * rng.normal(size=(len(near), 384))).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors, texts


@pytest.mark.parametrize("algorithm", ["exact", "knn-graph"])
def test_a_point_that_adds_only_slight_thoughts_reuses_the_labels_clustering_would_give(
    algorithm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors, texts = _thoughts(4)
    rules = SchemaSettings(rules=SchemaRules(algorithm=algorithm, min_samples=2))  # type: ignore[arg-type]
    clustered = 0
    clustering_itself = clustering._clustered

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal clustered
        clustered += 1
        return clustering_itself(*args, **kwargs)

    memo = ChainMemo()
    walked, fresh = [], []
    for count in range(6, len(texts) + 1):  # every prefix, as a chain's points extend
        monkeypatch.setattr(clustering, "_clustered", counting)
        walked.append(cluster_labels(vectors[:count], rules, texts[:count], memo))
        monkeypatch.undo()
        fresh.append(cluster_labels(vectors[:count], rules, texts[:count]))
    assert all(np.array_equal(a, b) for a, b in zip(walked, fresh, strict=True))
    slight = sum(not clustering.eligible([text], rules)[0] for text in texts[6:])
    assert slight > 0 and clustered <= len(walked) - slight  # each "ok" point reused labels


def test_other_points_of_the_same_count_are_clustered_again() -> None:
    """The labels are kept by what was clustered, not by how many: the memo of one set of
    points never labels another."""
    rng = np.random.default_rng(5)
    memo = ChainMemo()
    for _ in range(3):
        centres = rng.normal(size=(3, 384))
        vectors = (centres[rng.integers(0, 3, 40)] + 0.4 * rng.normal(size=(40, 384))).astype(
            np.float32
        )
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        assert np.array_equal(
            cluster_labels(vectors, SchemaSettings(), memo=memo),
            cluster_labels(vectors, SchemaSettings()),
        )
