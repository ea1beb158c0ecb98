"""``awai db upgrade`` and ``awai db current``: the database's schema revision (Alembic).

Every start already upgrades the database (see :mod:`storage.migrations`); this command does it on
its own, so a deployment can migrate once, before its bot processes start, and see what changed.
It works on the configured database (``AWAI_DATABASE_URL``, or the SQLite file in the data folder)
without loading the embedding model or touching Chroma. ``upgrade`` writes, so on an embedded data
folder it takes the writer lock first (:mod:`bots.terminal.writing`): it waits for a command
writing there and is refused while a bot runs on the folder.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy import Engine, make_url

from awai_engine.settings import Settings
from bots.terminal.say import plain_console
from bots.terminal.writing import writer_lock
from storage import migrations
from storage.errors import StorageError, driver_words
from storage.sql import check_database_url, make_engine

T = TypeVar("T")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "db", help="The database schema: apply pending migrations, or show the revision."
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("upgrade", help="Apply every pending migration (every start does too).")
    actions.add_parser("current", help="Show the database's revision and the newest one.")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    url = settings.resolved_database_url()
    try:
        check_database_url(url)
    except ValueError as error:
        raise StorageError(f"Cannot use the database: {error}.") from None
    shown = make_url(url).render_as_string(hide_password=True)
    if settings.database_url is None:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    console = plain_console()
    if args.action == "current":
        at = _migrating(url, shown, "read the revision of", migrations.current)
        state = "up to date" if at == migrations.head() else "upgrade pending"
        console.print(f"{shown}: revision {at or 'none'}, newest {migrations.head()} ({state})")
        return 0
    with writer_lock(settings, "db upgrade"):
        result = _migrating(url, shown, "migrate", migrations.upgrade)
    if result.changed:
        console.print(f"{shown}: upgraded from {result.before or 'empty'} to {result.after}.")
    else:
        console.print(f"{shown}: already at the newest revision, {result.after}.")
    return 0


def _migrating(url: str, shown: str, doing: str, step: Callable[[Engine], T]) -> T:
    """``step`` on the database, its failure in words naming the database."""
    engine = make_engine(url)
    try:
        return step(engine)
    except Exception as error:
        raise StorageError(f"Cannot {doing} the database {shown}: {driver_words(error)}") from error
    finally:
        engine.dispose()
