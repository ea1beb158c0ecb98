"""The tables come from the Alembic revisions, on SQLite and PostgreSQL alike.

The revisions must build exactly what the models describe (a model changed without a revision
fails here), a database made by ``create_all`` before migrations existed is adopted with its rows,
and ``awai db upgrade`` / ``awai db current`` say what they did.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, select

from bots.terminal.cli import main
from storage import migrations
from storage.sql import ChannelRow, Database
from tests.backends.servers import PostgresDatabases

EmptyDatabase = Callable[[], str]


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> EmptyDatabase:
    """URLs of new, empty databases of each kind."""
    if request.param == "sqlite":
        paths = iter(range(100))
        return lambda: f"sqlite:///{tmp_path / f'empty-{next(paths)}.sqlite3'}"
    postgres: PostgresDatabases = request.getfixturevalue("require_postgres")
    return lambda: postgres.new_database_url(migrated=False)


def test_the_revisions_build_exactly_the_tables_the_models_describe(
    empty_database: EmptyDatabase,
) -> None:
    database = Database(empty_database())
    try:
        with database.engine.connect() as connection:
            context = MigrationContext.configure(
                connection, opts={"include_object": _ours, "compare_type": True}
            )
            assert compare_metadata(context, migrations.metadata()) == []
            assert context.get_current_revision() == migrations.head()
    finally:
        database.dispose()


def _ours(obj, name, type_, reflected, compare_to) -> bool:  # type: ignore[no-untyped-def]
    return type_ != "table" or name in migrations.metadata().tables


def test_a_database_made_before_migrations_is_adopted_with_its_rows(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    old = create_engine(url)
    migrations.metadata().create_all(old)  # how every database was made before revisions
    with old.begin() as connection:
        connection.execute(
            ChannelRow.__table__.insert().values(key="c", collection="awai-c", revision=7)
        )
    old.dispose()

    database = Database(url)
    try:
        assert migrations.current(database.engine) == migrations.head()
        with database.read() as session:
            assert session.scalar(select(ChannelRow.revision)) == 7
    finally:
        database.dispose()


def test_awai_db_upgrade_applies_the_revisions_once_and_current_reports_them(
    empty_database: EmptyDatabase,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("AWAI_DATABASE_URL", empty_database())
    monkeypatch.setenv("COLUMNS", "240")
    data_dir = str(tmp_path / "data")
    assert main(["--data-dir", data_dir, "db", "current"]) == 0
    assert "revision none" in capsys.readouterr().out
    assert main(["--data-dir", data_dir, "db", "upgrade"]) == 0
    assert f"from empty to {migrations.head()}" in capsys.readouterr().out
    assert main(["--data-dir", data_dir, "db", "upgrade"]) == 0
    assert "already at the newest revision" in capsys.readouterr().out
    assert main(["--data-dir", data_dir, "db", "current"]) == 0
    assert "(up to date)" in capsys.readouterr().out


def test_the_newest_revision_read_without_alembic_is_alembics() -> None:
    assert migrations.head() == migrations.alembic_head()


def _revisions() -> list[str]:
    from alembic.script import ScriptDirectory

    walked = ScriptDirectory.from_config(migrations.config()).walk_revisions()
    return [script.revision for script in reversed(list(walked))]


def _filled(column: sa.Column) -> object:
    """A value for a required column of a reflected table (its type is all there is to go by)."""
    python = column.type.python_type
    return {int: 1, float: 1.5, bool: False, str: "x"}[python]


# A channel, a message, and the rows that refer to the message (a cascade deleted those).
REFERRING = ("channels", "utterances", "thoughts", "utterance_versions")


@pytest.mark.parametrize("revision", _revisions()[:-1])
def test_upgrading_a_sqlite_database_keeps_the_rows_that_refer_to_altered_tables(
    tmp_path: Path, revision: str
) -> None:
    """SQLite alters a table by copying it and dropping the original; with foreign keys on, that
    drop cascaded to every thought of every message (0003 and 0006 lost them all)."""
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    old = create_engine(url)
    with old.begin() as connection:
        old_config = migrations.config()
        old_config.attributes["connection"] = connection
        command.upgrade(old_config, revision)
    with old.begin() as connection:
        connection.exec_driver_sql("PRAGMA foreign_keys=ON")
        tables = sa.MetaData()
        tables.reflect(connection, only=list(REFERRING))
        for name in REFERRING:
            table = tables.tables[name]
            row = {
                column.name: _filled(column)
                for column in table.columns
                if not column.nullable and column.server_default is None
            }
            connection.execute(table.insert().values(**row))
    old.dispose()

    database = Database(url)
    try:
        assert migrations.current(database.engine) == migrations.head()
        with database.engine.connect() as connection:
            for name in REFERRING:
                assert connection.exec_driver_sql(f"SELECT count(*) FROM {name}").scalar() == 1
    finally:
        database.dispose()
