"""The composition root: settings → storage, embeddings, language backend → one engine.

Every adapter (terminal, Slack, Discord) starts here, so they all share one way of being built,
and reaches the engine and what is stored only through :class:`Runtime` (its bookkeeping
operations are :class:`~bots.records.Records`'): no adapter holds the store or a database session.
"""

from __future__ import annotations

import contextlib
import gc
import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from awai_engine.backends.offline import OfflineBackend
from awai_engine.calibration import calibrated
from awai_engine.embedding import Embedder
from awai_engine.engine import Engine, UnknownMessageError
from awai_engine.ports import LanguageBackend
from awai_engine.posts import PostRecord
from awai_engine.reconcile import DamagedVectorsError, ReconcileReport, reconcile
from awai_engine.schemas.service import ForgetReport, SchemaService
from awai_engine.settings import Settings
from awai_engine.values import Reading, Utterance
from awai_engine.visibility import Scopes, TimelineViews
from bots.records import Records
from bots.settings import BotSettings, composed
from storage.errors import StorageError
from storage.store import AwaiStore
from storage.vectors import scrub_folder

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoredReading:
    """A reading, and whether its message had to be fetched and stored first."""

    reading: Reading
    stored_now: bool


class Runtime(Records):
    """One running AWAI: settings, the engine, the schema service, and the records' door.

    Close it (or use it as a context manager) to release the database.
    """

    def __init__(
        self,
        settings: Settings,
        store: AwaiStore,
        embedder: Embedder,
        backend: LanguageBackend,
    ) -> None:
        super().__init__(store)
        self.settings: BotSettings = composed(settings)
        # The schema service before the engine: the engine recalls preconceptions through it,
        # so it is whole from its first reading; both see the timeline through the same views.
        views = TimelineViews()
        self.schemas = SchemaService(self.settings, store, store.schemas, backend, views)
        self.engine = Engine(
            self.settings, store, embedder, backend, schemas=self.schemas, views=views
        )
        self.posts = PostRecord(store.posts)
        """Every poster records here which stored messages its post quotes (awai_engine.posts)."""
        self.resumed: list[ForgetReport] = []
        """Forgets a crash had interrupted, finished when this runtime was opened."""

    def __enter__(self) -> Runtime:
        return self

    def close(self) -> None:
        super().close()
        # Frozen at the start (open_runtime) are also objects that are garbage from now on:
        # given back to the collector, so a process that opens runtimes again (tests, a
        # restarted bot) does not keep each one's cycles for good.
        gc.unfreeze()

    def read_storing_first(
        self,
        channel: str,
        message_id: str,
        scopes: Scopes,
        fetch: Callable[[], Utterance | None],
        rescoped: Callable[[], Scopes] | None = None,
    ) -> StoredReading:
        """The reading of a message for an asker who may read ``scopes``; one not stored yet is
        fetched with ``fetch`` (from the platform), stored, then read. One that another writer
        is storing right now (it was just posted) is waited for, not reported missing.
        ``rescoped`` gives the asker's scopes again once the message is stored here: it may be
        the first of a place with a scope of its own (a private thread on Discord).

        Raises :class:`~awai_engine.engine.UnknownMessageError` when ``fetch`` finds nothing
        (``None``) or what it found is still not readable once stored, and its subclass
        :class:`~awai_engine.engine.StillStoringError` when another writer's write of it does not
        finish within ``read_model.writer_wait_seconds``.
        """
        engine = self.engine
        try:
            return StoredReading(engine.read(channel, message_id, scopes), stored_now=False)
        except UnknownMessageError:
            pass
        if engine.await_write(channel, message_id, scopes):  # another writer was storing it
            try:
                return StoredReading(engine.read(channel, message_id, scopes), stored_now=False)
            except UnknownMessageError:
                pass  # that write failed and was undone, or it was an edit: store it here
        utterance = fetch()
        if utterance is None:
            raise UnknownMessageError(f"No message {message_id!r} in {channel!r} to read.")
        engine.ingest([utterance])
        if rescoped is not None:
            scopes = rescoped()
        engine.await_write(channel, message_id, scopes)  # another writer began it meanwhile
        return StoredReading(engine.read(channel, message_id, scopes), stored_now=True)

    def repair(self, channels: Sequence[str] | None = None) -> ReconcileReport:
        """Compare every id of SQL and the vectors and repair what disagrees (``awai doctor``)."""
        return reconcile(
            self._store,
            self.engine.embedder,
            channels,
            thorough=True,
            restore=lambda channel, ids: self._store.restore_thoughts(
                channel, ids, self.engine.prepare
            ),
        )

    def reembed(self, channel: str, progress: Callable[[int, int], None] | None = None) -> int:
        """Re-embed the channel with the configured model; returns the thoughts embedded."""
        embedder = self.engine.embedder
        return self._store.reembed(
            channel, embedder.model_name, embedder.dimension, embedder.encode, progress=progress
        )

    @property
    def store(self) -> AwaiStore:
        """The store itself, for tests and benchmarks that inspect it; adapters use the methods
        (tests/test_layering.py checks that no module of ``bots/`` reaches for it)."""
        return self._store


