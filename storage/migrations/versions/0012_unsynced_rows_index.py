"""The rows not yet marked synced get an index of their own.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05

Every start counts, in every channel, the rows written and not yet marked synced (a crash between
SQL and Chroma leaves some; :mod:`storage.repair`). Without an index the count read every row of
the channel: 14 ms at 100,000 messages, paid by each channel at each start and by each
``awai read FILE``. These rows are a handful at most, so a partial index holds them alone. Its
predicate is the count's own (``synced IS 0`` as SQLite renders it, ``synced IS false`` in
PostgreSQL): SQLite uses a partial index only for a query whose condition has the same form.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A database adopted by 0001 from ``create_all`` may have the index already.
    indexes = {index["name"] for index in sa.inspect(op.get_bind()).get_indexes("utterances")}
    if "ix_utterance_unsynced" in indexes:
        return
    op.create_index(
        "ix_utterance_unsynced",
        "utterances",
        ["channel_id"],
        sqlite_where=sa.text("synced IS 0"),
        postgresql_where=sa.text("synced IS false"),
    )


def downgrade() -> None:
    op.drop_index("ix_utterance_unsynced", table_name="utterances")
