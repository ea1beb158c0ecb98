"""Bookkeeping the adapters need, kept generic: backfill cursors and once-only request claims.

Why in SQL: both must hold across restarts and across several bot processes. A claim is a row
with a unique key, so two processes (or threads) asking for the same reading at once get one
winner from the database's constraint, not from an in-process cache.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlalchemy import Boolean, Float, Integer, String, Text, delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from storage.sql import Base, Database


class BackfillCursorRow(Base):
    __tablename__ = "backfill_cursors"

    channel_key: Mapped[str] = mapped_column(String(512), primary_key=True)
    cursor: Mapped[str | None] = mapped_column(Text)
    done: Mapped[bool] = mapped_column(Boolean, default=False)
    fetched: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[float] = mapped_column(Float, default=time.time)


class ClaimRow(Base):
    __tablename__ = "claims"

    key: Mapped[str] = mapped_column(String(512), primary_key=True)
    claimed_at: Mapped[float] = mapped_column(Float)


@dataclass(frozen=True)
class BackfillCursor:
    """Where one backfill got to: the platform's cursor, messages fetched, whether it finished."""

    cursor: str | None
    fetched: int
    done: bool


class BackfillCursors:
    """Where a channel's history backfill got to, so it resumes after a restart."""

    def __init__(self, database: Database) -> None:
        self.db = database

    def get(self, channel_key: str) -> BackfillCursor | None:
        with self.db.read() as session:
            row = session.get(BackfillCursorRow, channel_key)
            return None if row is None else BackfillCursor(row.cursor, row.fetched, row.done)

    def save(self, channel_key: str, cursor: str | None, fetched: int, done: bool = False) -> None:
        with self.db.session() as session:
            row = session.get(BackfillCursorRow, channel_key)
            if row is None:
                row = BackfillCursorRow(channel_key=channel_key)
                session.add(row)
            row.cursor, row.fetched, row.done, row.updated_at = cursor, fetched, done, time.time()

    def forget(self, channel_key: str) -> None:
        with self.db.session() as session:
            session.execute(
                delete(BackfillCursorRow).where(BackfillCursorRow.channel_key == channel_key)
            )

    def forget_prefix(self, prefix: str) -> int:
        """Forget every cursor whose key starts with ``prefix`` (a server's, a workspace's);
        returns how many. Why by prefix: a place has cursors under keys no stored channel names
        (a thread's catch-up and backfill, a channel never read), which a purge must not leave."""
        with self.db.session() as session:
            gone = session.execute(
                delete(BackfillCursorRow).where(
                    BackfillCursorRow.channel_key.startswith(prefix, autoescape=True)
                )
            )
            return int(gone.rowcount or 0)  # type: ignore[attr-defined]


class Claims:
    """Once-only work across threads and processes: the first to claim a key within a window wins."""

    def __init__(self, database: Database) -> None:
        self.db = database

    def claim(self, key: str, window_seconds: float) -> bool:
        """``True`` for the first caller of ``key`` in the last ``window_seconds``, else ``False``."""
        now = time.time()
        with self.db.session() as session:
            session.execute(
                delete(ClaimRow).where(
                    ClaimRow.key == key, ClaimRow.claimed_at < now - window_seconds
                )
            )
        try:
            with self.db.session() as session:
                session.add(ClaimRow(key=key, claimed_at=now))
            return True
        except IntegrityError:
            return False

    def release(self, key: str) -> None:
        """Give up a claim before its window ends (the work it guarded failed), so a retry runs."""
        with self.db.session() as session:
            session.execute(delete(ClaimRow).where(ClaimRow.key == key))

    def held(self, key: str) -> bool:
        with self.db.session() as session:
            return session.scalar(select(ClaimRow.key).where(ClaimRow.key == key)) is not None
