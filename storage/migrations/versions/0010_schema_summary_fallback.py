"""A memoised schema summary says whether it was made without the language model.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01

A process with no model (an operator's ``awai read`` without an API key) or one whose model
failed names a schema by its keyphrases. Stored unmarked, that name was final: whichever process
showed a version first decided its words for good. Marked, it is reused offline only, and a
process with the model writes the model's summary over it, once. Existing rows are not marked (no
record says which of them were written offline).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A database adopted by 0001 from ``create_all`` may have the column already.
    columns = {
        column["name"] for column in sa.inspect(op.get_bind()).get_columns("schema_summaries")
    }
    if "fallback" in columns:
        return
    # SQLite adds a column in place, a NOT NULL one too when it has a default: no copy.
    op.add_column(
        "schema_summaries",
        sa.Column("fallback", sa.Boolean(), nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    with op.batch_alter_table("schema_summaries") as batch:
        batch.drop_column("fallback")
