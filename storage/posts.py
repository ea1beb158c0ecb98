"""The record of AWAI's own posts in SQL (:class:`awai_engine.posts.PostStore`).

A post hangs off its channel (``ON DELETE CASCADE``: dropping a channel drops its record) and
lists the ids of the stored messages it quotes; only ids, never text. "Due for redaction" is a
join with the tombstones, so nothing has to be marked at delete time and a crash in between
loses nothing.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from sqlalchemy import (
    Float,
    ForeignKey,
    Index,
    Integer,
    Select,
    String,
    UniqueConstraint,
    delete,
    select,
)
from sqlalchemy.orm import Mapped, mapped_column

from awai_engine.posts import Post
from storage.sql import Base, ChannelRow, Database, DeletedMessageRow


class PostRow(Base):
    __tablename__ = "awai_posts"
    __table_args__ = (
        UniqueConstraint("place", "post_id", "part", name="uq_awai_post"),
        Index("ix_awai_posts_subject", "channel_id", "subject"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), index=True
    )
    place: Mapped[str] = mapped_column(String(512))
    post_id: Mapped[str] = mapped_column(String(255))
    part: Mapped[str] = mapped_column(String(64))
    posted_at: Mapped[float] = mapped_column(Float)
    subject: Mapped[str | None] = mapped_column(String(255), nullable=True, default=None)
    """The message a shared reading reads (one shared reading per message); None for a digest."""


class PostSourceRow(Base):
    """One stored message a post quotes."""

    __tablename__ = "awai_post_sources"
    __table_args__ = (Index("ix_awai_post_source_message", "message_id"),)

    post_id: Mapped[int] = mapped_column(
        ForeignKey("awai_posts.id", ondelete="CASCADE"), primary_key=True
    )
    message_id: Mapped[str] = mapped_column(String(255), primary_key=True)


class SqlPostStore:
    def __init__(self, database: Database) -> None:
        self.db = database

    def record(self, post: Post, sources: Sequence[str]) -> None:
        with self.db.session() as session:
            channel = self.db.channel(session, post.channel)
            if channel is None:
                return  # nothing stored of that channel, so the post quotes nothing of ours
            row = session.scalars(_same(post)).one_or_none()
            if row is None:
                row = PostRow(
                    channel_id=channel.id,
                    place=post.place,
                    post_id=post.post_id,
                    part=post.part,
                    posted_at=time.time(),
                    subject=post.subject,
                )
                session.add(row)
                session.flush()
            else:
                session.execute(delete(PostSourceRow).where(PostSourceRow.post_id == row.id))
            session.add_all(
                PostSourceRow(post_id=row.id, message_id=message_id)
                for message_id in dict.fromkeys(sources)
            )

    def quoting_removed(self, channel: str | None = None) -> list[Post]:
        query = (
            select(ChannelRow.key, PostRow.place, PostRow.post_id, PostRow.part)
            .join(ChannelRow, ChannelRow.id == PostRow.channel_id)
            .where(
                select(PostSourceRow.message_id)
                .join(
                    DeletedMessageRow,
                    (DeletedMessageRow.message_id == PostSourceRow.message_id)
                    & (DeletedMessageRow.channel_id == PostRow.channel_id),
                )
                .where(PostSourceRow.post_id == PostRow.id)
                .exists()
            )
            .order_by(PostRow.id)
        )
        if channel is not None:
            query = query.where(ChannelRow.key == channel)
        with self.db.read() as session:
            return [
                Post(channel=key, place=place, post_id=post_id, part=part)
                for key, place, post_id, part in session.execute(query)
            ]

    def forget(self, post: Post) -> None:
        with self.db.session() as session:
            session.execute(
                delete(PostRow).where(
                    PostRow.place == post.place,
                    PostRow.post_id == post.post_id,
                    PostRow.part == post.part,
                )
            )

    def shared_reading(self, channel: str, subject: str) -> Post | None:
        query = (
            select(ChannelRow.key, PostRow.place, PostRow.post_id, PostRow.part)
            .join(ChannelRow, ChannelRow.id == PostRow.channel_id)
            .where(ChannelRow.key == channel, PostRow.subject == subject)
            .order_by(PostRow.id)
            .limit(1)
        )
        with self.db.read() as session:
            row = session.execute(query).first()
        if row is None:
            return None
        key, place, post_id, part = row  # its subject is the one asked for
        return Post(channel=key, place=place, post_id=post_id, part=part, subject=subject)

    def count(self, channel: str) -> int:
        """Posts on record for a channel (for reports and tests)."""
        with self.db.read() as session:
            return len(
                session.scalars(
                    select(PostRow.id)
                    .join(ChannelRow, ChannelRow.id == PostRow.channel_id)
                    .where(ChannelRow.key == channel)
                ).all()
            )


def _same(post: Post) -> Select[PostRow]:
    return select(PostRow).where(
        PostRow.place == post.place, PostRow.post_id == post.post_id, PostRow.part == post.part
    )
