"""A channel's rows get an index by arrival (channel, id).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06

Every catch-up of a read model asks for the rows of one channel after the last id it holds, and
for the fingerprint of those rows alone (:mod:`storage.read_model`). With only the index by
channel order (channel, time, id) to go by, SQLite found the channel's rows by that index and
tested each one's id: every query read all of the channel's rows, 7 to 27 ms each at 100,000
messages, several times per batch an ingest stores, so an ingest's cost per message grew with the
channel. By (channel, id) each is a range of the rows asked for (0.1 to 0.6 ms). The index holds
the synced rows alone, with the predicate written as those queries write it (SQLite matches a
partial index by form): whole, SQLite preferred it to ``ix_utterance_unsynced`` for the count of
rows not yet synced, which then read every row of the channel again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A database adopted by 0001 from ``create_all`` may have the index already.
    indexes = {index["name"] for index in sa.inspect(op.get_bind()).get_indexes("utterances")}
    if "ix_utterance_arrival" in indexes:
        return
    op.create_index(
        "ix_utterance_arrival",
        "utterances",
        ["channel_id", "id"],
        sqlite_where=sa.text("synced IS 1"),
        postgresql_where=sa.text("synced IS true"),
    )


def downgrade() -> None:
    op.drop_index("ix_utterance_arrival", table_name="utterances")
