"""Schema migrations (Alembic): every database AWAI opens is brought to the latest revision.

Why Alembic and not ``create_all``: a table can be created from the models, but a changed one
cannot; on PostgreSQL, several bot processes share one database that outlives any one version of
the code. So the tables are made by revisions in ``versions/`` and nothing else, applied at start
(:func:`upgrade`, called by :class:`storage.sql.Database`) or by ``awai db upgrade``.

Start-up stays fast: when the database already records the newest revision, one small query
answers and no migration code runs, nor is Alembic imported (a few tenths of a second of every
``awai`` command): the newest revision is read from the revision files' own ``revision`` and
``down_revision`` lines, which ``tests/backends/test_migrations.py`` checks against Alembic's. Two processes starting at once take turns: the upgrade runs
in one transaction that first takes the database's write lock (``BEGIN IMMEDIATE`` on SQLite, an
advisory transaction lock on PostgreSQL), so the second finds the work done.

A model change comes with a new revision. Write it with Alembic's autogenerate and read it
through before committing::

    AWAI_DATABASE_URL=sqlite:////tmp/awai.sqlite3 .venv/bin/awai db upgrade
    AWAI_DATABASE_URL=sqlite:////tmp/awai.sqlite3 \
        .venv/bin/alembic -c storage/migrations/alembic.ini revision --autogenerate -m "why"

``tests/backends/test_migrations.py`` fails while the models and the revisions disagree.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import MetaData, inspect, text
from sqlalchemy.engine import Connection, Engine

if TYPE_CHECKING:
    from alembic.config import Config

VERSION_TABLE = "alembic_version"  # Alembic's default, which env.py keeps

HERE = Path(__file__).resolve().parent
# Every module that defines tables on storage.sql.Base; a new one is added here.
MODEL_MODULES = (
    "storage.sql",
    "storage.state",
    "storage.schemas",
    "storage.posts",
    "storage.erasures",
    "storage.job_store",
    "storage.transcript_files",
)
# Held while migrating on PostgreSQL (pg_advisory_xact_lock): one process migrates at a time.
MIGRATION_LOCK_KEY = 0x41574149_6D696772  # "AWAI" "migr"


@dataclass(frozen=True)
class UpgradeResult:
    """The revision a database was at before an upgrade, and the one it is at now."""

    before: str | None
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


def config() -> Config:
    """Alembic's configuration for AWAI's revisions, independent of the working directory."""
    from alembic.config import Config

    alembic_config = Config()
    alembic_config.set_main_option("script_location", str(HERE))
    return alembic_config


@cache
def head() -> str:
    """The newest revision in ``versions/``: the one no other revision follows.

    Read from each file's ``revision`` and ``down_revision`` assignments, without importing
    Alembic; anything else (no revision, several heads) is left to Alembic to explain.
    """
    follows: dict[str, str | None] = {}
    for path in sorted((HERE / "versions").glob("[0-9]*.py")):
        found: dict[str, Any] = {  # the constants assigned, checked below
            node.targets[0].id: node.value.value
            for node in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in ("revision", "down_revision")
            and isinstance(node.value, ast.Constant)
        }
        if isinstance(found.get("revision"), str):
            follows[found["revision"]] = found.get("down_revision")
    heads = follows.keys() - set(follows.values())
    return heads.pop() if len(heads) == 1 else alembic_head()


def alembic_head() -> str:
    """The newest revision as Alembic finds it (it raises on several heads)."""
    from alembic.script import ScriptDirectory

    found = ScriptDirectory.from_config(config()).get_current_head()
    if found is None:
        raise RuntimeError(f"No migration revisions in {HERE / 'versions'}.")
    return found


def metadata() -> MetaData:
    """The tables AWAI's revisions manage: every model module, imported here so none is missed."""
    for module in MODEL_MODULES:
        importlib.import_module(module)
    from storage.sql import Base

    return Base.metadata


def current(engine: Engine) -> str | None:
    """The revision the database records (``None``: never migrated)."""
    with engine.connect() as connection:
        return _recorded(connection)


def _recorded(connection: Connection) -> str | None:
    """Alembic's version table read directly (one row: AWAI's revisions have no branches)."""
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    return connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()


def upgrade(engine: Engine) -> UpgradeResult:
    """Bring the database to :func:`head`; a no-op costing one query when it is there already."""
    target = head()
    before = current(engine)
    if before == target:
        return UpgradeResult(before, target)
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            _foreign_keys(connection, on=False)
        try:
            with connection.begin():  # BEGIN IMMEDIATE on SQLite: one migrating process
                if not sqlite:
                    connection.execute(
                        text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
                    )
                before = _recorded(connection)
                _run_upgrade(connection)
                if sqlite:
                    _check_foreign_keys(connection)
        finally:
            if sqlite:
                _foreign_keys(connection, on=True)
    return UpgradeResult(before, target)


def _foreign_keys(connection: Connection, on: bool) -> None:
    """Turn SQLite's foreign keys on or off for this connection, outside any transaction.

    Why off while migrating: SQLite alters a table by copying it (Alembic's batch mode) and
    dropping the original, and with foreign keys on that drop deletes, through ``ON DELETE
    CASCADE``, every row that references it: the thoughts of every message. The pragma is a
    no-op inside a transaction, so it goes to the driver connection before one begins (SQLAlchemy
    would begin one for any statement it runs).
    """
    driver = connection.connection.driver_connection
    assert driver is not None
    driver.execute(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")


def _check_foreign_keys(connection: Connection) -> None:
    """Refuse (roll back) an upgrade that left a row pointing at nothing."""
    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if broken:
        tables = sorted({row[0] for row in broken})
        raise RuntimeError(
            f"The database upgrade was rolled back: it left {len(broken)} row(s) of"
            f" {', '.join(tables)} referring to rows that do not exist."
        )


def _run_upgrade(connection: Connection) -> None:
    from alembic import command

    alembic_config = config()
    alembic_config.attributes["connection"] = connection
    command.upgrade(alembic_config, "head")
