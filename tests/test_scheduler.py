"""The scheduler: jobs kept in the AWAI database survive a restart; one failing channel does not
stop the others."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import pytest
from apscheduler.schedulers.background import BackgroundScheduler
from sqlalchemy import inspect, select
from sqlalchemy.exc import OperationalError

from awai_engine.schemas.digest import Digest
from awai_engine.schemas.model import SchemaRun
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from bots.scheduler import (
    JOB_KINDS,
    JOB_STORE,
    LOCAL_JOBS,
    RECLUSTER_JOB,
    REMOVAL_CHECK_JOB,
    SchedulerService,
    digest_job,
    digest_job_id,
    recluster_job,
)
from storage.job_store import DataJobStore, ScheduleRow
from storage.sql import Database
from tests.schema_topics import said, topic_sentences

CHANNEL = "terminal:local:scheduled"


def battery_talk(runtime: Runtime, channel: str, speaker: str = "ann") -> None:
    texts = [text for text, _ in topic_sentences(["battery", "food"], 8)]
    runtime.engine.ingest(said(channel, speaker, texts, 1))


def test_a_digest_job_in_the_sqlite_job_store_survives_a_restart_of_the_scheduler(
    runtime: Runtime,
) -> None:
    battery_talk(runtime, CHANNEL)
    first = SchedulerService(runtime, BackgroundScheduler(timezone=UTC), name="restart")
    first.start(paused=True)
    job_id = first.schedule_digest(CHANNEL, "test-poster", every=timedelta(hours=6))
    first.shutdown()
    assert inspect(runtime.store.db.engine).has_table("awai_schedules")  # the AWAI database

    posted: list[tuple[str, Digest]] = []
    done = threading.Event()

    def post(channel: str, digest: Digest) -> None:
        posted.append((channel, digest))
        done.set()

    second = SchedulerService(runtime, BackgroundScheduler(timezone=UTC), name="restart")
    second.add_digest_poster("test-poster", post)
    try:
        second.start(paused=True)
        jobs = {job.id: job for job in second.scheduler.get_jobs(jobstore=JOB_STORE)}
        assert {job_id, RECLUSTER_JOB} <= jobs.keys()
        assert jobs[job_id].trigger.interval == timedelta(hours=6)
        assert (jobs[job_id].max_instances, jobs[job_id].coalesce) == (1, True)
        assert second.digest_schedules()[0][:2] == ("test-poster", CHANNEL)
        second.scheduler.modify_job(job_id, jobstore=JOB_STORE, next_run_time=datetime.now(UTC))
        second.scheduler.resume()
        assert done.wait(timeout=60)
    finally:
        second.shutdown()
    channel, digest = posted[0]
    assert channel == CHANNEL and digest.channel == CHANNEL and digest.png
    assert runtime.schemas.pending() == []  # the digest re-clustered the channel first


@pytest.mark.slow
def test_a_failing_channel_is_logged_and_the_others_are_reclustered(
    make_runtime: Callable[..., Runtime],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime = make_runtime()
    battery_talk(runtime, "terminal:local:a-broken", speaker="boom")
    battery_talk(runtime, "terminal:local:b-fine")
    save_runs = runtime.store.schemas.save_runs

    def failing(runs: Sequence[SchemaRun]) -> list[SchemaRun]:  # the database refuses it
        if runs[0].channel == "terminal:local:a-broken":
            raise OperationalError("INSERT INTO schema_runs", {}, Exception("disk I/O error"))
        return save_runs(runs)

    monkeypatch.setattr(runtime.store.schemas, "save_runs", failing)
    service = SchedulerService(runtime, BackgroundScheduler(timezone=UTC), name="failing")
    try:
        with caplog.at_level(logging.ERROR):
            recluster_job("failing")  # what the stored job calls when it fires
    finally:
        service.shutdown()
    assert "terminal:local:a-broken" in caplog.text
    assert "disk I/O error" in caplog.text
    fine = runtime.schemas.schemas("terminal:local:b-fine")
    assert fine[0].stored and fine[0].schemas
    assert runtime.schemas.pending() == ["terminal:local:a-broken"]  # retried next time
    # A digest of the failing channel still comes, with schemas clustered for it.
    digest = runtime.schemas.digest("terminal:local:a-broken", EVERYTHING)
    assert digest.speakers[0].schemas and "## Boom:" in digest.markdown


def test_a_scheduled_digest_is_titled_with_the_name_its_platform_gives_the_channel(
    runtime: Runtime,
) -> None:
    battery_talk(runtime, CHANNEL)
    posted: list[Digest] = []
    service = SchedulerService(runtime, BackgroundScheduler(timezone=UTC), name="titled")
    service.add_digest_poster("p", lambda _, digest: posted.append(digest), lambda _: "#launch")
    try:
        assert service.post_digest("p", CHANNEL)  # what the job does when it fires
    finally:
        service.shutdown()
    assert posted[0].markdown.splitlines()[0] == "# Preconceptions in \\#launch"


def test_a_digest_job_without_its_poster_here_is_skipped_with_a_warning(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    battery_talk(runtime, CHANNEL)
    service = SchedulerService(runtime, BackgroundScheduler(timezone=UTC), name="no-poster")
    try:
        with caplog.at_level(logging.WARNING):
            assert not service.post_digest("slack", CHANNEL)
        assert "no poster 'slack'" in caplog.text
        with pytest.raises(ValueError):
            service.schedule_digest(CHANNEL, "slack")
        service.start(paused=True)
        service.schedule_digest(CHANNEL, "slack", cron="0 9 * * MON")
        assert service.unschedule_digest(CHANNEL, "slack")
        assert not service.unschedule_digest(CHANNEL, "slack")
        assert digest_job_id("slack", CHANNEL) not in {
            job.id for job in service.scheduler.get_jobs(jobstore=JOB_STORE)
        }
    finally:
        service.shutdown()


def test_every_process_checks_for_removals_made_elsewhere_with_a_job_of_its_own(
    runtime: Runtime,
) -> None:
    service = SchedulerService(runtime, BackgroundScheduler(timezone=UTC), name="removals")
    try:
        service.start(paused=True)
        job = service.scheduler.get_job(REMOVAL_CHECK_JOB, jobstore=LOCAL_JOBS)
        assert job is not None and job.func == runtime.engine.drop_removed_elsewhere
        assert job.trigger.interval.total_seconds() == 60  # scheduler.removal_check_seconds
        shared = {job.id for job in service.scheduler.get_jobs(jobstore=JOB_STORE)}
        assert REMOVAL_CHECK_JOB not in shared, "not claimed by one process for all"
    finally:
        service.shutdown()


def test_jobs_are_rows_of_the_database_file_a_new_connection_reads(runtime: Runtime) -> None:
    service = SchedulerService(runtime, BackgroundScheduler(timezone=UTC), name="reopen")
    service.start(paused=True)
    service.schedule_digest(CHANNEL, "discord", every=timedelta(days=1))
    service.shutdown()
    database = Database(runtime.settings.resolved_database_url())  # a new engine, new pool
    scheduler = BackgroundScheduler(timezone=UTC)
    scheduler.add_jobstore(DataJobStore(database, JOB_KINDS), alias=JOB_STORE)
    try:
        scheduler.start(paused=True)
        ids = {job.id for job in scheduler.get_jobs(jobstore=JOB_STORE)}
    finally:
        scheduler.shutdown()
        database.dispose()
    assert {digest_job_id("discord", CHANNEL), RECLUSTER_JOB} <= ids


def test_jobs_are_stored_as_json_data_and_a_row_cannot_name_code(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    service = SchedulerService(runtime, BackgroundScheduler(timezone=UTC), name="as-data")
    service.start(paused=True)
    service.schedule_digest(CHANNEL, "slack", cron="30 9 * * MON-FRI")
    cron_job = service.scheduler.get_job(digest_job_id("slack", CHANNEL), jobstore=JOB_STORE)
    service.shutdown()
    with runtime.store.db.read() as session:
        rows = {row.id: row for row in session.scalars(select(ScheduleRow))}
    digest = rows[digest_job_id("slack", CHANNEL)]
    assert digest.kind == "digest"
    assert json.loads(digest.args) == ["as-data", "slack", CHANNEL]
    assert json.loads(digest.trigger) == {
        "type": "cron",
        "fields": {"month": "*", "day": "*", "day_of_week": "mon-fri", "hour": "9", "minute": "30"},
        "timezone": "UTC",
        "start": None,
        "end": None,
        "jitter": None,
    }
    for row in rows.values():  # every column is text a person can read, nothing pickled
        json.loads(row.args), json.loads(row.trigger), json.loads(row.options)

    with runtime.store.db.session() as session:  # someone with write access to the database
        session.add(
            ScheduleRow(
                id="evil",
                kind="os:system",
                args=json.dumps(["touch /tmp/pwned"]),
                trigger=digest.trigger,
                options=digest.options,
                next_run_time=0.0,
            )
        )
        session.add(
            ScheduleRow(
                id="bad-args",
                kind="digest",
                args=json.dumps([{"__reduce__": "os.system"}]),
                trigger=digest.trigger,
                options=digest.options,
                next_run_time=0.0,
            )
        )
    again = SchedulerService(runtime, BackgroundScheduler(timezone=UTC), name="as-data")
    try:
        with caplog.at_level(logging.WARNING):
            again.start(paused=True)
            jobs = {job.id: job for job in again.scheduler.get_jobs(jobstore=JOB_STORE)}
        assert "evil" not in jobs and "bad-args" not in jobs
        assert "unknown kind 'os:system'" in caplog.text
        assert "arguments must be a list of strings" in caplog.text
        restored = jobs[digest_job_id("slack", CHANNEL)]
        assert str(restored.trigger) == str(cron_job.trigger)
        assert restored.next_run_time == cron_job.next_run_time
        assert restored.func is digest_job
    finally:
        again.shutdown()
