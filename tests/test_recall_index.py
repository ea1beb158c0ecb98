"""The recall index: exact while small, cells fitted on the first rows once large, and causal."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awai_engine.recall_index import RecallIndexRules, RecallIndexSettings
from awai_engine.timeline import MessageColumns, Timeline
from awai_engine.values import MessageRef, Thought
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.test_invariant import SENTENCES, build

CHANNELS = itertools.count()
SMALL_INDEX = {"exact_rows": 16, "cells": 4, "split": 2, "probes": 2, "occurrence_probes": 1}


def small_index(**changes: int) -> RecallIndexSettings:
    """An index that goes through the cells after only 16 rows."""
    return RecallIndexSettings(rules=RecallIndexRules(**{**SMALL_INDEX, **changes}))


def unit_vectors(rows: int, seed: int = 1) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(rows, 8)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def timeline_of(vectors: np.ndarray, index: RecallIndexSettings, per_message: int = 1) -> Timeline:
    """A timeline holding ``vectors`` in order, ``per_message`` thoughts to a message."""
    timeline = Timeline(dimension=vectors.shape[1], index=index)
    for position, start in enumerate(range(0, len(vectors), per_message)):
        chunk = vectors[start : start + per_message]
        ref = MessageRef(
            message_id=f"m{position}",
            speaker_id="a",
            speaker_name="A",
            ts=position,
            position=position,
        )
        thoughts = tuple(Thought(index=i, text="t") for i in range(len(chunk)))
        timeline.append(ref, "t", "t", thoughts, chunk)
    return timeline


def random_timeline(rows: int, index: RecallIndexSettings, seed: int = 1) -> Timeline:
    return timeline_of(unit_vectors(rows, seed), index)


def test_small_prefixes_are_searched_exactly() -> None:
    timeline = random_timeline(100, small_index())
    rows, similarity = timeline.search(np.array([50]), 10)
    assert rows.tolist() == list(range(10))
    np.testing.assert_allclose(similarity[:, 0], timeline.vectors[:10] @ timeline.vectors[50])


def test_large_prefixes_search_the_recent_rows_and_a_few_cells_only_before_the_message() -> None:
    timeline = random_timeline(400, small_index(recent_rows=20))
    rows, similarity = timeline.search(np.array([399]), 300)
    assert rows.max() < 300
    assert set(range(280, 300)) <= set(rows.tolist())  # the recent rows, exactly
    assert 20 < len(rows) < 100  # and a few cells of the older rows
    assert np.all(np.diff(rows) > 0)
    np.testing.assert_allclose(
        similarity[:, 0], timeline.vectors[rows] @ timeline.vectors[399], rtol=1e-5, atol=1e-6
    )


def test_cells_get_finer_as_the_channel_grows_each_level_fitted_on_rows_before_it() -> None:
    timeline = random_timeline(600, small_index())
    levels = timeline._cells.levels
    assert [level.fitted_rows for level in levels] == [16, 32, 64, 128, 256, 512]
    for depth, level in enumerate(levels):
        assert len(level.centroids) <= 4 * 2**depth
        assert level.cell_sizes.sum() == 600  # every row filed once at every level
    assert levels[-1].cell_sizes.mean() < 600 / 64


def test_a_query_always_scans_its_own_cell() -> None:
    timeline = random_timeline(400, small_index(recent_rows=0))
    for row in (5, 20, 150, 398):
        for probes in (0, 1):
            rows, _ = timeline.search(np.array([row]), 399, probes=probes)
            assert row in rows


def test_zero_probes_scan_only_the_own_cells_of_the_queries() -> None:
    timeline = random_timeline(400, small_index(recent_rows=0))
    rows, _ = timeline.search(np.array([150, 398]), 399, probes=0)
    deepest = len(timeline._cells.levels) - 1
    own = set(timeline._cells.row_cells[[150, 398], deepest].tolist())
    assert {int(timeline._cells.row_cells[row, deepest]) for row in rows} == own


def test_a_far_back_repeat_is_found_through_the_cells() -> None:
    vectors = unit_vectors(600)
    vectors[590] = vectors[7]
    timeline = timeline_of(vectors, small_index(recent_rows=8))
    rows, similarity = timeline.search(np.array([590]), 590, probes=1)
    assert len(rows) < 100
    assert similarity[rows.tolist().index(7), 0] == pytest.approx(1.0)


def test_a_rows_cell_does_not_depend_on_the_rows_appended_with_it() -> None:
    vectors = unit_vectors(300)
    index = small_index()
    one, three = timeline_of(vectors, index, 1), timeline_of(vectors, index, 3)
    np.testing.assert_array_equal(one._cells.row_cells[:300], three._cells.row_cells[:300])
    for end in (99, 150, 297):
        np.testing.assert_array_equal(
            one.search(np.array([10, 200]), end)[0], three.search(np.array([10, 200]), end)[0]
        )


def test_appending_later_rows_never_changes_the_search_of_an_earlier_prefix() -> None:
    index = small_index(recent_rows=8)
    short, long = random_timeline(150, index), random_timeline(600, index)
    query = np.array([100, 140])
    for end in (10, 16, 17, 30, 32, 33, 64, 65, 90, 128, 129, 150):
        for probes in (None, 1):
            rows_short, sims_short = short.search(query, end, probes)
            rows_long, sims_long = long.search(query, end, probes)
            np.testing.assert_array_equal(rows_short, rows_long)
            np.testing.assert_array_equal(sims_short, sims_long)


@pytest.fixture
def indexed_stores(make_runtime: Callable[..., Runtime]) -> tuple[Runtime, Runtime]:
    """Stores whose recall goes through the cells after only 16 rows."""
    return make_runtime("full", recall_index=small_index()), make_runtime(
        "prefix", recall_index=small_index()
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
@pytest.mark.slow
def test_the_invariant_holds_when_readings_go_through_the_cells(
    indexed_stores: tuple[Runtime, Runtime], spec: list[tuple[str, str, bool]], data: st.DataObject
) -> None:
    full, prefix = indexed_stores
    channel = f"terminal:local:indexed{next(CHANNELS)}"
    messages = build(spec, channel)
    i = data.draw(st.integers(12, len(messages) - 2), label="message read")
    target = messages[i].message_id
    full.engine.ingest(messages[: i + 1])
    before = full.engine.context(channel, target, EVERYTHING)
    full.engine.ingest(messages[i + 1 :])
    prefix.engine.ingest(messages[: i + 1])
    assert full.engine.context(channel, target, EVERYTHING) == before
    assert prefix.engine.context(channel, target, EVERYTHING) == before


WORDS = (
    "disk",
    "staging",
    "deploy",
    "failed",
    "cache",
    "ok",
    "ディスク",
    "再起動",
    "login",
    "again",
)


def timeline_state(timeline: Timeline) -> dict[str, object]:
    """Everything a timeline holds that a reading reads: messages, rows, speakers, threads, its
    cells (fits, each row's cells, each cell's rows in filing order) and its word index."""
    cells, words = timeline.cells, timeline.lexicon.state()
    return {
        "messages": [
            (m.ref, m.text, m.summary, m.thoughts, m.first_row, m.addressees)
            for m in timeline.messages
        ],
        "vectors": timeline.vectors.tobytes(),
        "rows": (timeline.row_positions.tolist(), timeline.row_thought.tolist()),
        "speakers": (timeline.speaker_codes.tolist(), timeline.speakers_seen()),
        "lines": (timeline.threads, timeline.top_level, timeline.position_of),
        "levels": [
            (
                level.fitted_rows,
                level.centroids.tobytes(),
                None if level.child_start is None else level.child_start.tolist(),
                [
                    level.cell_rows[c][: level.cell_sizes[c]].tolist()
                    for c in range(len(level.centroids))
                ],
            )
            for level in cells.levels
        ],
        "row_cells": (cells.filed, cells.row_cells[: cells.filed].tolist()),
        "words": (
            words.terms,
            sorted(
                zip(
                    words.term_ids.tolist(),
                    words.positions.tolist(),
                    words.counts.tolist(),
                    strict=True,
                )
            ),
            words.lengths.tolist(),
        ),
    }


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.integers(1, 3),  # thoughts
            st.lists(st.sampled_from(WORDS), max_size=6),  # words of the text
            st.integers(0, 3),  # speaker
            st.integers(0, 2),  # 0: top level, else a reply in thread 1 or 2
        ),
        max_size=60,
    ),
    st.integers(0, 1000),
)
def test_a_timeline_built_at_once_equals_the_one_appending_each_message_builds(
    messages: list[tuple[int, list[str], int, int]], seed: int
) -> None:
    """A channel rebuilt whole takes every message at once (``Timeline.built``): its cells are
    fitted at the same row counts and file every row alike, its word index counts the same
    terms, and a reading searches it the same."""
    index = small_index()
    vectors = unit_vectors(sum(count for count, *_ in messages), seed)
    appended = Timeline(dimension=vectors.shape[1], index=index)
    first_rows, at = [], 0
    for position, (count, words, speaker, thread) in enumerate(messages):
        ref = MessageRef(
            message_id=f"m{position}",
            speaker_id=f"s{speaker}",
            speaker_name=f"Speaker {speaker}",
            ts=float(position),
            position=position,
            thread_root=f"m{thread - 1}" if thread and position >= thread else None,
        )
        thoughts = tuple(Thought(index=i, text=f"t{position}.{i}") for i in range(count))
        addressees = (f"Speaker {(speaker + 1) % 4}",) if position % 3 == 0 else ()
        appended.append(ref, " ".join(words), "", thoughts, vectors[at : at + count], addressees)
        first_rows.append(at)
        at += count
    columns = MessageColumns(
        message_ids=[m.message_id for m in appended.messages],
        speaker_ids=[m.ref.speaker_id for m in appended.messages],
        speaker_names=[m.ref.speaker_name for m in appended.messages],
        ts=np.array([m.ref.ts for m in appended.messages], dtype=np.float64),
        thread_roots=[m.ref.thread_root for m in appended.messages],
        scopes=[m.ref.scope for m in appended.messages],
        texts=[m.text for m in appended.messages],
        summaries=[m.summary for m in appended.messages],
        addressees=[list(m.addressees) for m in appended.messages],
        thought_texts=[[t.text for t in m.thoughts] for m in appended.messages],
        thought_indexes=[[t.index for t in m.thoughts] for m in appended.messages],
        fallbacks=[False for _ in appended.messages],
        first_rows=np.array(first_rows, dtype=np.int64),
    )
    built = Timeline.built(appended.revision, index, columns, vectors.copy())
    assert timeline_state(built) == timeline_state(appended)
    for end in range(1, len(vectors), 7):
        for ours, theirs in zip(
            built.search(np.array([end]), end), appended.search(np.array([end]), end), strict=True
        ):
            np.testing.assert_array_equal(ours, theirs)
    for query in ("disk failed again", "再起動 ok"):
        assert built.lexicon.matches(query, len(messages), 5) == appended.lexicon.matches(
            query, len(messages), 5
        )
