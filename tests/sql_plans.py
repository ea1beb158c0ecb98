"""What SQL a piece of work asked, and how SQLite plans it: for tests that a query reads an index
instead of every row of a channel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine


def statements_during(
    engine: Engine, wanted: Callable[[str], bool], work: Callable[[], object]
) -> list[tuple[str, Any]]:
    """The statements (with their parameters) ``engine`` ran during ``work`` that ``wanted``."""
    asked: list[tuple[str, Any]] = []

    def seen(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if wanted(statement):
            asked.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", seen)
    try:
        work()
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    return asked


def plan(engine: Engine, statement: str, parameters: Any) -> list[str]:
    """SQLite's query plan of one statement, a line per step."""
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
        return [str(row) for row in rows]
