"""Changing the visibility scope stored messages carry, one thread at a time.

Why: a thread can turn out to be narrower than the scope its messages were stored with: messages
stored before scopes existed all carry the channel's, and an adapter that could not tell a
thread's audience when it stored it learns it later. Narrowing a thread's scope bumps the
channel's revision, so every cached read model and view is rebuilt without its messages.
"""

from __future__ import annotations

from sqlalchemy import select, update

from storage.locks import ChannelLocks
from storage.queries import bump_revision, rowcount
from storage.read_model import ReadModel
from storage.sql import Database, UtteranceRow


class ThreadScopes:
    def __init__(self, database: Database, locks: ChannelLocks, read_model: ReadModel) -> None:
        self.db = database
        self.locks = locks
        self.read_model = read_model

    def of_threads(self, channel: str) -> dict[str, frozenset[str]]:
        """Each thread with stored messages in the channel, and the scopes they carry."""
        found: dict[str, set[str]] = {}
        with self.db.read() as session:
            row = self.db.channel(session, channel)
            if row is None:
                return {}
            for thread, scope in session.execute(
                select(UtteranceRow.thread_root, UtteranceRow.scope)
                .where(UtteranceRow.channel_id == row.id, UtteranceRow.thread_root.is_not(None))
                .distinct()
            ):
                found.setdefault(thread, set()).add(scope)  # type: ignore[arg-type]  # IS NOT NULL
        return {thread: frozenset(scopes) for thread, scopes in found.items()}

    def set_thread(self, channel: str, thread_root: str, scope: str) -> int:
        """Give every stored message of one thread ``scope``; returns how many changed."""
        with self.locks(channel):
            with self.db.session() as session:
                row = self.db.channel(session, channel)
                if row is None:
                    return 0
                changed = rowcount(
                    session.execute(
                        update(UtteranceRow)
                        .where(
                            UtteranceRow.channel_id == row.id,
                            UtteranceRow.thread_root == thread_root,
                            UtteranceRow.scope != scope,
                        )
                        .values(scope=scope)
                    )
                )
                if changed:
                    bump_revision(session, row.id)
            if changed:
                self.read_model.forget(channel)
            return changed
