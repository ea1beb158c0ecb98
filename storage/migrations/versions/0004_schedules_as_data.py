"""Scheduled jobs kept as data (``awai_schedules``), and APScheduler's pickled job table dropped.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

APScheduler's ``SQLAlchemyJobStore`` kept pickled jobs in ``awai_scheduler_jobs``: whoever could
write the database could run code in every bot process. :mod:`storage.job_store` keeps the same
jobs as JSON. The old rows are not converted, because reading them means unpickling them: they are
dropped, and nothing is lost that a start does not make again (the re-clustering job is added by
every scheduler start, the adapters schedule each channel's digest from their settings at start).
At most, a run missed while stopped is not made up.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

PICKLED_JOBS = "awai_scheduler_jobs"


def upgrade() -> None:
    tables = set(sa.inspect(op.get_bind()).get_table_names())
    if "awai_schedules" not in tables:
        op.create_table(
            "awai_schedules",
            sa.Column("id", sa.String(512), primary_key=True),
            sa.Column("kind", sa.String(64), nullable=False),
            sa.Column("args", sa.Text(), nullable=False),
            sa.Column("trigger", sa.Text(), nullable=False),
            sa.Column("options", sa.Text(), nullable=False),
            sa.Column("next_run_time", sa.Float(), nullable=True),
        )
        op.create_index("ix_awai_schedules_next_run_time", "awai_schedules", ["next_run_time"])
    if PICKLED_JOBS in tables:
        op.drop_table(PICKLED_JOBS)


def downgrade() -> None:
    op.drop_index("ix_awai_schedules_next_run_time", table_name="awai_schedules")
    op.drop_table("awai_schedules")
