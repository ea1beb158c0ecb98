"""Thoughts made offline while the language model did not answer are marked, to be redone.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

A marked message is never kept as final: ``awai reextract`` and the scheduled re-extraction ask
the model again and replace its thoughts at the same position. Existing rows are not marked (no
record says which of them were fallbacks).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A database adopted by 0001 from ``create_all`` may have the column already.
    columns = {column["name"] for column in sa.inspect(op.get_bind()).get_columns("utterances")}
    if "extraction_fallback" in columns:
        return
    # SQLite adds a column in place, a NOT NULL one too when it has a default: no copy.
    op.add_column(
        "utterances",
        sa.Column("extraction_fallback", sa.Boolean(), nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    with op.batch_alter_table("utterances") as batch:
        batch.drop_column("extraction_fallback")
