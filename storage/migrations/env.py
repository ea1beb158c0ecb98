"""Alembic's environment: AWAI's models as the target, run on a connection AWAI hands over.

:func:`storage.migrations.upgrade` passes an open connection (inside its locked transaction);
Alembic's own command line (writing a revision) gets one from the AWAI settings instead. Tables
that other libraries create and manage themselves (a scheduler's job store, an adapter SDK's
installation store) are none of these revisions' business.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from storage.migrations import metadata

target_metadata = metadata()


def _ours(obj: object, name: str | None, type_: str, reflected: bool, compare_to: object) -> bool:
    """Autogenerate looks only at AWAI's own tables."""
    return type_ != "table" or name in target_metadata.tables


def _migrate(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        include_object=_ours,
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying
    )
    with context.begin_transaction():
        context.run_migrations()


def _run() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _migrate(connection)
        return
    from awai_engine.settings import load_settings
    from storage.sql import make_engine

    engine = make_engine(load_settings().resolved_database_url())
    try:
        with engine.begin() as opened:
            _migrate(opened)
    finally:
        engine.dispose()


_run()
