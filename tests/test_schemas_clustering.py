"""Clustering a speaker's thoughts: the algorithm against the hdbscan package, and topics found."""

from __future__ import annotations

import hdbscan
import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from awai_engine.embedding import Embedder
from awai_engine.samples import SAMPLES
from awai_engine.schemas import clustering
from awai_engine.schemas.clustering import NOISE, cluster_labels, cohesion, method_for
from awai_engine.schemas.settings import SchemaRules, SchemaSettings
from bots.runtime import Runtime
from bots.terminal.transcript import read_transcript
from tests.schema_topics import (
    CHATTER,
    SAMPLE_ACCESSIBILITY,
    SAMPLE_BATTERY,
    said,
    topic_sentences,
)


def gaussian_topics(
    seed: int, topics: int = 6, per_topic: int = 40
) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors around random centres plus scattered noise."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(topics, 384))
    points = [centres[t] + 0.6 * rng.normal(size=(per_topic, 384)) for t in range(topics)]
    points.append(1.5 * rng.normal(size=(30, 384)))
    vectors = np.vstack(points)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    truth = np.repeat(np.arange(topics + 1), [per_topic] * topics + [30])
    return vectors.astype(np.float32), truth


def test_exact_algorithm_without_the_cohesion_floor_gives_the_labels_of_hdbscan_generic() -> None:
    for seed in range(3):
        vectors, _ = gaussian_topics(seed)
        plain = SchemaSettings(
            rules=SchemaRules(algorithm="exact", min_cohesion=-1, join_similarity=1.0)
        )
        ours = cluster_labels(vectors, plain)
        reference = hdbscan.HDBSCAN(
            min_cluster_size=3, min_samples=plain.rules.min_samples, algorithm="generic"
        ).fit_predict(vectors.astype(np.float64))
        assert adjusted_rand_score(reference, ours) == 1.0
        assert np.array_equal(ours == NOISE, reference == -1)


