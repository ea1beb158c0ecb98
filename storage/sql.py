"""The relational side: the record of what exists (channels, utterances and their edits, thoughts).

SQL is the source of truth. Chroma holds vectors for rows marked ``synced``; a row is written here
first with ``synced = false``, its vectors go to Chroma, and only then is it marked synced, so a
crash in between leaves a row that reconciliation can finish (see :mod:`storage.store`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import (
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    select,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    Session,
    mapped_column,
    relationship,
    sessionmaker,
)


class Base(DeclarativeBase):
    pass


class ChannelRow(Base):
    __tablename__ = "channels"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(512), unique=True)
    collection: Mapped[str] = mapped_column(String(512), unique=True)
    embedding_model: Mapped[str | None] = mapped_column(String(512))
    dimension: Mapped[int | None] = mapped_column(Integer)
    # Bumped by every change readers must see; a cached read model compares it to stay fresh.
    revision: Mapped[int] = mapped_column(Integer, default=0)


class UtteranceRow(Base):
    __tablename__ = "utterances"
    __table_args__ = (
        UniqueConstraint("channel_id", "message_id", name="uq_utterance_message"),
        Index("ix_utterance_order", "channel_id", "ts", "id"),
        Index("ix_utterance_speaker", "channel_id", "speaker_id"),
    )

    # The autoincrement id is the arrival order: it breaks ties between equal timestamps.
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    message_id: Mapped[str] = mapped_column(String(255))
    speaker_id: Mapped[str] = mapped_column(String(255))
    speaker_name: Mapped[str] = mapped_column(String(255))
    text: Mapped[str] = mapped_column(Text)
    ts: Mapped[float] = mapped_column(Float)
    thread_root: Mapped[str | None] = mapped_column(String(255))
    addressees: Mapped[str] = mapped_column(Text, default="[]")
    summary: Mapped[str] = mapped_column(Text, default="")
    synced: Mapped[bool] = mapped_column(Boolean, default=False)
    edited_at: Mapped[float | None] = mapped_column(Float)

    thoughts: Mapped[list[ThoughtRow]] = relationship(
        back_populates="utterance",
        cascade="all, delete-orphan",
        order_by="ThoughtRow.idx",
        passive_deletes=True,
    )
    versions: Mapped[list[UtteranceVersionRow]] = relationship(
        cascade="all, delete-orphan", order_by="UtteranceVersionRow.id", passive_deletes=True
    )

    def addressee_names(self) -> tuple[str, ...]:
        return tuple(json.loads(self.addressees or "[]"))


class UtteranceVersionRow(Base):
    """An earlier text of an edited utterance: the edit history."""

    __tablename__ = "utterance_versions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    utterance_id: Mapped[int] = mapped_column(
        ForeignKey("utterances.id", ondelete="CASCADE"), index=True
    )
    text: Mapped[str] = mapped_column(Text)
    replaced_at: Mapped[float] = mapped_column(Float)


class ThoughtRow(Base):
    __tablename__ = "thoughts"
    __table_args__ = (UniqueConstraint("utterance_id", "idx", name="uq_thought_index"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    utterance_id: Mapped[int] = mapped_column(ForeignKey("utterances.id", ondelete="CASCADE"))
    idx: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)

    utterance: Mapped[UtteranceRow] = relationship(back_populates="thoughts")


class DeletedMessageRow(Base):
    """A tombstone: the id of a deleted message, so redelivery or backfill cannot bring it back."""

    __tablename__ = "deleted_messages"

    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    message_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    deleted_at: Mapped[float] = mapped_column(Float, default=time.time)


def make_engine(url: str) -> Engine:
    """An engine with SQLite tuned for several threads: WAL, a busy timeout, foreign keys on."""
    is_sqlite = url.startswith("sqlite")
    engine = create_engine(
        url,
        connect_args={"timeout": 30, "check_same_thread": False} if is_sqlite else {},
        pool_pre_ping=not is_sqlite,
    )
    if is_sqlite:

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record):  # type: ignore[no-untyped-def]
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

    return engine


class Database:
    """Sessions on one SQLAlchemy engine; tables of every imported model are created on first use."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        Base.metadata.create_all(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One short transaction: committed on success, rolled back on error."""
        with self._sessions() as session, session.begin():
            yield session

    def channel(self, session: Session, key: str) -> ChannelRow | None:
        return session.scalars(select(ChannelRow).where(ChannelRow.key == key)).one_or_none()

    def dispose(self) -> None:
        self.engine.dispose()
