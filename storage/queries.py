"""SQL statements the parts of the store share: finding a channel's row, tombstones, revisions.

Each part (writes, the read model, repair, re-embedding) opens its own transactions; these are
the statements they all run inside them, kept in one place so that, for instance, every change
bumps the revision the same way (``revision = revision + 1`` in SQL, never a lost update).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, Result, Select, func, select, update
from sqlalchemy.orm import Session

from storage.errors import StorageError
from storage.sql import ChannelRow, Database, DeletedMessageRow, UtteranceRow


def rowcount(result: Result[Any]) -> int:
    """The rows an UPDATE or DELETE matched. ``Session.execute`` is typed to return a ``Result``,
    which has no count; for these statements it returns the ``CursorResult`` that has one."""
    return cast(CursorResult[Any], result).rowcount


def channel_row(db: Database, session: Session, channel: str) -> ChannelRow:
    """The channel's row; a :class:`StorageError` for a channel never stored."""
    row = db.channel(session, channel)
    if row is None:
        raise StorageError(f"Unknown channel {channel!r}.")
    return row


def utterance_row(session: Session, channel_id: int, message_id: str) -> UtteranceRow | None:
    return session.scalars(
        select(UtteranceRow).where(
            UtteranceRow.channel_id == channel_id, UtteranceRow.message_id == message_id
        )
    ).one_or_none()


def thought_texts(row: UtteranceRow) -> tuple[str, ...]:
    return tuple(thought.text for thought in row.thoughts)


def bump_revision(session: Session, channel_id: int) -> int:
    """``revision = revision + 1`` in SQL (never a lost update between processes); the new value."""
    return session.execute(
        update(ChannelRow)
        .where(ChannelRow.id == channel_id)
        .values(revision=ChannelRow.revision + 1)
        .returning(ChannelRow.revision)
    ).scalar_one()


def count_removal(session: Session, channel_id: int) -> None:
    """``removals = removals + 1``: a message left the channel or came back to it, and every
    process must drop what it holds of the channel (see ``Reads.removal_mark``)."""
    session.execute(
        update(ChannelRow)
        .where(ChannelRow.id == channel_id)
        .values(removals=ChannelRow.removals + 1)
    )


def tombstone_ids(channel_id: int) -> Select[str]:
    """The ids of the channel's deleted messages, as a subquery."""
    return select(DeletedMessageRow.message_id).where(DeletedMessageRow.channel_id == channel_id)


def tombstoned(session: Session, channel_id: int, message_ids: Sequence[str]) -> set[str]:
    """Those of ``message_ids`` (one batch) that were deleted."""
    return set(
        session.scalars(
            tombstone_ids(channel_id).where(DeletedMessageRow.message_id.in_(message_ids))
        )
    )


def count_utterances(session: Session, channel_id: int, *conditions: ColumnElement[bool]) -> int:
    return (
        session.scalar(
            select(func.count(UtteranceRow.id)).where(
                UtteranceRow.channel_id == channel_id, *conditions
            )
        )
        or 0
    )
