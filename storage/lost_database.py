"""Refusing to start a new database beside what an old one left: the database is the truth.

The SQLite file records what no other file can give back: which messages were deleted or
forgotten (their tombstones), preconceptions, digests, claims. The vectors and read models beside
it are derived from it. If the file is gone, or empty (cut to zero bytes, or holding no table),
while the derived files are still there, the database was lost; creating a fresh one would
silently drop every tombstone, and the next ingest of a transcript would bring deleted messages
back. So opening such a folder is refused with what happened and how to restore or start over.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from awai_engine.settings import Settings
from storage.errors import StorageError


def refuse_lost_database(settings: Settings) -> None:
    """Raise :class:`StorageError` when the configured SQLite database is missing or empty but
    vectors or read models derived from it are still in the data folder."""
    try:
        url = make_url(settings.resolved_database_url())
    except ArgumentError:
        return  # not a database URL: opening the database names what is wrong with it
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return  # a server database: its loss is its operator's to see
    database = Path(url.database)
    if _holds_tables(database):
        return
    left = _derived_files(settings)
    if not left:
        return  # a new data folder (or one that never held anything): create the database
    state = "missing" if not database.exists() else "empty"
    raise StorageError(
        f"The database {database} is {state}, but {', '.join(left)} derived from it are still"
        " there: the database was lost (deleted or cut short). AWAI does not start a new one"
        " beside them, since what only the database recorded (deleted and forgotten messages,"
        " preconceptions, digests) would be gone and deleted messages could come back."
        f" {how_to_restore(settings)}"
    )


def how_to_restore(settings: Settings) -> str:
    """What to do when the SQLite database is lost or damaged: the words of both refusals."""
    database = Path(make_url(settings.resolved_database_url()).database or "awai.sqlite3")
    return (
        f"Restore {database.name} from a backup; or start over in a new data folder and bring"
        " channels back from their exports (`awai --data-dir NEW import EXPORT.jsonl --channel"
        f" NAME`); or, to start over here, move {settings.data_dir} aside."
    )


def is_damaged_file(error: BaseException) -> bool:
    """Whether SQLite refused the file itself (cut short, overwritten), not its access."""
    cause = getattr(error, "orig", None) or error
    return isinstance(cause, sqlite3.DatabaseError) and not isinstance(
        cause, sqlite3.OperationalError
    )


def _holds_tables(database: Path) -> bool:
    """Whether the file is a database with AWAI's tables (any other file is opened as usual,
    and a damaged one is refused there with SQLite's own words)."""
    try:
        if database.stat().st_size == 0:
            return False
    except OSError:  # missing, or under a file given as the data folder: nothing to protect
        return False
    try:
        connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)
    except sqlite3.Error:
        return True
    try:
        found = connection.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'channels'"
        ).fetchone()
    except sqlite3.Error:
        return True  # not readable as a database: opening it says why
    finally:
        connection.close()
    return bool(found and found[0])


def _derived_files(settings: Settings) -> list[str]:
    """What in the data folder was derived from a database: the embedded Chroma's vectors, read
    models. A Chroma configured elsewhere (``AWAI_CHROMA_PATH``, a server) is not the folder's:
    it may be shared, and a new database beside it is the operator's choice."""
    left = []
    if settings.chroma_url is None and settings.chroma_path is None:
        chroma = settings.resolved_chroma_path()
        if _holds_collections(chroma / "chroma.sqlite3") or any(
            path.is_dir() for path in _children(chroma)
        ):
            left.append(f"the vectors in {chroma}")
    read_models = settings.data_dir / "read-models"
    if any(path.is_dir() for path in _children(read_models)):
        left.append(f"the read models in {read_models}")
    return left


def _holds_collections(path: Path) -> bool:
    """Whether Chroma's own database names a collection (one it cannot read counts: it is not
    a new folder's)."""
    if not path.is_file():
        return False
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            found = connection.execute("SELECT count(*) FROM collections").fetchone()
        finally:
            connection.close()
    except sqlite3.Error:
        return path.stat().st_size > 0
    return bool(found and found[0])


def _children(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []
