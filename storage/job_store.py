"""APScheduler's jobs kept as data in the AWAI database: no pickles, no code named by a row.

APScheduler's own ``SQLAlchemyJobStore`` pickles each job, and a job names its function by an
import path, so whoever can write the database can make every bot process run any code. Here a
row holds only data: the job's kind (a key into the functions the scheduler registers, so a row
cannot name anything else), its arguments as a JSON list of strings, its trigger as JSON (interval
or cron, the two AWAI uses) and its options. A row with an unknown kind or a malformed field is
skipped with a warning, never run.

``next_run_time`` is stored (seconds since the epoch) so a run missed while every process was
stopped still fires after a restart, within the misfire grace time, as before.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from apscheduler.job import Job
from apscheduler.jobstores.base import BaseJobStore, ConflictingIdError, JobLookupError
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy import Float, String, Text, delete, select
from sqlalchemy.orm import Mapped, mapped_column

from storage.queries import rowcount
from storage.sql import Base, Database

log = logging.getLogger(__name__)


class ScheduleRow(Base):
    __tablename__ = "awai_schedules"

    id: Mapped[str] = mapped_column(String(512), primary_key=True)
    kind: Mapped[str] = mapped_column(String(64))
    args: Mapped[str] = mapped_column(Text)  # JSON list of strings
    trigger: Mapped[str] = mapped_column(Text)  # JSON, see trigger_data
    options: Mapped[str] = mapped_column(Text)  # JSON: name, executor, coalesce, ...
    next_run_time: Mapped[float | None] = mapped_column(Float, index=True)


def trigger_data(trigger: BaseTrigger) -> dict[str, Any]:
    """An interval or cron trigger as JSON-able data (other triggers are refused)."""
    common = {
        "timezone": str(trigger.timezone),
        "start": _seconds(trigger.start_date),
        "end": _seconds(trigger.end_date),
        "jitter": trigger.jitter,
    }
    if isinstance(trigger, IntervalTrigger):
        return {"type": "interval", "seconds": trigger.interval.total_seconds(), **common}
    if isinstance(trigger, CronTrigger):
        fields = {field.name: str(field) for field in trigger.fields if not field.is_default}
        return {"type": "cron", "fields": fields, **common}
    raise TypeError(f"only interval and cron triggers can be stored, not {type(trigger).__name__}")


def trigger_from(data: Mapping[str, Any]) -> BaseTrigger:
    """The trigger :func:`trigger_data` describes."""
    timezone = ZoneInfo(str(data["timezone"]))
    dates = {
        "start_date": _moment(data.get("start"), timezone),
        "end_date": _moment(data.get("end"), timezone),
        "timezone": timezone,
        "jitter": data.get("jitter"),
    }
    if data["type"] == "interval":
        return IntervalTrigger(seconds=float(data["seconds"]), **dates)
    if data["type"] == "cron":
        fields = {str(name): str(value) for name, value in dict(data["fields"]).items()}
        return CronTrigger(**fields, **dates)
    raise ValueError(f"unknown trigger type {data['type']!r}")


class DataJobStore(BaseJobStore):
    """A job store on AWAI's ``awai_schedules`` table; ``functions`` maps each kind a row may
    name to the textual reference of the function it runs (``"module:function"``)."""

    def __init__(self, database: Database, functions: Mapping[str, str]) -> None:
        super().__init__()
        self.db = database
        self.functions = dict(functions)
        self.kinds = {reference: kind for kind, reference in self.functions.items()}

    # -- reading -------------------------------------------------------------------------------

    def lookup_job(self, job_id: str) -> Job | None:
        with self.db.read() as session:
            row = session.get(ScheduleRow, job_id)
            return self._job(row) if row is not None else None

    def get_due_jobs(self, now: datetime) -> list[Job]:
        return self._jobs(ScheduleRow.next_run_time <= now.timestamp())

    def get_next_run_time(self) -> datetime | None:
        with self.db.read() as session:
            seconds = session.scalars(
                select(ScheduleRow.next_run_time)
                .where(ScheduleRow.next_run_time.is_not(None))
                .order_by(ScheduleRow.next_run_time)
                .limit(1)
            ).first()
        return _moment(seconds, UTC)

    def get_all_jobs(self) -> list[Job]:
        jobs = self._jobs()
        self._fix_paused_jobs_sorting(jobs)
        return jobs

    def _jobs(self, *conditions: Any) -> list[Job]:
        with self.db.read() as session:
            rows = list(
                session.scalars(
                    select(ScheduleRow).where(*conditions).order_by(ScheduleRow.next_run_time)
                )
            )
        return [job for row in rows if (job := self._job(row)) is not None]

    def _job(self, row: ScheduleRow) -> Job | None:
        """The job a row describes, or ``None`` (logged) when the row is not one AWAI wrote."""
        reference = self.functions.get(row.kind)
        if reference is None:
            log.warning("schedule %r skipped: unknown kind %r", row.id, row.kind)
            return None
        try:
            args = json.loads(row.args)
            options = json.loads(row.options)
            if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
                raise ValueError("arguments must be a list of strings")
            state = {
                "version": 1,
                "id": row.id,
                "func": reference,
                "trigger": trigger_from(json.loads(row.trigger)),
                "executor": str(options["executor"]),
                "args": tuple(args),
                "kwargs": {},
                "name": str(options["name"]),
                "misfire_grace_time": options["misfire_grace_time"],
                "coalesce": bool(options["coalesce"]),
                "max_instances": int(options["max_instances"]),
                "next_run_time": _moment(row.next_run_time, UTC),
            }
        except (ValueError, TypeError, KeyError) as error:
            log.warning("schedule %r skipped: %s", row.id, error)
            return None
        job = Job.__new__(Job)
        job.__setstate__(state)
        job._scheduler = self._scheduler
        job._jobstore_alias = self._alias
        return job

    # -- writing -------------------------------------------------------------------------------

    def add_job(self, job: Job) -> None:
        with self.db.session() as session:
            if session.get(ScheduleRow, job.id) is not None:
                raise ConflictingIdError(job.id)
            session.add(self._row(job))

    def update_job(self, job: Job) -> None:
        with self.db.session() as session:
            if session.get(ScheduleRow, job.id) is None:
                raise JobLookupError(job.id)
            session.merge(self._row(job))

    def remove_job(self, job_id: str) -> None:
        with self.db.session() as session:
            if rowcount(session.execute(delete(ScheduleRow).where(ScheduleRow.id == job_id))) == 0:
                raise JobLookupError(job_id)

    def remove_all_jobs(self) -> None:
        with self.db.session() as session:
            session.execute(delete(ScheduleRow))

    def _row(self, job: Job) -> ScheduleRow:
        kind = self.kinds.get(job.func_ref)
        if kind is None:
            raise ValueError(f"only AWAI's own jobs can be stored, not {job.func_ref!r}")
        if not all(isinstance(arg, str) for arg in job.args) or job.kwargs:
            raise ValueError("a stored job takes strings as positional arguments only")
        options = {
            "name": job.name,
            "executor": job.executor,
            "misfire_grace_time": job.misfire_grace_time,
            "coalesce": job.coalesce,
            "max_instances": job.max_instances,
        }
        return ScheduleRow(
            id=job.id,
            kind=kind,
            args=json.dumps(list(job.args), ensure_ascii=False),
            trigger=json.dumps(trigger_data(job.trigger)),
            options=json.dumps(options),
            next_run_time=_seconds(job.next_run_time),
        )


def _seconds(moment: datetime | None) -> float | None:
    return moment.timestamp() if moment is not None else None


def _moment(seconds: float | None, timezone: Any) -> datetime | None:
    return datetime.fromtimestamp(seconds, timezone) if seconds is not None else None