def test_the_compiled_spanning_tree_is_the_row_by_row_one_even_with_repeated_thoughts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Speakers repeat themselves ("ok", "thanks"): equal vectors tie distances, and the tree
    must take the same edge of a tie as the loop did, or a run's clusters could change."""
    rng = np.random.default_rng(11)
    cases = []
    for _ in range(300):
        count = int(rng.integers(4, 90))
        distinct = rng.normal(size=(max(2, count // int(rng.integers(1, 5))), 384))
        points = distinct[rng.integers(0, len(distinct), count)]
        points /= np.linalg.norm(points, axis=1, keepdims=True)
        cases.append((np.ascontiguousarray(points, dtype=np.float32), int(rng.integers(1, 4))))
    compiled = [clustering._exact_tree(points, min(k, len(points) - 1)) for points, k in cases]
    monkeypatch.setattr(clustering, "COMPILED_PRIM", 0)
    for (points, k), tree in zip(cases, compiled, strict=True):
        assert np.array_equal(tree, clustering._exact_tree(points, min(k, len(points) - 1)))


def test_knn_graph_algorithm_agrees_with_exact() -> None:
    vectors, _ = gaussian_topics(7, topics=8, per_topic=60)
    exact = cluster_labels(vectors, SchemaSettings(rules=SchemaRules(algorithm="exact")))
    approximate = cluster_labels(
        vectors, SchemaSettings(rules=SchemaRules(algorithm="knn-graph", knn_neighbours=8))
    )
    ari = adjusted_rand_score(exact, approximate)
    print(f"knn-graph vs exact on 510 synthetic vectors: ARI {ari:.3f}")
    assert ari >= 0.95


def test_auto_switches_to_knn_graph_above_the_exact_limit() -> None:
    settings = SchemaSettings(rules=SchemaRules(exact_max_thoughts=100))
    assert method_for(100, settings).startswith("hdbscan-exact")
    assert method_for(101, settings).startswith("hdbscan-knn-graph")


def test_a_loose_mass_hdbscan_selects_whole_becomes_its_topics_not_one_catch_all() -> None:
    """Five topics that share the speaker's register, as a long speaker's life topics do."""
    rng = np.random.default_rng(1)
    register = rng.normal(size=384)
    centres = rng.normal(size=(5, 384)) + register
    points = [centres[t] + 2.0 * rng.normal(size=(25, 384)) for t in range(5)]
    points.append(3 * rng.normal(size=384) + 0.2 * rng.normal(size=(4, 384)))  # one far group
    vectors = np.vstack(points)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    truth = np.repeat(np.arange(6), [25] * 5 + [4])
    settings = SchemaSettings()
    plain = hdbscan.HDBSCAN(
        min_cluster_size=settings.rules.min_cluster_size, min_samples=settings.rules.min_samples
    ).fit_predict(vectors.astype(np.float64))
    assert np.bincount(plain[plain >= 0]).max() == 125  # HDBSCAN alone: one mass of all five
    labels = cluster_labels(vectors.astype(np.float32), settings)
    assert np.bincount(labels[labels >= 0]).max() <= 25  # no catch-all
    assert adjusted_rand_score(truth, labels) >= 0.9


def test_a_mass_as_alike_as_everything_the_speaker_says_is_a_mixture_of_its_topics() -> None:
    """Five topics in a strong shared register: the mass is alike in absolute terms (above
    ``min_cohesion``), but no more alike than the speaker's thoughts in general."""
    rng = np.random.default_rng(1)
    register = rng.normal(size=384)
    centres = rng.normal(size=(5, 384)) + 1.4 * register
    points = [centres[t] + 1.6 * rng.normal(size=(25, 384)) for t in range(5)]
    points.append(3 * rng.normal(size=384) + 0.2 * rng.normal(size=(4, 384)))  # one far group
    vectors = np.vstack(points)
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    truth = np.repeat(np.arange(6), [25] * 5 + [4])
    settings = SchemaSettings()
    assert cohesion(vectors[:125]) > settings.rules.min_cohesion
    absolute = cluster_labels(
        vectors, settings.model_copy(update={"rules": SchemaRules(concern_margin=0.0)})
    )
    assert np.bincount(absolute[absolute >= 0]).max() == 125  # one catch-all of all five
    labels = cluster_labels(vectors, settings)
    assert adjusted_rand_score(truth, labels) >= 0.95


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


def test_a_thought_near_two_schemas_joins_neither_and_one_near_one_joins_it() -> None:
    rng = np.random.default_rng(0)
    first, other, away, elsewhere = _unit(rng.normal(size=(4, 384)))
    second = _unit(0.5 * first + np.sqrt(0.75) * other)  # two concerns of one register
    tight = [_unit(centre + 0.02 * rng.normal(size=(10, 384))) for centre in (first, second)]
    between = _unit(0.37 * _unit(first + second) + 0.93 * away)
    border = _unit(0.45 * first + 0.89 * elsewhere)
    vectors = np.vstack([*tight, between, border]).astype(np.float32)
    settings = SchemaSettings()
    core = cluster_labels(
        vectors, settings.model_copy(update={"rules": SchemaRules(join_similarity=1.0)})
    )
    assert core[20] == NOISE and core[21] == NOISE  # HDBSCAN leaves both out
    near_first = (vectors[:10] @ vectors[20:].T).mean(axis=0)
    near_second = (vectors[10:20] @ vectors[20:].T).mean(axis=0)
    assert min(near_first[0], near_second[0]) >= settings.rules.join_similarity  # reaches both
    assert (
        near_first[1] >= settings.rules.join_similarity > near_second[1]
    )  # reaches only the first
    labels = cluster_labels(vectors, settings)
    assert labels.max() + 1 == 2
    assert labels[20] == NOISE
    assert labels[21] == labels[0]


def test_clusters_of_topic_sentences_match_the_topics_and_chatter_stays_noise(
    embedder: Embedder,
) -> None:
    pairs = topic_sentences(["battery", "pricing", "accessibility", "food"], per_topic=12)
    texts = [text for text, _ in pairs] + CHATTER
    truth = np.array([topic for _, topic in pairs] + ["chatter"] * len(CHATTER))
    labels = cluster_labels(embedder.encode(texts), SchemaSettings(), texts)
    on_topic = truth != "chatter"
    ari = adjusted_rand_score(truth[on_topic], labels[on_topic])
    chatter_as_noise = float(np.mean(labels[~on_topic] == NOISE))
    print(f"synthetic topics: ARI {ari:.3f}, chatter left as noise {chatter_as_noise:.0%}")
    assert ari >= 0.9
    assert chatter_as_noise >= 0.75


def test_a_speaker_with_one_tight_preoccupation_gets_one_schema(embedder: Embedder) -> None:
    pairs = topic_sentences(["accessibility"], per_topic=8)
    texts = [text for text, _ in pairs] + CHATTER
    labels = cluster_labels(embedder.encode(texts), SchemaSettings(), texts)
    assert labels.max() == 0  # one schema
    assert np.mean(labels[: len(pairs)] == 0) >= 0.75
    assert np.all(labels[len(pairs) :] == NOISE)


def test_a_speaker_who_only_chats_gets_no_schema(embedder: Embedder) -> None:
    labels = cluster_labels(embedder.encode(CHATTER), SchemaSettings(), CHATTER)
    assert np.all(labels == NOISE)


@pytest.mark.slow
def test_the_sample_gives_carla_an_accessibility_schema_and_dev_a_battery_one(
    runtime: Runtime,
) -> None:
    sample = SAMPLES["en"]
    transcript = read_transcript(sample.path, sample.channel, 10**9)
    runtime.engine.ingest(transcript.utterances)
    runtime.schemas.recluster(transcript.channel)
    by_speaker = {item.speaker_id: item for item in runtime.schemas.schemas(transcript.channel)}
    versions = runtime.store.schemas.versions(transcript.channel)
    members = {(v.schema_id, v.version): set(v.members) for v in versions}

    def best_schema(speaker: str, topic: set[str]) -> set[str]:
        found = [members[(s.schema_id, s.version)] for s in by_speaker[speaker].schemas]
        return max(found, key=lambda keys: len(keys & topic), default=set())

    for speaker, topic in (("Carla", SAMPLE_ACCESSIBILITY), ("Dev", SAMPLE_BATTERY)):
        best = best_schema(speaker, topic)
        assert len(best & topic) >= 0.6 * len(topic)  # most of the topic in one schema
        assert len(best & topic) >= 0.7 * len(best)  # and that schema mostly the topic
    # ARI over Carla's and Dev's thoughts: topic (or other) against schema (or noise).
    truth, predicted = [], []
    for speaker, topic in (("Carla", SAMPLE_ACCESSIBILITY), ("Dev", SAMPLE_BATTERY)):
        schema_of = {
            key: f"{speaker}:{s.schema_id}"
            for s in by_speaker[speaker].schemas
            for key in members[(s.schema_id, s.version)]
        }
        timeline = runtime.store.timeline(transcript.channel)
        for message in timeline.messages:
            if message.ref.speaker_id == speaker:
                for thought in message.thoughts:
                    key = f"{message.message_id}#{thought.index}"
                    truth.append(f"{speaker}:topic" if key in topic else "other")
                    predicted.append(schema_of.get(key, "noise"))
    print(
        f"sample (Carla accessibility, Dev battery): ARI {adjusted_rand_score(truth, predicted):.3f}"
    )


def test_schemas_are_per_speaker_and_per_channel(runtime: Runtime) -> None:
    pairs = topic_sentences(["battery"], per_topic=8)
    texts = [text for text, _ in pairs]
    runtime.engine.ingest(
        said("terminal:local:one", "ann", texts, 1) + said("terminal:local:two", "ann", texts, 1)
    )
    runtime.engine.ingest(said("terminal:local:one", "bob", CHATTER, 100))
    for channel in ("terminal:local:one", "terminal:local:two"):
        runtime.schemas.recluster(channel)
    one = {item.speaker_id: item for item in runtime.schemas.schemas("terminal:local:one")}
    two = runtime.schemas.schemas("terminal:local:two")
    assert len(one["ann"].schemas) == 1 and not one["bob"].schemas
    assert [item.speaker_id for item in two] == ["ann"]
    # Same thoughts, another channel: its own schema, nothing shared.
    assert two[0].schemas[0].schema_id != one["ann"].schemas[0].schema_id
