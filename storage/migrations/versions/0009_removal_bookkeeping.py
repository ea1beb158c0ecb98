"""A withdrawn message's tombstone names its speaker, and each channel counts its removals.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01

A withdrawal (0008) may be undone by a later edit; a forget-me must make it for good, and only the
tombstone is left to find it by, so a withdrawal now keeps the speaker's id until it becomes for
good. Withdrawals made before this revision have no speaker to be found by, so they become for good
here: a later edit that puts words back is refused, as it was before 0008.

``channels.removals`` goes up with every deletion, withdrawal, revival and forget-me: other
processes compare it to know they must drop what they hold (a count of tombstones goes back down
when a withdrawal is undone, and could hide the withdrawal from them).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def _columns(table: str) -> set[str]:
    return {column["name"] for column in sa.inspect(op.get_bind()).get_columns(table)}


def upgrade() -> None:
    # A database adopted by 0001 from ``create_all`` may have the columns already.
    if "speaker_id" not in _columns("deleted_messages"):
        op.add_column("deleted_messages", sa.Column("speaker_id", sa.String(255), nullable=True))
    if "removals" not in _columns("channels"):
        op.add_column(
            "channels",
            sa.Column("removals", sa.Integer(), nullable=False, server_default="0"),
        )
    tombstones = sa.table(
        "deleted_messages", sa.column("withdrawn_ts", sa.Float), sa.column("speaker_id")
    )
    op.get_bind().execute(
        tombstones.update()
        .where(tombstones.c.withdrawn_ts.is_not(None), tombstones.c.speaker_id.is_(None))
        .values(withdrawn_ts=None)
    )


def downgrade() -> None:
    with op.batch_alter_table("channels") as batch:
        batch.drop_column("removals")
    with op.batch_alter_table("deleted_messages") as batch:
        batch.drop_column("speaker_id")
