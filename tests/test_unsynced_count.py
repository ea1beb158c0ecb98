"""A start counts each channel's rows not yet marked synced (storage.repair): through an index of
those rows alone, not by reading every row of the channel."""

from __future__ import annotations

from bots.runtime import Runtime
from tests.factories import utterance
from tests.sql_plans import plan, statements_during

CHANNEL = "terminal:local:test"


def test_the_starts_count_of_rows_not_yet_synced_reads_their_own_index(runtime: Runtime) -> None:
    runtime.engine.ingest([utterance(f"m{i}", f"line {i} about the release") for i in range(5)])
    engine = runtime.store.db.engine
    asked = statements_during(
        engine,
        lambda statement: "synced IS 0" in statement,
        lambda: runtime.store.audit(CHANNEL, thorough=False),  # what a start asks of each channel
    )
    assert asked
    for statement, parameters in asked:
        assert any("ix_utterance_unsynced" in row for row in plan(engine, statement, parameters)), (
            statement
        )
