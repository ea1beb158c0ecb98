"""Each channel row gets a random incarnation, so a read model made from another database is
never taken for this one's.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

A read model file is taken without reading its rows when SQL's revision and counts match it. A
database reset, restored or replaced under a kept data folder counts revisions and row ids again
from the same numbers, so they can match while the messages differ (a message the database does
not hold would be read). Existing rows get a token each here; new rows get one when made.
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    # A database adopted by 0001 from ``create_all`` may have the column already.
    if "incarnation" not in {column["name"] for column in sa.inspect(bind).get_columns("channels")}:
        op.add_column("channels", sa.Column("incarnation", sa.String(32), nullable=True))
    channels = sa.table("channels", sa.column("id", sa.Integer), sa.column("incarnation"))
    unset = sa.select(channels.c.id).where(channels.c.incarnation.is_(None))
    for (channel_id,) in bind.execute(unset).all():
        bind.execute(
            channels.update()
            .where(channels.c.id == channel_id)
            .values(incarnation=uuid.uuid4().hex)
        )


def downgrade() -> None:
    with op.batch_alter_table("channels") as batch:
        batch.drop_column("incarnation")
