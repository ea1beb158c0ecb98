"""What the adapters may do with what is stored, and nothing more: the door to storage.

Adapters work on chat messages through the engine (:class:`~bots.runtime.Runtime`); besides that
they need a few bookkeeping operations (a once-only claim, a backfill cursor, purging a workspace
or server that removed the bot, where a stored message sits). They are the methods here, so
no adapter holds the store or a database session, and the store can change behind them.
:class:`Records` also stands alone for terminal commands that only look at storage (``awai
doctor`` without ``--repair``, ``awai export``), which need no embedding model.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from awai_engine.ports import ChannelInfo
from awai_engine.reconcile import ReconcileReport, audit
from awai_engine.settings import Settings
from awai_engine.values import MessageRef, Utterance
from storage.opening import missing_data, refuse_missing_data
from storage.state import BackfillCursor
from storage.store import AwaiStore
from storage.transcript_files import StoredFile

if TYPE_CHECKING:
    from storage.job_store import DataJobStore

# missing_data and refuse_missing_data are storage.opening's, offered to commands through the door.
__all__ = ["Records", "StoredFile", "missing_data", "refuse_missing_data"]


def catch_up_key(line: str) -> str:
    """The cursor key of a catch-up of ``line`` (a channel's or thread's key), kept apart from
    its backfill's: a catch-up starts after the newest stored message, a backfill at the start."""
    return f"catchup:{line}"


class Records:
    def __init__(self, store: AwaiStore) -> None:
        self._store = store

    @classmethod
    def open(cls, settings: Settings, read_only: bool = False) -> Records:
        """Only the stores (no embedding model, no language backend); ``read_only`` for looking
        only, so a data folder that cannot be written opens too."""
        return cls(AwaiStore.open(settings, read_only))

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Records:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- once-only work across threads and processes -------------------------------------------

    def claim(self, key: str, window_seconds: float) -> bool:
        """``True`` for the first caller of ``key`` in the last ``window_seconds`` (of every
        thread and process sharing the database), else ``False``."""
        return self._store.claims.claim(key, window_seconds)

    def release(self, key: str) -> None:
        """Give a claim up early: the work it guarded failed, and asking again should retry it."""
        self._store.claims.release(key)

    # -- channels ------------------------------------------------------------------------------

    def channels(self) -> list[str]:
        return self._store.channels()

    def channel_info(self, channel: str) -> ChannelInfo | None:
        return self._store.channel_info(channel)

    def purge_channel(self, channel: str) -> None:
        """Remove a channel's messages, vectors, schemas and backfill cursor from every store,
        and what the stores keep of them on disk (the bot was removed, the channel deleted)."""
        self._drop(channel)
        self._store.finish_erasures()

    def purge_prefix(self, prefix: str) -> list[str]:
        """Purge every stored channel whose key starts with ``prefix`` (a workspace, a server),
        and every cursor of the place, its threads' catch-ups included; returns the channels'
        keys."""
        removed = [key for key in self._store.channels() if key.startswith(prefix)]
        for key in removed:
            self._drop(key)
        self._store.cursors.forget_prefix(prefix)
        self._store.cursors.forget_prefix(catch_up_key(prefix))
        self._store.finish_erasures()
        return removed

    def _drop(self, channel: str) -> None:
        self._store.drop_channel(channel)
        self._store.cursors.forget(channel)
        self._store.cursors.forget(catch_up_key(channel))

    # -- read-model files (storage.read_model_files) -----------------------------------------

    def damaged_read_models(self) -> list[str]:
        """The channels whose read-model file on disk is not what was written (read whole)."""
        files = self._store.read_model.files
        return files.damaged() if files is not None else []

    def remove_read_model(self, channel: str) -> None:
        """Shred a channel's read-model file: the next start rebuilds it from the stores."""
        files = self._store.read_model.files
        if files is not None:
            files.shred(channel)

    # -- backfill cursors ----------------------------------------------------------------------

    def cursor(self, key: str) -> BackfillCursor | None:
        return self._store.cursors.get(key)

    def save_cursor(self, key: str, cursor: str | None, fetched: int, done: bool = False) -> None:
        self._store.cursors.save(key, cursor, fetched, done)

    def forget_cursor(self, key: str) -> None:
        self._store.cursors.forget(key)

    # -- transcript files the terminal stored (storage.transcript_files) -----------------------

    def stored_file(self, channel: str, path: str) -> StoredFile | None:
        """How ``path`` was when everything in it was stored into ``channel``, if it was."""
        return self._store.transcript_files.get(channel, path)

    def record_file(self, channel: str, path: str, stored: StoredFile) -> None:
        self._store.transcript_files.record(channel, path, stored)

    def forget_file(self, channel: str, path: str) -> None:
        self._store.transcript_files.forget(channel, path)

    def speakers_and_ids(self, channel: str) -> tuple[tuple[str, ...], frozenset[str]]:
        """The channel's speakers in order of their first message, and its message ids."""
        return self._store.transcript_files.speakers_and_ids(channel)

    # -- where stored messages are -------------------------------------------------------------

    def message_ids(self, channel: str) -> list[str]:
        """The readable messages of the channel in channel order.

        Taken from the timeline's index of positions, which holds them in that order: going
        through its messages built every message of a timeline loaded from its file (340 MB at
        100k messages, kept as long as the channel is held, by a Discord bot's catch-up)."""
        return list(self._store.timeline(channel).position_of)

    def message_refs(self, channel: str, message_ids: Iterable[str]) -> dict[str, MessageRef]:
        """Where each of ``message_ids`` that is stored sits (speaker, time, thread)."""
        timeline = self._store.timeline(channel)
        return {
            message_id: timeline.messages[timeline.position_of[message_id]].ref
            for message_id in message_ids
            if message_id in timeline.position_of
        }

    def message_ref(self, channel: str, message_id: str) -> MessageRef | None:
        return self.message_refs(channel, [message_id]).get(message_id)

    def line_ids(self, channel: str, thread_root: str) -> list[str]:
        """The stored messages posted in one thread of the channel (the root not included)."""
        timeline = self._store.timeline(channel)
        return [
            message.message_id
            for message in timeline.messages
            if message.ref.thread_root == thread_root
        ]

    def newest_per_line(self, channel: str) -> dict[str | None, int]:
        """The newest stored message id of each line of the channel: of each thread (by its
        root) and of the channel itself (``None``); for platforms whose ids grow with time."""
        newest: dict[str | None, int] = {}
        for message in self._store.timeline(channel).messages:
            if message.message_id.isdigit():
                line = message.ref.thread_root
                newest[line] = max(newest.get(line, 0), int(message.message_id))
        return newest

    def latest_ts(self, channel: str) -> float | None:
        """When the channel's newest stored message was said; ``None`` when none is stored."""
        timeline = self._store.timeline(channel)
        return float(timeline.timestamps.max()) if timeline.messages else None

    def utterances(self, channel: str) -> Iterator[Utterance]:
        """Every stored message of the channel in channel order, current text (for export)."""
        return self._store.utterances(channel)

    # -- upkeep --------------------------------------------------------------------------------

    def audit(self, channels: Sequence[str] | None = None) -> ReconcileReport:
        """What disagrees between the SQL record and the vectors, comparing every id."""
        return audit(self._store, channels)

    def job_store(self, functions: Mapping[str, str]) -> DataJobStore:
        """The scheduler's job store, in the same database as everything else; ``functions``
        maps each job kind a row may name to the function it runs."""
        from storage.job_store import DataJobStore  # APScheduler only where jobs run

        return DataJobStore(self._store.db, functions)
