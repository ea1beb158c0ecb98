"""Clusterings at fixed points of each speaker's thought count: what a reading uses, what the
re-clustering job stores, and that both follow from the messages alone."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

import pytest
from hypothesis import given
from hypothesis import strategies as st

from awai_engine.schemas import chains, clustering, service
from awai_engine.schemas.fixed_points import fixed_point, is_fixed_point, points_up_to
from awai_engine.schemas.service import ReclusterWorkerError
from awai_engine.schemas.settings import SchemaRules
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.schema_topics import CHATTER, said, topic_sentences

CHANNEL = "terminal:local:fixed-points"


def texts(topic: str, count: int, seed: int = 0) -> list[str]:
    return [text for text, _ in topic_sentences([topic], count, seed)]


@given(count=st.integers(0, 10**7), bits=st.integers(1, 8))
def test_the_fixed_point_below_a_count_lags_it_by_less_than_a_share_set_by_the_bits(
    count: int, bits: int
) -> None:
    point = fixed_point(count, bits)
    assert point <= count and fixed_point(point, bits) == point
    assert count - point <= max(0, count / 2 ** (bits - 1) - 1)
    assert count >= 2**bits or point == count  # a small speaker's every thought counts
    assert fixed_point(count + 1, bits) >= point  # never goes back as the speaker goes on


@given(count=st.integers(1, 3000), bits=st.integers(1, 6))
def test_the_fixed_points_are_the_values_the_function_takes_and_grow_logarithmically(
    count: int, bits: int
) -> None:
    points = points_up_to(count, bits)
    assert points == sorted({fixed_point(n, bits) for n in range(1, count + 1)})
    assert all(is_fixed_point(point, bits) for point in points)
    assert len(points) <= 2**bits + max(0, count.bit_length() - bits) * 2 ** (bits - 1)


def test_a_reading_uses_the_speakers_first_thoughts_up_to_the_fixed_point_below(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(schemas={"recall_threshold": -1.0})
    # 11 thoughts before m0050: the run in force clusters her first 10 (3 bits: 8, 10, 12, …).
    runtime.engine.ingest(
        said(CHANNEL, "ann", texts("battery", 10) + texts("battery", 1, seed=7), 1)
        + said(CHANNEL, "ann", ["Our Android app drains the battery at night."], 50)
    )
    (ann,) = runtime.schemas.schemas(CHANNEL, "ann", before_message="m0050")
    assert (ann.thoughts, ann.clustered) == (11, 10)
    reading = runtime.engine.read(CHANNEL, "m0050", EVERYTHING)
    assert reading.context.schemas
    first_ten = {f"m{n:04d}" for n in range(1, 11)}
    assert all(set(schema.members) <= first_ten for schema in reading.context.schemas)


def test_after_a_re_clustering_every_reading_and_the_next_live_message_find_their_run_stored(
    runtime: Runtime,
) -> None:
    channel = (
        said(CHANNEL, "ann", texts("battery", 9) + CHATTER[:2] + texts("food", 9), 1)
        + said(CHANNEL, "bob", texts("pricing", 7) + CHATTER[2:5], 100)
        + said(CHANNEL, "ann", texts("battery", 5, seed=2), 200)
    )
    runtime.engine.ingest(channel)
    runtime.schemas.recluster(CHANNEL)
    live = said(CHANNEL, "bob", ["The Pro plan is still too expensive for students."], 300)
    runtime.engine.ingest(live)  # said after the job ran: its run in force is one it stored
    looked_up = 0
    for utterance in [*channel, *live]:
        for speaker in runtime.schemas.schemas(CHANNEL, before_message=utterance.message_id):
            assert speaker.stored or speaker.clustered == 0, (utterance.message_id, speaker)
            looked_up += speaker.stored
    assert looked_up >= len(channel)  # most readings have a run in force for both speakers


def test_the_job_stores_each_fixed_point_once_and_one_run_as_of_now_per_speaker(
    runtime: Runtime,
) -> None:
    battery, food = texts("battery", 16), texts("food", 16)
    steps = [battery[:5], food[:6], battery[5:12], CHATTER[:3], food[6:], battery[12:]]
    start, made = 1, []
    for step in steps:  # re-clustered after every step, as a scheduler would at any time
        runtime.engine.ingest(said(CHANNEL, "ann", step, start))
        start += 100
        made.append(runtime.schemas.recluster(CHANNEL).runs_stored)
    count = sum(len(step) for step in steps)  # 45 thoughts: points 4-8, 10, …, 40, and now
    bits, floor = runtime.settings.schemas.rules.fixed_point_bits, 4
    stored = sorted(n for who, _, n in runtime.store.schemas.run_counts(CHANNEL) if who == "ann")
    assert stored == [*points_up_to(count, bits, start=floor), count]
    # Each point was clustered once, however the job's runs fell; each run also stored "now"
    # unless the speaker stood on a fixed point.
    nows = sum(not is_fixed_point(n, bits) for n in _running_counts(steps))
    assert sum(made) == len(points_up_to(count, bits, start=floor)) + nows


def _running_counts(steps: list[list[str]]) -> list[int]:
    counts, total = [], 0
    for step in steps:
        total += len(step)
        counts.append(total)
    return counts


def test_catching_up_over_an_imported_channel_reports_its_progress(runtime: Runtime) -> None:
    runtime.engine.ingest(
        said(CHANNEL, "ann", texts("battery", 16) + texts("food", 14), 1)
        + said(CHANNEL, "bob", texts("pricing", 12), 100)
    )
    heard: list[tuple[int, int]] = []
    report = runtime.schemas.recluster(
        CHANNEL, progress=lambda done, total: heard.append((done, total))
    )
    total = report.runs_stored
    assert heard == [(done, total) for done in range(total + 1)]
    assert total == len(points_up_to(30, 3, start=4)) + 1 + len(points_up_to(12, 3, start=4))


def test_re_clustering_every_channel_with_force_re_checks_those_with_nothing_new(
    runtime: Runtime,
) -> None:
    runtime.engine.ingest(said(CHANNEL, "ann", texts("battery", 12), 1))
    assert not runtime.schemas.recluster(CHANNEL).skipped
    assert runtime.schemas.recluster_all() == []  # nothing new: no channel pending
    (forced,) = runtime.schemas.recluster_all(only_pending=False)
    assert not forced.skipped and forced.error is None  # ``awai recluster --force``


@pytest.mark.slow
def test_the_chain_is_the_same_however_often_the_job_ran(
    make_runtime: Callable[..., Runtime],
) -> None:
    channel = said(CHANNEL, "ann", texts("battery", 8) + CHATTER[:4] + texts("food", 12), 1)
    stepwise, at_once = make_runtime("stepwise"), make_runtime("at-once")
    for cut in (6, 13, 17, 24):
        stepwise.engine.ingest(channel[:cut])
        stepwise.schemas.recluster(CHANNEL)
    at_once.engine.ingest(channel)
    at_once.schemas.recluster(CHANNEL)
    # Ids come down the chain of fixed points only, so even they agree, at every point.
    for utterance in channel:
        views = [
            r.schemas.schemas(CHANNEL, "ann", before_message=utterance.message_id)
            for r in (stepwise, at_once)
        ]
        assert views[0] == views[1]
    assert stepwise.schemas.schemas(CHANNEL) == at_once.schemas.schemas(CHANNEL)


@pytest.mark.slow
def test_an_edit_inside_the_prefix_re_clusters_the_points_after_it_as_a_fresh_import_would(
    make_runtime: Callable[..., Runtime],
) -> None:
    battery = texts("battery", 14)
    channel = said(CHANNEL, "ann", battery[:12], 1) + said(CHANNEL, "ann", battery[12:], 50)
    # Her seventh message becomes two thoughts: every prefix from there on changes, while the
    # schema formed before it keeps its id and reaches the same fixed points with other members.
    edited = channel[6].model_copy(update={"text": f"{CHATTER[0]} {battery[13]}"})
    lived, fresh = make_runtime("lived"), make_runtime("fresh")
    lived.engine.ingest(channel)
    lived.schemas.recluster(CHANNEL)
    before = lived.engine.read(CHANNEL, "m0051", EVERYTHING).context.schemas
    assert lived.engine.edit(edited)
    lived.schemas.recluster(CHANNEL)
    fresh.engine.ingest([*channel[:6], edited, *channel[7:]])
    fresh.schemas.recluster(CHANNEL)
    assert before != lived.engine.read(CHANNEL, "m0051", EVERYTHING).context.schemas
    for utterance in channel:
        read, anew = (
            r.engine.read(CHANNEL, utterance.message_id, EVERYTHING).context.schemas
            for r in (lived, fresh)
        )
        assert read == anew, utterance.message_id


@pytest.mark.parametrize(
    ("group_thoughts", "store_runs"),
    [(chains.GROUP_THOUGHTS, service.STORE_RUNS), (1, 1)],
    ids=["grouped", "a-chain-a-group-stored-one-by-one"],
)
def test_speakers_re_clustered_in_worker_processes_store_what_one_process_stores(
    make_runtime: Callable[..., Runtime],
    monkeypatch: pytest.MonkeyPatch,
    group_thoughts: int,
    store_runs: int,
) -> None:
    """The job hands the speakers' chains to worker processes, in groups; each chain is its
    own, so the runs stored are those of working them one after the other in the job's
    process, however they are grouped and however many are stored at once. A long speaker's
    kept neighbours go to the worker and come back for the job's next run."""
    monkeypatch.setattr(service, "grouped", lambda items: chains.grouped(items, group_thoughts))
    monkeypatch.setattr(service, "STORE_RUNS", store_runs)
    channel = (
        said(CHANNEL, "ann", texts("battery", 16) + texts("food", 14), 1)
        + said(CHANNEL, "bob", texts("pricing", 12) + CHATTER[:3], 100)
        + said(CHANNEL, "cy", texts("food", 10, seed=2) + texts("pricing", 9, seed=3), 200)
    )
    knn = {
        "rules": SchemaRules(exact_max_thoughts=20)
    }  # ann's later points are clustered on the knn graph
    workers = make_runtime("workers", schemas={**knn, "recluster_processes": 2})
    one = make_runtime("one", schemas={**knn, "recluster_processes": 1})
    pools: list[tuple[int, int]] = []

    def noting(count: int, blas_threads: int | None) -> ProcessPoolExecutor:
        executor = chains.pool(count, blas_threads)
        pools.append((count, executor.submit(os.getpid).result()))
        return executor

    monkeypatch.setattr(service, "pool", noting)
    early = [m for m in channel if m.message_id < "m0025" or "m0100" <= m.message_id < "m0110"]
    workers.engine.ingest(early)
    workers.schemas.recluster(CHANNEL)
    assert workers.schemas._memos[(CHANNEL, "ann")].neighbours is not None  # came back
    workers.engine.ingest([m for m in channel if m not in early])
    workers.schemas.recluster(CHANNEL)
    assert pools and all(count == 2 and pid != os.getpid() for count, pid in pools)
    one.engine.ingest(channel)
    one.schemas.recluster(CHANNEL)
    for speaker in ("ann", "bob", "cy"):
        for utterance in channel:
            assert workers.schemas.schemas(
                CHANNEL, speaker, before_message=utterance.message_id
            ) == one.schemas.schemas(CHANNEL, speaker, before_message=utterance.message_id)
    assert workers.schemas.schemas(CHANNEL) == one.schemas.schemas(CHANNEL)
    assert len(pools) == 2


