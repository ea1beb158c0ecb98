"""Stable schema ids, versions that are never overwritten, and recall before a message."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from awai_engine.schemas.identity import inherited, jaccard, new_schema_id
from awai_engine.schemas.model import SchemaState
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.factories import schema_state
from tests.schema_topics import CHATTER, said, topic_sentences

CHANNEL = "terminal:local:versions"


def state(schema_id: str, members: list[str], version: int = 1) -> SchemaState:
    return schema_state(schema_id, members, version)


def texts(topic: str, count: int, seed: int = 0) -> list[str]:
    return [text for text, _ in topic_sentences([topic], count, seed)]


def test_a_cluster_inherits_the_id_it_overlaps_by_half_or_more() -> None:
    old = [state("sA", ["a", "b", "c", "d"]), state("sB", ["x", "y", "z"])]
    grown = frozenset({"a", "b", "c", "d", "e"})  # Jaccard 0.8 with sA
    drifted = frozenset({"z", "p", "q", "r"})  # Jaccard 1/6 with sB
    heirs = inherited([grown, drifted], old)
    assert heirs[0] is not None and heirs[0].schema_id == "sA"
    assert heirs[1] is None
    assert jaccard(grown, frozenset(old[0].members)) == 0.8


def test_an_old_id_passes_to_the_cluster_overlapping_it_most_and_only_to_one() -> None:
    old = [state("sA", ["a", "b", "c", "d", "e", "f"])]
    larger = frozenset({"a", "b", "c", "d"})  # Jaccard 4/6
    smaller = frozenset({"e", "f", "g"})  # Jaccard 2/7: below one half anyway
    equal_half = frozenset({"a", "b", "c"})  # Jaccard 3/6
    heirs = inherited([smaller, equal_half, larger], old)
    assert [heir.schema_id if heir else None for heir in heirs] == [None, None, "sA"]


def all_pairs(
    clusters: list[frozenset[str]], previous: list[SchemaState]
) -> list[SchemaState | None]:
    """Spec §4 as written: every cluster against every state, greedily from the highest overlap."""
    pairs = sorted(
        (-jaccard(cluster, frozenset(old.members)), index, old.schema_id, old)
        for index, cluster in enumerate(clusters)
        for old in previous
        if jaccard(cluster, frozenset(old.members)) >= 0.5
    )
    chosen: list[SchemaState | None] = [None] * len(clusters)
    for _, index, schema_id, old in pairs:
        if chosen[index] is None and schema_id not in {c.schema_id for c in chosen if c}:
            chosen[index] = old
    return chosen


@given(
    old=st.lists(st.sets(st.integers(0, 30), min_size=1, max_size=8), max_size=8),
    new=st.lists(st.sets(st.integers(0, 30), min_size=1, max_size=8), max_size=8),
)
def test_ids_pass_on_exactly_as_comparing_every_cluster_with_every_old_state_would(
    old: list[set[int]], new: list[set[int]]
) -> None:
    previous = [state(f"s{n}", [f"m{k}#0" for k in sorted(keys)]) for n, keys in enumerate(old)]
    clusters = [frozenset(f"m{k}#0" for k in keys) for keys in new]

    def ids(heirs: list[SchemaState | None]) -> list[str | None]:
        return [heir.schema_id if heir else None for heir in heirs]

    assert ids(inherited(clusters, previous)) == ids(all_pairs(clusters, previous))


def test_new_ids_depend_on_the_cluster_only_and_avoid_ids_taken_in_the_run() -> None:
    first = new_schema_id("c", "ann", ["m1#0", "m2#0"], set(), salt=2)
    assert first == new_schema_id("c", "ann", ["m2#0", "m1#0"], set(), salt=9)
    assert first != new_schema_id("other", "ann", ["m1#0", "m2#0"], set(), salt=2)
    assert new_schema_id("c", "ann", ["m1#0", "m2#0"], {first}, salt=2) != first


def test_a_growing_schema_keeps_its_id_gets_a_new_version_and_the_old_version_stays(
    runtime: Runtime,
) -> None:
    battery = texts("battery", 12)
    # 20 and 24 thoughts are fixed points: each view as of now is a run of her chain.
    runtime.engine.ingest(said(CHANNEL, "ann", battery[:8] + CHATTER[:4] + texts("food", 8), 1))
    runtime.schemas.recluster(CHANNEL)
    first = {s.schema_id: s for s in runtime.schemas.schemas(CHANNEL)[0].schemas}
    old = {
        s.schema_id: runtime.store.schemas.version(CHANNEL, s.schema_id, s.version)
        for s in first.values()
    }

    runtime.engine.ingest(said(CHANNEL, "ann", battery[8:], 100))
    report = runtime.schemas.recluster(CHANNEL)
    now = {s.schema_id: s for s in runtime.schemas.schemas(CHANNEL)[0].schemas}

    assert now.keys() == first.keys()  # both schemas kept their ids
    grown = [i for i in now if now[i].size > first[i].size]
    assert len(grown) == 1 and report.new_versions == 1
    (battery_id,) = grown
    assert now[battery_id].version > first[battery_id].version
    for schema_id, before in first.items():
        kept = runtime.store.schemas.version(CHANNEL, schema_id, before.version)
        assert kept is not None and old[schema_id] is not None
        assert (kept.members, kept.summary, kept.as_of) == (
            old[schema_id].members,
            old[schema_id].summary,
            old[schema_id].as_of,
        )
    history = [
        v.version
        for v in runtime.store.schemas.versions(CHANNEL, "ann")
        if v.schema_id == battery_id
    ]
    # Every version it had at her fixed points is kept, oldest first (4 to 8 as it formed).
    assert history == sorted(set(history))
    assert history[-2:] == [first[battery_id].version, now[battery_id].version]


@pytest.mark.slow
def test_a_schema_whose_members_do_not_change_keeps_its_version(runtime: Runtime) -> None:
    runtime.engine.ingest(
        said(CHANNEL, "ann", texts("battery", 8) + CHATTER[:4] + texts("food", 8), 1)
    )
    runtime.schemas.recluster(CHANNEL)  # her 20 thoughts: a fixed point, the last of her chain
    before = {s.schema_id: s.version for s in runtime.schemas.schemas(CHANNEL)[0].schemas}
    stored = len(runtime.store.schemas.versions(CHANNEL, "ann"))
    runtime.engine.ingest(said(CHANNEL, "ann", texts("pricing", 4), 100))
    assert runtime.schemas.recluster(CHANNEL).new_versions == 1  # only the pricing schema, at 24
    now = {s.schema_id: s.version for s in runtime.schemas.schemas(CHANNEL)[0].schemas}
    assert len(now) == 3 and all(now[i] == version for i, version in before.items())
    assert len(runtime.store.schemas.versions(CHANNEL, "ann")) == stored + 1


def test_re_clustering_with_nothing_new_is_skipped(runtime: Runtime) -> None:
    runtime.engine.ingest(said(CHANNEL, "ann", texts("battery", 8), 1))
    # Her first re-clustering: the run at every fixed point she reached, 4 to 8 thoughts.
    assert runtime.schemas.recluster(CHANNEL).runs_stored == 5
    assert runtime.schemas.recluster(CHANNEL).skipped
    assert runtime.schemas.recluster(CHANNEL, force=True).runs_stored == 0
    assert runtime.schemas.pending() == []


def test_a_reading_recalls_the_speakers_related_schema_as_of_before_the_message(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(activation={"important_threshold": -20.0})
    battery = texts("battery", 12)
    runtime.engine.ingest(
        said(CHANNEL, "ann", battery[:8] + texts("food", 6), 1)
        + said(CHANNEL, "bob", CHATTER[:4], 50)
        + said(CHANNEL, "ann", battery[8:9], 60)
    )
    reading = runtime.engine.read(CHANNEL, "m0060", EVERYTHING)
    timeline = runtime.store.timeline(CHANNEL)
    position = timeline.position_of["m0060"]
    schemas = reading.context.schemas
    assert schemas and len(schemas) <= runtime.settings.schemas.max_recalled
    best = schemas[0]
    assert best.similarity >= runtime.settings.schemas.recall_threshold
    assert all(schema.as_of < position for schema in schemas)
    assert best.stance == "undetermined"  # offline: no language model to judge it
    battery_ids = {f"m{n:04d}" for n in range(1, 9)}
    in_schema = [a for a in reading.context.associations if a.source.message_id in battery_ids]
    assert in_schema and all(item.important for item in in_schema)  # β = −20: any activation

    strict = make_runtime("strict", activation={"important_threshold": 20.0})
    strict.engine.ingest(
        said(CHANNEL, "ann", battery[:8], 1) + said(CHANNEL, "ann", battery[8:9], 60)
    )
    assert not any(
        item.important
        for item in strict.engine.read(CHANNEL, "m0060", EVERYTHING).context.associations
    )


def test_at_most_r_schemas_are_recalled_and_never_another_speakers(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(schemas={"max_recalled": 1, "recall_threshold": -1.0})
    runtime.engine.ingest(
        said(CHANNEL, "ann", texts("battery", 7) + texts("food", 7), 1)
        + said(CHANNEL, "bob", texts("pricing", 7), 50)
        + said(CHANNEL, "ann", ["The sync worker drains the battery."], 80)
    )
    schemas = runtime.engine.read(CHANNEL, "m0080", EVERYTHING).context.schemas
    assert len(schemas) == 1
    ann = {
        s.schema_id
        for s in runtime.schemas.schemas(CHANNEL, "ann", before_message="m0080")[0].schemas
    }
    assert schemas[0].schema_id in ann


@pytest.mark.slow
def test_a_stored_run_and_the_same_clustering_made_on_demand_read_alike(
    make_runtime: Callable[..., Runtime],
) -> None:
    channel = said(CHANNEL, "ann", texts("battery", 8) + texts("food", 6), 1) + said(
        CHANNEL, "bob", CHATTER[:3], 50
    )
    stored, on_demand = make_runtime("stored"), make_runtime("on-demand")
    stored.engine.ingest(channel)
    stored.schemas.recluster(CHANNEL)  # also ann's run on exactly her thoughts before m0014
    on_demand.engine.ingest(channel)
    assert stored.schemas.schemas(CHANNEL, "ann", before_message="m0014")[0].stored
    assert not on_demand.schemas.schemas(CHANNEL, "ann", before_message="m0014")[0].stored
    first = stored.engine.read(CHANNEL, "m0014", EVERYTHING).context.schemas
    assert first and first == on_demand.engine.read(CHANNEL, "m0014", EVERYTHING).context.schemas


@pytest.mark.slow
def test_a_reading_is_the_same_whenever_the_scheduler_re_clustered_before_it(
    make_runtime: Callable[..., Runtime],
) -> None:
    first = said(CHANNEL, "ann", texts("battery", 8) + texts("food", 6), 1)
    then = said(CHANNEL, "ann", texts("battery", 3, seed=1), 40) + said(
        CHANNEL, "ann", ["Our Android app drains the battery overnight again."], 60
    )
    scheduled, imported = make_runtime("scheduled"), make_runtime("imported")
    scheduled.engine.ingest(first)
    scheduled.schemas.recluster(CHANNEL)  # a run on her first 14 thoughts, then she goes on
    scheduled.engine.ingest(then)
    imported.engine.ingest(first + then)  # the same channel, never re-clustered
    read, fresh = (
        r.engine.read(CHANNEL, "m0060", EVERYTHING).context.schemas for r in (scheduled, imported)
    )
    # The same clusters, versions, names and examples, and the same ids: they come down the
    # chain of her fixed points, never from a run the scheduler happened to make.
    assert read and read == fresh


def test_a_version_keeps_its_name_and_keyphrases_however_the_speaker_goes_on(
    runtime: Runtime,
) -> None:
    runtime.engine.ingest(said(CHANNEL, "ann", texts("battery", 8) + CHATTER[:3], 1))
    runtime.schemas.recluster(CHANNEL)
    (before,) = runtime.schemas.schemas(CHANNEL, "ann")
    # She goes on about something else: her other thoughts, the contrast of keyphrases, change.
    runtime.engine.ingest(said(CHANNEL, "ann", texts("pricing", 8) + CHATTER[3:], 100))
    runtime.schemas.recluster(CHANNEL)
    (after,) = runtime.schemas.schemas(CHANNEL, "ann")
    kept = {(s.schema_id, s.version): s for s in after.schemas}
    assert before.schemas
    for schema in before.schemas:
        same = kept.get((schema.schema_id, schema.version))
        assert same is not None  # the battery schema did not change, so neither did its version
        assert (same.name, same.keyphrases) == (schema.name, schema.keyphrases)
    assert len(after.schemas) > len(before.schemas)  # and her new concern is a schema of its own


def test_a_reading_asks_the_store_for_a_run_once_then_holds_it_and_reads_alike_after(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = make_runtime()
    runtime.engine.ingest(
        said(CHANNEL, "ann", texts("battery", 8) + texts("food", 6), 1)
        + said(CHANNEL, "ann", texts("battery", 3, seed=1), 40)
    )
    store = runtime.schemas.runs.store
    asked: list[str] = []
    looked_up = store.highest_run

    def highest_run(channel: str, speaker_id: str, bases: list[tuple[str, str]]) -> object:
        asked.append(speaker_id)
        return looked_up(channel, speaker_id, bases)

    monkeypatch.setattr(store, "highest_run", highest_run)
    # m0040 and m0041 follow 14 and 15 of her thoughts: both read the run at the point 14.
    first = runtime.engine.read(CHANNEL, "m0040", EVERYTHING).context.schemas
    assert first and asked == ["ann"]
    again = runtime.engine.read(CHANNEL, "m0041", EVERYTHING).context.schemas
    assert asked == ["ann"]  # nothing stored there at this revision, and the run is held

    runtime.schemas.recluster(CHANNEL)  # the job stores the run at 14: the same run
    asked.clear()
    assert runtime.schemas.schemas(CHANNEL, "ann", before_message="m0041")[0].stored
    assert runtime.engine.read(CHANNEL, "m0041", EVERYTHING).context.schemas == again
    runtime.engine.ingest(said(CHANNEL, "bob", CHATTER[:1], 60))  # the revision moves on
    assert runtime.engine.read(CHANNEL, "m0041", EVERYTHING).context.schemas == again
    assert asked.count("ann") == 1  # the view only: the run on this basis is held


def test_a_run_the_job_stored_is_loaded_once_for_the_readings_at_its_point(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next process finds the job's run in the store for its first reading at a point, and
    holds it for the others there, however the channel moves on meanwhile."""
    writer = make_runtime()
    writer.engine.ingest(
        said(CHANNEL, "ann", texts("battery", 8) + texts("food", 6), 1)
        + said(CHANNEL, "ann", texts("battery", 3, seed=1), 40)
    )
    writer.schemas.recluster(CHANNEL)  # stores the run at her point 14
    reader = make_runtime()  # the same folder: another process of the same channel
    store = reader.schemas.runs.store
    loaded: list[bool] = []
    looked_up = store.highest_run

    def highest_run(channel: str, speaker_id: str, bases: list[tuple[str, str]]) -> object:
        found = looked_up(channel, speaker_id, bases)
        loaded.append(found is not None)
        return found

    monkeypatch.setattr(store, "highest_run", highest_run)
    first = reader.engine.read(CHANNEL, "m0040", EVERYTHING).context.schemas
    assert first and loaded == [True]  # found stored, not clustered again
    reader.engine.ingest(said(CHANNEL, "bob", CHATTER[:1], 60))  # the revision moves on
    again = reader.engine.read(CHANNEL, "m0041", EVERYTHING).context.schemas
    assert loaded == [True]  # m0041 reads the same run, held since
    assert again == writer.engine.read(CHANNEL, "m0041", EVERYTHING).context.schemas
