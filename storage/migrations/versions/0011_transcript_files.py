"""Transcript files stored into a channel, as they were: ``awai read FILE`` skips an unchanged one.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03

A file read again was parsed and checked line by line every time: 41 s for a 62,000-line
transcript stored long before. A row per file and channel (size, modification time, inode, the
digest of its bytes, its lines and the last line's time) lets the next read skip it when nothing
changed and read only the lines appended since (see :mod:`storage.transcript_files`). Nothing to
convert: a database without rows reads every file once more, then records it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A database adopted by 0001 from ``create_all`` may have the table already.
    if "transcript_files" in sa.inspect(op.get_bind()).get_table_names():
        return
    op.create_table(
        "transcript_files",
        sa.Column(
            "channel_id",
            sa.Integer(),
            sa.ForeignKey("channels.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("path_key", sa.String(64), primary_key=True),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("mtime_ns", sa.BigInteger(), nullable=False),
        sa.Column("ctime_ns", sa.BigInteger(), nullable=False),
        sa.Column("inode", sa.BigInteger(), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("lines", sa.Integer(), nullable=False),
        sa.Column("last_ts", sa.Float(), nullable=False),
        sa.Column("ends_whole", sa.Boolean(), nullable=False),
        sa.Column("refused_lines", sa.Integer(), nullable=False),
        sa.Column("stored_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("transcript_files")
