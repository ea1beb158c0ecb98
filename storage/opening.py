"""Opening the two stores the configuration names, with errors that say which setting to change.

A bot that cannot write its data folder or reach its database should say so at start-up, naming
the variable, rather than fail on its first message with a driver's traceback.
"""

from __future__ import annotations

import errno
import shutil
import tempfile
from pathlib import Path

from awai_engine.settings import Settings
from storage.errors import DiskFullError, StorageError, driver_words
from storage.heap import keep_one_arena, overwrite_freed_memory
from storage.lost_database import how_to_restore, is_damaged_file, refuse_lost_database
from storage.sql import Database
from storage.vectors import ChromaVectors


def open_backends(settings: Settings, read_only: bool = False) -> tuple[Database, ChromaVectors]:
    """The configured SQL database and Chroma (the embedded folder, or the server of
    ``settings.chroma_url``), created if needed.

    ``read_only`` is for commands that only look (export, the doctor's report, schemas): a data
    folder that cannot be written, such as a backup on read-only media, is then opened as it is,
    the SQLite file immutable and Chroma from a temporary copy (embedded Chroma writes to its own
    folder even to read).
    """
    overwrite_freed_memory()  # before any message is read: see storage.heap
    keep_one_arena()  # before Chroma's threads start (storage.heap)
    refuse_lost_database(settings)
    if read_only:  # a look creates nothing
        refuse_missing_data(settings)
    if read_only and _frozen(settings):
        return _open_frozen(settings)
    embedded = settings.chroma_url is None
    if settings.database_url is None or (embedded and settings.chroma_path is None):
        _check_writable(settings.data_dir)
    if embedded:
        _check_writable(settings.resolved_chroma_path())
    try:
        database = Database(settings.resolved_database_url())
    except Exception as error:
        advice = f" {how_to_restore(settings)}" if is_damaged_file(error) else ""
        raise StorageError(
            f"Cannot open the database {_without_password(settings.resolved_database_url())}"
            f"{' (AWAI_DATABASE_URL)' if settings.database_url else ''}: {driver_words(error)}"
            f"{'; the file is damaged.' if advice else ''}{advice}"
        ) from error
    try:
        vectors = (
            ChromaVectors.embedded(settings.resolved_chroma_path(), writable=not read_only)
            if settings.chroma_url is None
            else ChromaVectors.server(settings.chroma_url)
        )
    except Exception as error:
        database.dispose()
        raise StorageError(
            f"Cannot use the Chroma server at {settings.chroma_url} (AWAI_CHROMA_URL): {error}"
            if settings.chroma_url
            else f"Cannot open Chroma in {settings.resolved_chroma_path()}: {error}"
        ) from error
    return database, vectors


def refuse_missing_data(settings: Settings) -> None:
    """Raise :class:`StorageError` when ``settings`` name a folder AWAI never wrote: for a
    command that only looks, or that needs a channel already stored (a mistyped ``--data-dir``
    would otherwise be created and then found empty)."""
    missing = missing_data(settings)
    if missing is not None:
        raise StorageError(missing)


def missing_data(settings: Settings) -> str | None:
    """What to tell someone who points a command at a folder AWAI never wrote (a mistyped
    ``--data-dir``), or ``None`` when there is data (or a database server) to look at. Why:
    opening a store creates it, and a look at a new empty store reports it healthy. A folder
    whose database was lost while its vectors remain is refused as such, never called empty
    (:func:`refuse_lost_database`)."""
    refuse_lost_database(settings)
    if settings.database_url is not None or settings.data_dir.is_file():
        return None  # a file given as the folder is named as a file by the writable check
    database_file = settings.data_dir / "awai.sqlite3"
    if database_file.exists():
        return None
    return (
        f"No AWAI data in {settings.data_dir}: nothing has been stored there ({database_file.name}"
        " is missing). Check --data-dir (or AWAI_DATA_DIR); `awai read FILE` or"
        " `awai ingest FILE` stores a transcript."
    )


def _frozen(settings: Settings) -> bool:
    """Whether the data folder holds both stores and cannot be written."""
    if settings.database_url is not None or settings.chroma_url is not None:
        return False
    folder = settings.data_dir
    return folder.is_dir() and not _writable(folder)


def _open_frozen(settings: Settings) -> tuple[Database, ChromaVectors]:
    try:
        database = Database(settings.resolved_database_url(), read_only=True)
    except Exception as error:
        raise StorageError(
            f"Cannot read the database in the read-only folder {settings.data_dir}: {error}"
        ) from error
    copy = tempfile.TemporaryDirectory(prefix="awai-chroma-")
    try:
        shutil.copytree(settings.resolved_chroma_path(), Path(copy.name) / "chroma")
        vectors = ChromaVectors.embedded(Path(copy.name) / "chroma")
    except Exception as error:
        database.dispose()
        copy.cleanup()
        raise StorageError(
            f"Cannot read Chroma in the read-only folder {settings.resolved_chroma_path()}: {error}"
        ) from error
    vectors.snapshot = copy  # type: ignore[attr-defined]  # removed with the vectors, at exit
    return database, vectors


def _writable(path: Path) -> bool:
    try:
        _check_writable(path)
    except StorageError:
        return False
    return True


def _without_password(url: str) -> str:
    """A database URL fit for an error message."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "(the configured AWAI_DATABASE_URL)"


def _check_writable(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise StorageError(
            f"The data directory {path} is a file, not a folder."
            " Set AWAI_DATA_DIR (or --data-dir) to a folder AWAI may write to."
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".awai-write-check"
        probe.write_text("ok")
        probe.unlink()
    except OSError as error:
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DiskFullError(path, error.strerror) from None
        raise StorageError(
            f"The data directory {path} cannot be created or written"
            f" ({error.strerror or error}). Set AWAI_DATA_DIR (or --data-dir) to a folder AWAI"
            " may write to."
        ) from None
