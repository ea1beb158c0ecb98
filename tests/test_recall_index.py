"""The recall index: exact while small, cells fitted on the first rows once large, and causal."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awai_engine.settings import RecallIndexSettings
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef, Thought
from bots.runtime import Runtime
from tests.test_invariant import SENTENCES, build

CHANNELS = itertools.count()
SMALL_INDEX = {"exact_rows": 16, "cells": 4, "probes": 2}


def random_timeline(rows: int, index: RecallIndexSettings, seed: int = 1) -> Timeline:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(rows, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    timeline = Timeline(dimension=8, index=index)
    for position, vector in enumerate(vectors):
        ref = MessageRef(
            message_id=f"m{position}",
            speaker_id="a",
            speaker_name="A",
            ts=position,
            position=position,
        )
        timeline.append(ref, "t", "t", (Thought(index=0, text="t"),), vector[None, :])
    return timeline


def test_small_prefixes_are_searched_exactly() -> None:
    timeline = random_timeline(100, RecallIndexSettings(**SMALL_INDEX))
    query = timeline.vectors[50:51]
    rows, similarity = timeline.search(query, 10)
    assert rows.tolist() == list(range(10))
    np.testing.assert_allclose(similarity[:, 0], timeline.vectors[:10] @ query[0], rtol=1e-6)


def test_large_prefixes_search_the_exact_rows_and_the_nearest_cells_only_before_the_message() -> (
    None
):
    timeline = random_timeline(400, RecallIndexSettings(**SMALL_INDEX))
    query = timeline.vectors[399:400]
    rows, similarity = timeline.search(query, 300)
    assert rows.max() < 300
    assert set(range(16)) <= set(rows.tolist())
    assert 16 < len(rows) < 300  # only some cells were scanned
    assert np.all(np.diff(rows) > 0)
    np.testing.assert_allclose(similarity[:, 0], timeline.vectors[rows] @ query[0], rtol=1e-5)


def test_a_query_always_scans_its_own_cell() -> None:
    timeline = random_timeline(400, RecallIndexSettings(**SMALL_INDEX))
    for row in (20, 150, 398):
        rows, _ = timeline.search(timeline.vectors[row : row + 1], 399)
        assert row in rows


def test_appending_later_rows_never_changes_the_search_of_an_earlier_prefix() -> None:
    index = RecallIndexSettings(**SMALL_INDEX)
    short, long = random_timeline(150, index), random_timeline(600, index)
    query = long.vectors[500:502]
    for end in (10, 16, 17, 90, 150):
        rows_short, sims_short = short.search(query, end)
        rows_long, sims_long = long.search(query, end)
        np.testing.assert_array_equal(rows_short, rows_long)
        np.testing.assert_array_equal(sims_short, sims_long)


@pytest.fixture
def indexed_stores(make_runtime: Callable[..., Runtime]) -> tuple[Runtime, Runtime]:
    """Stores whose recall goes through the cells after only 16 rows."""
    return make_runtime("full", recall_index=SMALL_INDEX), make_runtime(
        "prefix", recall_index=SMALL_INDEX
    )


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    spec=st.lists(
        st.tuples(st.sampled_from(SENTENCES), st.sampled_from(["ann", "bo"]), st.booleans()),
        min_size=20,
        max_size=40,
    ),
    data=st.data(),
)
def test_the_invariant_holds_when_readings_go_through_the_cells(
    indexed_stores: tuple[Runtime, Runtime], spec: list[tuple[str, str, bool]], data: st.DataObject
) -> None:
    full, prefix = indexed_stores
    channel = f"terminal:local:indexed{next(CHANNELS)}"
    messages = build(spec, channel)
    i = data.draw(st.integers(12, len(messages) - 2), label="message read")
    target = messages[i].message_id
    full.engine.ingest(messages[: i + 1])
    before = full.engine.context(channel, target)
    full.engine.ingest(messages[i + 1 :])
    prefix.engine.ingest(messages[: i + 1])
    assert full.engine.context(channel, target) == before
    assert prefix.engine.context(channel, target) == before
