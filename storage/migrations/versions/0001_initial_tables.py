"""The initial tables: channels, utterances and their edits, thoughts, tombstones, schemas, state.

Revision ID: 0001
Revises:
Create Date: 2026-11-29

A database made before migrations existed (the tables came from ``create_all``) is adopted: each
table is created only when it is missing, so such a database ends at this revision unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _channel_id() -> sa.Column:
    return sa.Column(
        "channel_id",
        sa.Integer(),
        sa.ForeignKey("channels.id", ondelete="CASCADE"),
        nullable=False,
        autoincrement=False,
    )


def _channels() -> None:
    op.create_table(
        "channels",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("key", sa.String(512), nullable=False, unique=True),
        sa.Column("collection", sa.String(512), nullable=False, unique=True),
        sa.Column("embedding_model", sa.String(512), nullable=True),
        sa.Column("dimension", sa.Integer(), nullable=True),
        sa.Column("revision", sa.Integer(), nullable=False),
    )


def _utterances() -> None:
    op.create_table(
        "utterances",
        sa.Column("id", sa.Integer(), primary_key=True),
        _channel_id(),
        sa.Column("message_id", sa.String(255), nullable=False),
        sa.Column("speaker_id", sa.String(255), nullable=False),
        sa.Column("speaker_name", sa.String(255), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("ts", sa.Float(), nullable=False),
        sa.Column("thread_root", sa.String(255), nullable=True),
        sa.Column("addressees", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("synced", sa.Boolean(), nullable=False),
        sa.Column("edited_at", sa.Float(), nullable=True),
        sa.UniqueConstraint("channel_id", "message_id", name="uq_utterance_message"),
    )
    op.create_index("ix_utterance_order", "utterances", ["channel_id", "ts", "id"])
    op.create_index("ix_utterance_speaker", "utterances", ["channel_id", "speaker_id"])


def _utterance_versions() -> None:
    op.create_table(
        "utterance_versions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "utterance_id",
            sa.Integer(),
            sa.ForeignKey("utterances.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("replaced_at", sa.Float(), nullable=False),
    )
    op.create_index("ix_utterance_versions_utterance_id", "utterance_versions", ["utterance_id"])


def _thoughts() -> None:
    op.create_table(
        "thoughts",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "utterance_id",
            sa.Integer(),
            sa.ForeignKey("utterances.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.UniqueConstraint("utterance_id", "idx", name="uq_thought_index"),
    )


def _deleted_messages() -> None:
    op.create_table(
        "deleted_messages",
        _channel_id(),
        sa.Column("message_id", sa.String(255), nullable=False),
        sa.Column("deleted_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("channel_id", "message_id"),
    )


def _backfill_cursors() -> None:
    op.create_table(
        "backfill_cursors",
        sa.Column("channel_key", sa.String(512), primary_key=True),
        sa.Column("cursor", sa.Text(), nullable=True),
        sa.Column("done", sa.Boolean(), nullable=False),
        sa.Column("fetched", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
    )


def _claims() -> None:
    op.create_table(
        "claims",
        sa.Column("key", sa.String(512), primary_key=True),
        sa.Column("claimed_at", sa.Float(), nullable=False),
    )


def _schema_runs() -> None:
    op.create_table(
        "schema_runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        _channel_id(),
        sa.Column("speaker_id", sa.String(255), nullable=False),
        sa.Column("speaker_name", sa.String(255), nullable=False),
        sa.Column("method", sa.String(128), nullable=False),
        sa.Column("basis_count", sa.Integer(), nullable=False),
        sa.Column("basis_digest", sa.String(64), nullable=False),
        sa.Column("basis_message_id", sa.String(255), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.UniqueConstraint(
            "channel_id", "speaker_id", "method", "basis_digest", name="uq_run_basis"
        ),
    )
    op.create_index(
        "ix_run_speaker_count", "schema_runs", ["channel_id", "speaker_id", "basis_count"]
    )


def _schema_versions() -> None:
    op.create_table(
        "schema_versions",
        sa.Column("id", sa.Integer(), primary_key=True),
        _channel_id(),
        sa.Column("speaker_id", sa.String(255), nullable=False),
        sa.Column("speaker_name", sa.String(255), nullable=False),
        sa.Column("schema_id", sa.String(64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("members", sa.Text(), nullable=False),
        sa.Column("member_positions", sa.Text(), nullable=False),
        sa.Column("centroid", sa.LargeBinary(), nullable=False),
        sa.Column("as_of", sa.Integer(), nullable=False),
        sa.Column("as_of_message_id", sa.String(255), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.UniqueConstraint("channel_id", "schema_id", "version", name="uq_schema_version"),
    )
    op.create_index("ix_schema_version_speaker", "schema_versions", ["channel_id", "speaker_id"])


def _schema_run_versions() -> None:
    op.create_table(
        "schema_run_versions",
        sa.Column(
            "run_id",
            sa.Integer(),
            sa.ForeignKey("schema_runs.id", ondelete="CASCADE"),
            nullable=False,
            autoincrement=False,
        ),
        sa.Column(
            "version_id",
            sa.Integer(),
            sa.ForeignKey("schema_versions.id", ondelete="CASCADE"),
            nullable=False,
            autoincrement=False,
        ),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "version_id"),
    )
    op.create_index("ix_schema_run_versions_version_id", "schema_run_versions", ["version_id"])


def _schema_summaries() -> None:
    op.create_table(
        "schema_summaries",
        sa.Column("id", sa.Integer(), primary_key=True),
        _channel_id(),
        sa.Column("speaker_id", sa.String(255), nullable=False),
        sa.Column("members_digest", sa.String(64), nullable=False),
        sa.Column("members", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.UniqueConstraint("channel_id", "members_digest", name="uq_summary_members"),
    )
    op.create_index("ix_summary_speaker", "schema_summaries", ["channel_id", "speaker_id"])


def _schema_digests() -> None:
    op.create_table(
        "schema_digests",
        sa.Column("id", sa.Integer(), primary_key=True),
        _channel_id(),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("entries", sa.Text(), nullable=False),
    )
    op.create_index("ix_schema_digests_channel_id", "schema_digests", ["channel_id"])


def _schema_marks() -> None:
    op.create_table(
        "schema_marks",
        sa.Column(
            "channel_id",
            sa.Integer(),
            sa.ForeignKey("channels.id", ondelete="CASCADE"),
            primary_key=True,
            autoincrement=False,
        ),
        sa.Column("revision", sa.Integer(), nullable=True),
        sa.Column("purged_until", sa.Float(), nullable=False),
    )


# In dependency order: a table comes after the tables its foreign keys name.
TABLES: dict[str, Callable[[], None]] = {
    "channels": _channels,
    "utterances": _utterances,
    "utterance_versions": _utterance_versions,
    "thoughts": _thoughts,
    "deleted_messages": _deleted_messages,
    "backfill_cursors": _backfill_cursors,
    "claims": _claims,
    "schema_runs": _schema_runs,
    "schema_versions": _schema_versions,
    "schema_run_versions": _schema_run_versions,
    "schema_summaries": _schema_summaries,
    "schema_digests": _schema_digests,
    "schema_marks": _schema_marks,
}


def upgrade() -> None:
    existing = set(sa.inspect(op.get_bind()).get_table_names())
    for name, create in TABLES.items():
        if name not in existing:
            create()


def downgrade() -> None:
    for name in reversed(TABLES):
        op.drop_table(name)