@pytest.mark.slow
def test_a_killed_worker_fails_the_job_at_once_and_the_next_run_stores_what_a_clean_one_does(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker SIGKILLed (as the out-of-memory killer does) mid-job: the job fails with a
    message saying so instead of waiting for it, the channel stays pending, and the next run
    makes what is missing, ending where a run never interrupted ends. Each chain is its own
    group here, so several are in flight when the worker dies."""
    monkeypatch.setattr(service, "grouped", lambda items: chains.grouped(items, 1))
    channel = (
        said(CHANNEL, "ann", texts("battery", 16) + texts("food", 14), 1)
        + said(CHANNEL, "bob", texts("pricing", 12) + CHATTER[:3], 100)
        + said(CHANNEL, "cy", texts("food", 10, seed=2) + texts("pricing", 9, seed=3), 200)
    )
    killed = make_runtime("killed", schemas={"recluster_processes": 2})
    clean = make_runtime("clean", schemas={"recluster_processes": 2})
    for runtime in (killed, clean):
        runtime.engine.ingest(channel)
    stop = threading.Event()

    def kill_the_first_worker() -> None:
        while not stop.is_set():
            for child in multiprocessing.active_children():
                if child.name.startswith("ForkServerProcess"):
                    os.kill(child.pid or 0, signal.SIGKILL)
                    return
            time.sleep(0.001)

    killer = threading.Thread(target=kill_the_first_worker)
    killer.start()
    try:
        with pytest.raises(ReclusterWorkerError, match="died"):
            killed.schemas.recluster(CHANNEL)
    finally:
        stop.set()
        killer.join()
    assert killed.schemas.pending() == [CHANNEL]
    killed.schemas.recluster(CHANNEL)
    clean.schemas.recluster(CHANNEL)
    assert killed.schemas.pending() == []
    for speaker in ("ann", "bob", "cy"):
        for utterance in channel:
            assert killed.schemas.schemas(
                CHANNEL, speaker, before_message=utterance.message_id
            ) == clean.schemas.schemas(CHANNEL, speaker, before_message=utterance.message_id)
    assert killed.schemas.schemas(CHANNEL) == clean.schemas.schemas(CHANNEL)


def test_a_worker_that_cannot_be_started_fails_the_job_as_a_dead_one_does(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """CPython's pool starts a worker as it is handed work; a worker killed meanwhile closes
    the pipes it is started with, and the hand-out raises ``OSError("handle is closed")``
    (seen in the killed-worker test above). The job says a worker died, the channel stays
    pending, and the next run stores what a run never interrupted stores."""
    monkeypatch.setattr(service, "grouped", lambda items: chains.grouped(items, 1))
    channel = said(CHANNEL, "ann", texts("battery", 16), 1) + said(
        CHANNEL, "bob", texts("pricing", 12), 100
    )
    failing, clean = make_runtime("failing"), make_runtime("clean")
    for runtime in (failing, clean):
        runtime.engine.ingest(channel)
    real_pool = service.pool

    class Closing(ProcessPoolExecutor):
        handed = 0

        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def,override]
            Closing.handed += 1
            if Closing.handed == 2:
                raise OSError("handle is closed")
            return super().submit(fn, *args, **kwargs)

    def closing(workers: int, blas_threads: int | None) -> ProcessPoolExecutor:
        made = real_pool(workers, blas_threads)
        made.__class__ = Closing
        return made

    monkeypatch.setattr(service, "pool", closing)
    monkeypatch.setattr(service, "processes", lambda wanted, speakers: 2)
    with pytest.raises(ReclusterWorkerError, match="died"):
        failing.schemas.recluster(CHANNEL)
    assert failing.schemas.pending() == [CHANNEL]
    monkeypatch.setattr(service, "pool", real_pool)
    failing.schemas.recluster(CHANNEL)
    clean.schemas.recluster(CHANNEL)
    assert failing.schemas.pending() == []
    assert failing.schemas.schemas(CHANNEL) == clean.schemas.schemas(CHANNEL)


@pytest.mark.slow
def test_the_jobs_next_run_extends_a_long_speakers_neighbours_and_stores_what_a_fresh_run_does(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A speaker past ``exact_max_thoughts`` is clustered on the knn graph; the job keeps their
    neighbours from one run to the next and extends them by what they said since (not a search
    of every pair again), and what it stores is what a process that never ran before stores."""
    channel = said(CHANNEL, "ann", texts("battery", 14) + texts("food", 16), 1)
    knn = {"schemas": {"rules": SchemaRules(exact_max_thoughts=10)}}
    lived, fresh = make_runtime("lived", **knn), make_runtime("fresh", **knn)
    searches: list[int | None] = []
    search = clustering.nearest_neighbours

    def noting(points, k, known=None):  # type: ignore[no-untyped-def]
        searches.append(None if known is None else known.count)
        return search(points, k, known)

    monkeypatch.setattr(clustering, "nearest_neighbours", noting)
    lived.engine.ingest(channel[:20])
    lived.schemas.recluster(CHANNEL)
    assert searches and searches[0] is None  # the first run searched afresh
    first_run = len(searches)
    lived.engine.ingest(channel[20:])
    lived.schemas.recluster(CHANNEL)
    assert searches[first_run] is not None  # the next one began from the kept neighbours
    fresh.engine.ingest(channel)
    fresh.schemas.recluster(CHANNEL)
    for utterance in channel:
        assert lived.schemas.schemas(
            CHANNEL, "ann", before_message=utterance.message_id
        ) == fresh.schemas.schemas(CHANNEL, "ann", before_message=utterance.message_id)
    assert lived.schemas.schemas(CHANNEL) == fresh.schemas.schemas(CHANNEL)
    assert any(view.schemas for view in lived.schemas.schemas(CHANNEL))
    # Forgetting the speaker drops what was kept of them with the channel's other memory.
    lived.schemas.forget_speaker(CHANNEL, "ann")
    assert CHANNEL not in lived.schemas.held_channels()
