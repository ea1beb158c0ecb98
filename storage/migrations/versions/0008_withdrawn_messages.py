"""A tombstone says whether the words were edited off the platform rather than deleted.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

A message edited into a command to AWAI, or into a file alone, is forgotten as a deletion is; the
platform's time of that edit is kept with its tombstone, so that a later edit putting words back
is stored again (before, it was refused for good). Existing tombstones stay for good: no record
says which of them were withdrawals.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A database adopted by 0001 from ``create_all`` may have the column already.
    columns = {
        column["name"] for column in sa.inspect(op.get_bind()).get_columns("deleted_messages")
    }
    if "withdrawn_ts" in columns:
        return
    op.add_column("deleted_messages", sa.Column("withdrawn_ts", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("deleted_messages") as batch:
        batch.drop_column("withdrawn_ts")
