"""Privacy: each message's visibility scope, the record of AWAI's posts, and pending erasures.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01

- ``utterances.scope``: who may see a message ("channel" for everyone who may read the channel,
  which every message stored before this revision gets);
- ``awai_posts`` / ``awai_post_sources``: which stored messages each AWAI post quotes, so a post
  is redacted when one of them is deleted or forgotten;
- ``pending_erasures``: a forget or delete whose last steps (vectors rewritten, files vacuumed)
  are not done yet, so a crash is finished by the next start.

Like 0001 it adopts a database whose tables came from ``create_all``: what exists is kept.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    tables = set(inspector.get_table_names())
    if "scope" not in {column["name"] for column in inspector.get_columns("utterances")}:
        op.add_column(
            "utterances",
            sa.Column("scope", sa.String(255), nullable=False, server_default="channel"),
        )
    if "awai_posts" not in tables:
        op.create_table(
            "awai_posts",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column(
                "channel_id",
                sa.Integer(),
                sa.ForeignKey("channels.id", ondelete="CASCADE"),
                nullable=False,
            ),
            sa.Column("place", sa.String(512), nullable=False),
            sa.Column("post_id", sa.String(255), nullable=False),
            sa.Column("part", sa.String(64), nullable=False),
            sa.Column("posted_at", sa.Float(), nullable=False),
            sa.UniqueConstraint("place", "post_id", "part", name="uq_awai_post"),
        )
        op.create_index("ix_awai_posts_channel_id", "awai_posts", ["channel_id"])
    if "awai_post_sources" not in tables:
        op.create_table(
            "awai_post_sources",
            sa.Column(
                "post_id",
                sa.Integer(),
                sa.ForeignKey("awai_posts.id", ondelete="CASCADE"),
                nullable=False,
            ),
            sa.Column("message_id", sa.String(255), nullable=False),
            sa.PrimaryKeyConstraint("post_id", "message_id"),
        )
        op.create_index("ix_awai_post_source_message", "awai_post_sources", ["message_id"])
    if "pending_erasures" not in tables:
        op.create_table(
            "pending_erasures",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column("channel_key", sa.String(512), nullable=False),
            sa.Column("speaker_id", sa.String(255), nullable=True),
            sa.Column("requested_at", sa.Float(), nullable=False),
        )


def downgrade() -> None:
    op.drop_table("pending_erasures")
    op.drop_table("awai_post_sources")
    op.drop_table("awai_posts")
    op.drop_column("utterances", "scope")
