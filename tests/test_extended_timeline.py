"""A timeline extended by many messages at once equals the one appending each of them builds.

``Timeline.extend`` is how a catch-up takes in many rows (:mod:`storage.read_model`): whatever
the timeline held before (built at once, loaded from its file, appended one by one, extended
already), its messages, rows, speakers, lines, cells and word index end as appending each
message makes them, and readings search it alike. What it takes in it holds as columns.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from awai_engine.column_runs import Runs
from awai_engine.timeline import Timeline
from storage import read_model_files
from storage.read_model_files import ReadModelFiles, Snapshot
from tests.test_recall_index import small_index, timeline_state, unit_vectors
from tests.timeline_specs import (
    Spec,
    assert_same_searches,
    columns_of,
    first_row,
    message_specs,
)

CHANNEL = "terminal:local:test"


@pytest.fixture(autouse=True)
def every_part_mapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded timeline maps every part it uses as it is, as a large channel's file does."""
    monkeypatch.setattr(read_model_files, "MAPPED_FROM", 1)


def appended(timeline: Timeline, messages: list[Spec], vectors: np.ndarray, stop: int) -> None:
    """Append the messages from the timeline's end to ``stop`` one by one."""
    start = len(timeline.messages)
    columns = columns_of(messages, start, stop)
    for at in range(stop - start):
        message = columns.message(at)
        rows = first_row(messages, start + at)
        timeline.append(
            message.ref.model_copy(update={"position": start + at}),
            message.text,
            message.summary,
            message.thoughts,
            vectors[rows : rows + len(message.thoughts)],
            message.addressees,
        )


def extended(timeline: Timeline, messages: list[Spec], vectors: np.ndarray, stop: int) -> None:
    """Extend the timeline by the messages from its end to ``stop`` at once."""
    start = len(timeline.messages)
    timeline.extend(
        columns_of(messages, start, stop),
        vectors[first_row(messages, start) : first_row(messages, stop)],
    )


def made(how: str, messages: list[Spec], vectors: np.ndarray, count: int, folder: Path) -> Timeline:
    """A timeline of the first ``count`` messages: built at once, written to a file and loaded
    back from it (its vectors and columns mapped), or appended one by one."""
    if how == "appended":
        timeline = Timeline(dimension=vectors.shape[1], index=small_index())
        appended(timeline, messages, vectors, count)
        return timeline
    rows = first_row(messages, count)
    timeline = Timeline.built(
        3, small_index(), columns_of(messages, 0, count), vectors[:rows].copy()
    )
    if how == "built":
        return timeline
    files = ReadModelFiles(folder)
    assert files.save(CHANNEL, Snapshot(timeline, count, "f", 0), lambda *_: True, None)
    loaded = files.load(CHANNEL, small_index())
    assert loaded is not None
    return loaded.timeline


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    messages=message_specs(min_size=1, max_size=60),
    how=st.sampled_from(["built", "loaded", "appended"]),
    held=st.integers(0, 60),
    # then: extended by, or appended one by one, that many messages (the rest extended at last)
    steps=st.lists(st.tuples(st.booleans(), st.integers(1, 40)), max_size=4),
    seed=st.integers(0, 1000),
)
# The small index fits a level at 16, 32 and 64 rows: one extension takes 10 rows to 80.
@example(
    messages=[(2, ["disk", "ok"], p % 4, p % 3) for p in range(40)],
    how="loaded",
    held=5,
    steps=[],
    seed=1,
)
def test_a_timeline_extended_by_any_messages_equals_the_one_appending_each_builds(
    messages: list[Spec], how: str, held: int, steps: list[tuple[bool, int]], seed: int
) -> None:
    """Extended before or after a level's fit row count, by runs bringing new terms, after
    messages appended as objects or not: the same timeline as appending each, its messages
    all columns but those appended one by one since the last extension."""
    count = len(messages)
    held = max(held % (count + 1), 1 if how == "loaded" else 0)  # a file holds a message
    vectors = unit_vectors(first_row(messages, count), seed)
    reference = Timeline(dimension=vectors.shape[1], index=small_index())
    appended(reference, messages, vectors, count)
    with tempfile.TemporaryDirectory() as folder:
        timeline = made(how, messages, vectors, held, Path(folder))
        objects = held if how == "appended" else 0  # messages held as objects, not columns
        for extend, more in [*steps, (True, count)]:
            stop = min(count, len(timeline.messages) + more)
            if extend and stop > len(timeline.messages):
                extended(timeline, messages, vectors, stop)
                objects = 0
            elif not extend:
                objects += stop - len(timeline.messages)
                appended(timeline, messages, vectors, stop)
        assert timeline.messages.built == objects
        assert timeline.messages.restored == count - objects
        assert timeline_state(timeline) == timeline_state(reference)
        assert_same_searches(
            timeline,
            reference,
            ("disk failed again", f"w{held} w{count - 1}", "再起動 ok"),
            (count // 2, count),
        )


def test_a_timeline_extended_by_no_messages_is_unchanged_and_wrong_rows_are_refused() -> None:
    messages: list[Spec] = [(2, ["disk"], 0, 0), (1, ["ok"], 1, 1), (3, [], 2, 0)]
    vectors = unit_vectors(6)
    timeline = Timeline.built(3, small_index(), columns_of(messages, 0, 2), vectors[:3].copy())
    before = timeline_state(timeline)
    extended(timeline, messages, vectors, 2)
    assert timeline_state(timeline) == before
    with pytest.raises(ValueError, match="one vector per thought"):
        timeline.extend(columns_of(messages, 2, 3), vectors[3:5])  # a thought short
    assert timeline_state(timeline) == before


def test_runs_read_their_parts_as_one_column() -> None:
    runs = Runs([["a", "b"], [], Runs([["c"], ["d", "e", "f"]])])
    assert len(runs) == 6 and list(runs) == ["a", "b", "c", "d", "e", "f"]
    assert runs[-1] == "f" and runs[2] == "c"
    assert runs[1:5] == ["b", "c", "d", "e"] and runs[4:2] == [] and runs[::2] == ["a", "c", "e"]
    assert runs.gather(np.array([5, 0, 3, 2])) == ["f", "a", "d", "c"]
    with pytest.raises(IndexError):
        runs[6]
