"""A read model's catch-up asks SQL for the rows after the last id it holds (storage.read_model):
each such query reads that range of the channel's rows by the arrival index, not every row of
the channel (which made an ingest's cost per message grow with the channel)."""

from __future__ import annotations

from collections.abc import Callable

from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.factories import utterance
from tests.sql_plans import plan, statements_during

CHANNEL = "terminal:local:test"


def test_a_catch_up_reads_the_rows_after_its_last_id_by_their_range_of_the_arrival_index(
    make_runtime: Callable[..., Runtime],
) -> None:
    writer = make_runtime()
    writer.engine.ingest([utterance(f"m{i}", f"line {i} about the release") for i in range(30)])
    reader = make_runtime()  # another process on the same folder
    reader.engine.context(CHANNEL, "m29", EVERYTHING)
    writer.engine.ingest([utterance(f"m{i}", f"line {i} about the rollout") for i in range(30, 35)])
    engine = reader.store.db.engine
    asked = statements_during(
        engine,
        lambda statement: "utterances.id >" in statement,
        # caught up: the 5 rows after its last id
        lambda: reader.engine.context(CHANNEL, "m34", EVERYTHING),
    )
    assert len(asked) >= 2  # the rows, their thoughts (and the fingerprint of the rows added)
    for statement, parameters in asked:
        steps = plan(engine, statement, parameters)
        assert any("ix_utterance_arrival" in row and "id>?" in row for row in steps), (
            statement,
            steps,
        )
