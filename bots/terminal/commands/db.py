"""``awai db upgrade`` and ``awai db current``: the database's schema revision (Alembic).

Every start already upgrades the database (see :mod:`storage.migrations`); this command does it on
its own, so a deployment can migrate once, before its bot processes start, and see what changed.
It works on the configured database (``AWAI_DATABASE_URL``, or the SQLite file in the data folder)
without loading the embedding model or touching Chroma.
"""

from __future__ import annotations

import argparse

from sqlalchemy import make_url

from awai_engine.settings import Settings
from bots.terminal.say import plain_console
from storage import migrations
from storage.errors import StorageError, driver_words
from storage.sql import check_database_url, make_engine


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
    engine = make_engine(url)
    try:
        if args.action == "current":
            at = migrations.current(engine)
            state = "up to date" if at == migrations.head() else "upgrade pending"
            console.print(f"{shown}: revision {at or 'none'}, newest {migrations.head()} ({state})")
            return 0
        result = migrations.upgrade(engine)
    except Exception as error:
        doing = "read the revision of" if args.action == "current" else "migrate"
        raise StorageError(f"Cannot {doing} the database {shown}: {driver_words(error)}") from error
    finally:
        engine.dispose()
    if result.changed:
        console.print(f"{shown}: upgraded from {result.before or 'empty'} to {result.after}.")
    else:
        console.print(f"{shown}: already at the newest revision, {result.after}.")
    return 0
