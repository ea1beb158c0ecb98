"""The background service: re-cluster channels with new thoughts, have the language model rewrite
thoughts it could not write while it was down, post digests on schedules, and drop from this
process what another one removed.

APScheduler 3 with its jobs in the AWAI database as data (``runtime.job_store``, a
:class:`storage.job_store.DataJobStore`: JSON rows, no pickles, and a row can only name one of
the job kinds below), so schedules survive
restarts and writing the database does not let anyone run code in the bot processes. A stored job
cannot carry the runtime or an adapter's callback: the jobs below are module-level functions that
name a running :class:`SchedulerService` (and a digest poster) by string, and look it up in this
process when they fire. Every job runs with ``max_instances=1`` and ``coalesce``:
never two re-clusterings at once, and runs missed while stopped collapse into one.

Several bot processes share the job store, and each one's scheduler may fire the same run at the
same moment (APScheduler 3 does not coordinate schedulers). So a firing first claims itself in the
database (``runtime.claim``, a row with a unique key) for half the job's period: one process
re-clusters or posts the digest, the others skip that run. The removal check is the exception:
each process holds its own read models, so each runs it, from an in-memory job store.

The service calls the engine's entry points (``runtime.schemas``) and the runtime's door; it does
not reach into storage.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from apscheduler.jobstores.base import JobLookupError
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from awai_engine.schemas.digest import Digest
from awai_engine.schemas.service import ReclusterReport
from awai_engine.visibility import Scopes
from bots.runtime import Runtime

log = logging.getLogger(__name__)

JOB_STORE = "awai"
RECLUSTER_JOB = "awai-recluster"
REEXTRACT_JOB = "awai-reextract"
REMOVAL_CHECK_JOB = "awai-removal-check"
LOCAL_JOBS = "process"  # an in-memory job store: jobs every process runs for itself
DigestPoster = Callable[[str, Digest], None]
DigestTitle = Callable[[str], str | None]
"""The name people know a channel by (``#launch``), for its digest's title; None: from its key."""
# The only functions a stored job may run, by the kind its row names.
JOB_KINDS = {
    "recluster": f"{__name__}:recluster_job",
    "reextract": f"{__name__}:reextract_job",
    "digest": f"{__name__}:digest_job",
}

_services: dict[str, SchedulerService] = {}
_services_guard = threading.Lock()


def recluster_job(service: str) -> None:
    """Job: re-cluster every channel with new thoughts (failures are logged per channel)."""
    running = _running(service)
    if running is not None and running.first_to_run(RECLUSTER_JOB):
        running.recluster_now()


def reextract_job(service: str) -> None:
    """Job: have the language model rewrite thoughts made offline while it did not answer."""
    running = _running(service)
    if running is not None and running.first_to_run(REEXTRACT_JOB):
        for report in running.runtime.engine.reextract_all():
            if report.pending:
                log.info(
                    "re-extraction of %s: %d of %d rewritten",
                    report.channel,
                    report.rewritten,
                    report.pending,
                )


def digest_job(service: str, poster: str, channel: str) -> None:
    """Job: make the channel's digest and hand it to the named poster."""
    running = _running(service)
    if running is not None and running.first_to_run(digest_job_id(poster, channel)):
        running.post_digest(poster, channel)


def _running(service: str) -> SchedulerService | None:
    with _services_guard:
        found = _services.get(service)
    if found is None:
        log.warning("scheduled job for service %r skipped: it is not running here", service)
    return found


class SchedulerService:
    """Owns the schedules of one runtime; ``name`` ties stored jobs to it across restarts.

    Adapters register how they post a digest with :meth:`add_digest_poster`, then ask for a
    channel's digest on a schedule with :meth:`schedule_digest`. A job whose poster is not
    registered in this process (the adapter is not running) is skipped with a warning.
    """

    def __init__(
        self, runtime: Runtime, scheduler: BaseScheduler | None = None, name: str = "default"
    ) -> None:
        self.runtime = runtime
        self.name = name
        settings = runtime.settings.scheduler
        self.scheduler = scheduler or BackgroundScheduler(timezone=UTC)
        self.scheduler.add_jobstore(runtime.job_store(JOB_KINDS), alias=JOB_STORE)
        self.scheduler.add_jobstore(MemoryJobStore(), alias=LOCAL_JOBS)
        self._job_options = {
            "jobstore": JOB_STORE,
            "replace_existing": True,
            "max_instances": 1,
            "coalesce": True,
            "misfire_grace_time": settings.misfire_grace_seconds,
        }
        self._posters: dict[str, DigestPoster] = {}
        self._titles: dict[str, DigestTitle] = {}
        with _services_guard:
            _services[name] = self

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self, paused: bool = False) -> None:
        """Schedule re-clustering every ``scheduler.recluster_minutes`` and start the scheduler."""
        self.scheduler.add_job(
            recluster_job,
            IntervalTrigger(minutes=self.runtime.settings.scheduler.recluster_minutes),
            id=RECLUSTER_JOB,
            args=[self.name],
            name="re-cluster channels with new thoughts",
            **self._job_options,
        )
        if not self.runtime.engine.backend.offline:
            self.scheduler.add_job(
                reextract_job,
                IntervalTrigger(minutes=self.runtime.settings.llm.reextract_minutes),
                id=REEXTRACT_JOB,
                args=[self.name],
                name="rewrite thoughts made offline with the language model",
                **self._job_options,
            )
        self.scheduler.add_job(  # this process's own: kept in memory, never claimed
            self.runtime.engine.drop_removed_elsewhere,
            IntervalTrigger(seconds=self.runtime.settings.scheduler.removal_check_seconds),
            id=REMOVAL_CHECK_JOB,
            name="drop what another process removed from this one's memory and files",
            jobstore=LOCAL_JOBS,
            replace_existing=True,
            max_instances=1,
            coalesce=True,
        )
        if not self.scheduler.running:
            self.scheduler.start(paused=paused)

    def shutdown(self, wait: bool = True) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=wait)
        with _services_guard:
            if _services.get(self.name) is self:
                del _services[self.name]

    # -- digests -------------------------------------------------------------------------------

    def add_digest_poster(
        self, name: str, post: DigestPoster, title_of: DigestTitle | None = None
    ) -> None:
        """Register how digests reach a platform: ``post(channel_key, digest)``, the digest
        titled with ``title_of(channel_key)`` (the platform's name of the channel)."""
        self._posters[name] = post
        if title_of is None:  # registered again without one: no title kept from before
            self._titles.pop(name, None)
        else:
            self._titles[name] = title_of

    def schedule_digest(
        self,
        channel: str,
        poster: str,
        every: timedelta | None = None,
        cron: str | None = None,
    ) -> str:
        """Post the channel's digest through ``poster`` every interval, or on a crontab line
        (``"0 9 * * MON"``, UTC). Scheduling the same channel and poster again replaces it.
        Returns the job id."""
        if (every is None) == (cron is None):
            raise ValueError("give either every= or cron=, not both and not neither")
        trigger = (
            CronTrigger.from_crontab(cron, timezone=UTC)
            if cron is not None
            else IntervalTrigger(seconds=every.total_seconds())  # type: ignore[union-attr]
        )
        job_id = digest_job_id(poster, channel)
        self.scheduler.add_job(
            digest_job,
            trigger,
            id=job_id,
            args=[self.name, poster, channel],
            name=f"digest of {channel} via {poster}",
            **self._job_options,
        )
        return job_id

    def unschedule_digest(self, channel: str, poster: str) -> bool:
        try:
            self.scheduler.remove_job(digest_job_id(poster, channel), jobstore=JOB_STORE)
        except JobLookupError:
            return False
        return True

    def digest_schedules(self) -> list[tuple[str, str, datetime | None]]:
        """(poster, channel, next run) of every scheduled digest."""
        found = []
        for job in self.scheduler.get_jobs(jobstore=JOB_STORE):
            if job.func is digest_job:
                _, poster, channel = job.args
                found.append((poster, channel, getattr(job, "next_run_time", None)))
        return found

    # -- what the jobs do ----------------------------------------------------------------------

    def first_to_run(self, job_id: str) -> bool:
        """Whether this process does this firing of ``job_id``: the first, across processes, to
        claim it in the database within half the job's period."""
        if job_id == RECLUSTER_JOB:
            period = self.runtime.settings.scheduler.recluster_minutes * 60
        else:
            job = self.scheduler.get_job(job_id, jobstore=JOB_STORE)
            period = _period_seconds(job.trigger) if job is not None else 0.0
        if self.runtime.claim(f"scheduled:{job_id}", period / 2):
            return True
        log.info("%s: this run was done by another process", job_id)
        return False

    def recluster_now(self) -> list[ReclusterReport]:
        try:  # deleted messages' bytes (Chroma's log, free pages) go once per period
            self.runtime.schemas.resume_erasures()
        except Exception:
            log.exception("finishing pending erasures failed; the next run tries again")
        reports = self.runtime.schemas.recluster_all()
        for report in reports:
            if report.error:
                log.error("re-clustering %s failed: %s", report.channel, report.error)
        return reports

    def post_digest(self, poster: str, channel: str) -> bool:
        post = self._posters.get(poster)
        if post is None:
            log.warning("digest of %s skipped: no poster %r is registered here", channel, poster)
            return False
        try:
            # A scheduled digest is posted for everyone in the channel.
            title_of = self._titles.get(poster)
            title = None if title_of is None else title_of(channel)
            post(channel, self.runtime.schemas.digest(channel, Scopes.channel(), title=title))
        except Exception:
            log.exception("posting the digest of %s via %s failed", channel, poster)
            return False
        return True


def digest_job_id(poster: str, channel: str) -> str:
    return f"awai-digest:{poster}:{channel}"


def _period_seconds(trigger: BaseTrigger) -> float:
    """Seconds between the trigger's next two fire times (0 when it fires no more)."""
    now = datetime.now(UTC)
    first = trigger.get_next_fire_time(None, now)
    second = first and trigger.get_next_fire_time(first, first + timedelta(microseconds=1))
    return (second - first).total_seconds() if first and second else 0.0
