"""Which transcript file was stored into which channel, as it was: so a file read again unchanged
is not parsed and checked again, and one that grew is read from where it ended.

Why in SQL, per channel: the record must go with the channel (dropping it, or losing the
database, makes every file new again), and the same file may be read into several channels. A
file is known by its absolute path. What is kept is what the next read needs to decide without
reading (size, modification time, inode), to prove the start is unchanged (the BLAKE2b digest of
the bytes read), and to go on (lines read, the last line's time). No speaker name or text is kept
here: the speakers and ids a resumed read needs come from the stored messages themselves, so a
forgotten person leaves nothing behind in this table.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from sqlalchemy import BigInteger, Float, ForeignKey, Integer, String, delete, select
from sqlalchemy.orm import Mapped, mapped_column

from storage.sql import Base, Database, UtteranceRow


class TranscriptFileRow(Base):
    __tablename__ = "transcript_files"

    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    # BLAKE2b of the absolute path: a key of fixed width whatever the path's length.
    path_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)
    mtime_ns: Mapped[int] = mapped_column(BigInteger)
    # Changed by every write and not settable: catches a rewrite that kept size and mtime.
    ctime_ns: Mapped[int] = mapped_column(BigInteger)
    inode: Mapped[int] = mapped_column(BigInteger)
    digest: Mapped[str] = mapped_column(String(64))
    lines: Mapped[int] = mapped_column(Integer)
    last_ts: Mapped[float] = mapped_column(Float)
    # Whether the last line had its line end: only then can appended bytes start a new line.
    ends_whole: Mapped[bool] = mapped_column(default=True)
    refused_lines: Mapped[int] = mapped_column(Integer, default=0)
    stored_at: Mapped[float] = mapped_column(Float, default=time.time)


@dataclass(frozen=True)
class StoredFile:
    """A transcript file as it was when everything it held was stored into a channel."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    digest: str
    lines: int
    last_ts: float
    ends_whole: bool
    refused_lines: int


def path_key(path: str) -> str:
    return hashlib.blake2b(path.encode("utf-8", "surrogateescape"), digest_size=32).hexdigest()


class TranscriptFiles:
    """The record of stored transcript files, per channel."""

    def __init__(self, database: Database) -> None:
        self.db = database

    def get(self, channel: str, path: str) -> StoredFile | None:
        with self.db.read() as session:
            row_of_channel = self.db.channel(session, channel)
            if row_of_channel is None:
                return None
            row = session.get(TranscriptFileRow, (row_of_channel.id, path_key(path)))
            if row is None:
                return None
            return StoredFile(
                row.size,
                row.mtime_ns,
                row.ctime_ns,
                row.inode,
                row.digest,
                row.lines,
                row.last_ts,
                row.ends_whole,
                row.refused_lines,
            )

    def record(self, channel: str, path: str, stored: StoredFile) -> None:
        """Remember ``path`` as stored into ``channel`` (call after everything in it was)."""
        with self.db.session() as session:
            row_of_channel = self.db.channel(session, channel)
            if row_of_channel is None:
                return
            key = (row_of_channel.id, path_key(path))
            row = session.get(TranscriptFileRow, key)
            if row is None:
                row = TranscriptFileRow(channel_id=key[0], path_key=key[1])
                session.add(row)
            row.size, row.mtime_ns, row.ctime_ns = stored.size, stored.mtime_ns, stored.ctime_ns
            row.inode = stored.inode
            row.digest, row.lines, row.last_ts = stored.digest, stored.lines, stored.last_ts
            row.ends_whole, row.refused_lines = stored.ends_whole, stored.refused_lines
            row.stored_at = time.time()

    def forget(self, channel: str, path: str) -> None:
        """Drop the record of ``path`` (before storing what changed in it: see the module)."""
        with self.db.session() as session:
            row_of_channel = self.db.channel(session, channel)
            if row_of_channel is not None:
                session.execute(
                    delete(TranscriptFileRow).where(
                        TranscriptFileRow.channel_id == row_of_channel.id,
                        TranscriptFileRow.path_key == path_key(path),
                    )
                )

    def speakers_and_ids(self, channel: str) -> tuple[tuple[str, ...], frozenset[str]]:
        """The channel's stored speakers (display names, in order of their first message) and
        message ids: what lines appended to a stored file are read against."""
        with self.db.read() as session:
            row_of_channel = self.db.channel(session, channel)
            if row_of_channel is None:
                return (), frozenset()
            mine = UtteranceRow.channel_id == row_of_channel.id
            rows = session.execute(
                select(UtteranceRow.speaker_name, UtteranceRow.message_id)
                .where(mine)
                .order_by(UtteranceRow.id)
            )
            speakers: dict[str, None] = {}
            ids = []
            for speaker, message_id in rows:
                speakers.setdefault(speaker)
                ids.append(message_id)
            return tuple(speakers), frozenset(ids)
