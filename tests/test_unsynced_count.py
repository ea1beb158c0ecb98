"""A start counts each channel's rows not yet marked synced (storage.repair): through an index of
those rows alone, not by reading every row of the channel."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event

from bots.runtime import Runtime
from tests.factories import utterance

CHANNEL = "terminal:local:test"


def test_the_starts_count_of_rows_not_yet_synced_reads_their_own_index(runtime: Runtime) -> None:
    runtime.engine.ingest([utterance(f"m{i}", f"line {i} about the release") for i in range(5)])
    engine = runtime.store.db.engine
    asked: list[tuple[str, Any]] = []

    def seen(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if "synced IS 0" in statement:
            asked.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", seen)
    try:
        runtime.store.audit(CHANNEL, thorough=False)  # what a start asks of each channel
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert asked
    with engine.connect() as connection:
        for statement, parameters in asked:
            plan = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
            assert any("ix_utterance_unsynced" in str(row) for row in plan), statement
