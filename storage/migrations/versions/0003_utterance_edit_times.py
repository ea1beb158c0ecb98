"""Utterances keep the platform's time of their text's last edit, so an older version never wins.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01

A retried or late event, or a history page fetched before an edit, carries an older version of a
message than the one stored; comparing texts alone let it replace the edit. ``edited_ts`` is the
platform's own edit time (Slack's ``edited.ts``, Discord's ``edited_at``); rows from before this
revision have none, so for them the next version simply wins, as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A database adopted by 0001 from ``create_all`` may have the column already.
    columns = {column["name"] for column in sa.inspect(op.get_bind()).get_columns("utterances")}
    if "edited_ts" not in columns:  # SQLite adds a column in place: no copy of the table
        op.add_column("utterances", sa.Column("edited_ts", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("utterances") as table:
        table.drop_column("edited_ts")
