"""Shared readings: the message each one reads, so a message has one shared reading.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

- ``awai_posts.subject``: the stored message a shared reading reads (NULL for digests and for
  posts recorded before this revision), indexed with the channel, so a second "Share" of the
  same message links to the first post instead of posting it again.

Like 0001 it adopts a database whose tables came from ``create_all``: what exists is kept.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if "subject" not in {column["name"] for column in inspector.get_columns("awai_posts")}:
        op.add_column("awai_posts", sa.Column("subject", sa.String(255), nullable=True))
    if "ix_awai_posts_subject" not in {
        index["name"] for index in inspector.get_indexes("awai_posts")
    }:
        op.create_index("ix_awai_posts_subject", "awai_posts", ["channel_id", "subject"])


def downgrade() -> None:
    op.drop_index("ix_awai_posts_subject", table_name="awai_posts")
    op.drop_column("awai_posts", "subject")