def scrub_chroma_folder(path: Path) -> list[str]:
    """Remove the index folders of dropped collections from a Chroma server's data folder and
    vacuum its database (``awai chroma-scrub``, run on the server's host: no store is opened);
    the names of the folders removed."""
    return scrub_folder(path)


def language_backend(settings: Settings) -> LanguageBackend:
    """The Anthropic backend when an API key is set (AWAI_LLM__API_KEY), else the offline one."""
    if settings.llm.api_key is not None:
        # Imported here: the SDK takes seconds to import, which offline runs need not pay.
        from awai_engine.backends.anthropic import AnthropicBackend

        return AnthropicBackend(settings.llm, settings.limits)
    return OfflineBackend(settings.limits)


def open_runtime(
    settings: Settings,
    repair: bool = True,
    read_only: bool = False,
    notify: Callable[[str], None] | None = None,
    finishing_lock: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext,
) -> Runtime:
    """Build the runtime; first bring SQL and Chroma back into agreement after any crash.

    The start-up check costs a few counts per channel when nothing is wrong
    (:mod:`awai_engine.reconcile`); ``repair=False`` is for ``awai doctor``, which reports first.
    ``read_only`` (no repair) is for commands that only look, so a read-only data folder works.
    What a person should hear of the check (a damaged vector index rebuilt) goes to ``notify``:
    the terminal prints it; by default it is logged as a warning. A read-only command that must
    finish a removal writes only inside ``finishing_lock()`` (the data folder's writer lock).
    """
    repair = repair and not read_only
    store = AwaiStore.open(settings, read_only)
    finishing = contextlib.ExitStack()
    if read_only and store.erasing():  # what a removal removes is never shown: finish it first
        store.close()
        finishing.enter_context(finishing_lock())
        try:
            store = _opened_to_finish_removals(settings)
        except BaseException:  # the lock is given back with the error, not at exit
            finishing.close()
            raise
        repair = True
    try:
        embedder = Embedder(settings.embedding)
        calibrated_settings = calibrated(composed(settings), embedder)  # the model's scale
        if repair:
            for notice in reconcile(store, embedder).notices():
                (notify or log.warning)(notice)
        runtime = Runtime(
            calibrated_settings, store, embedder, language_backend(calibrated_settings)
        )
        if repair:  # a forget or delete a crash interrupted is finished before anything else runs
            try:
                runtime.resumed = runtime.schemas.resume_erasures()
            except DamagedVectorsError:  # the start's count did not open the index: check all
                for notice in runtime.repair().notices():
                    (notify or log.warning)(notice)
                runtime.resumed = runtime.schemas.resume_erasures()
        # What is open now (the modules, the settings, the store) lives as long as the process:
        # kept out of the collector's full passes, which walked all of it (some 200,000 objects,
        # 45-85 ms each) and, landing in a reading, were most of its worst latency. Collected
        # first, so no garbage of the start is frozen with it (frozen, it is never freed).
        gc.collect()
        gc.freeze()
        return runtime
    except BaseException:
        store.close()
        raise
    finally:
        finishing.close()


def _opened_to_finish_removals(settings: Settings) -> AwaiStore:
    """The store opened for writing by a command that only looks, because a forget or delete
    was interrupted and must be finished before anything is read."""
    try:
        return AwaiStore.open(settings)
    except StorageError as error:
        raise StorageError(
            f"A forget or delete in {settings.data_dir} was interrupted and must be finished"
            f" before anything is read from it, which needs a folder AWAI may write to: {error}"
        ) from error
