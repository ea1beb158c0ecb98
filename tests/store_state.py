"""Both stores of one channel as plain data, to compare a run with the run it must equal."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from awai_engine.engine import Engine
from awai_engine.visibility import EVERYTHING
from storage.sql import ChannelRow, DeletedMessageRow, UtteranceRow
from storage.store import AwaiStore

FLOAT_TOLERANCE = 1e-4


def stored_state(store: AwaiStore, engine: Engine, channel: str) -> dict[str, Any]:
    """Rows (text, thoughts, edit history, synced), copies per id, tombstones, vector ids, readings.

    ``copies`` counts rows per message id and ``vector_copies`` the vectors returned, so "stored
    exactly once" is checked against what the stores hold, not against what they promise.
    """
    with store.db.read() as session:
        channel_id, collection = session.execute(
            select(ChannelRow.id, ChannelRow.collection).where(ChannelRow.key == channel)
        ).one()
        mine = UtteranceRow.channel_id == channel_id
        copies = session.execute(
            select(UtteranceRow.message_id, func.count())
            .where(mine)
            .group_by(UtteranceRow.message_id)
        ).all()
        rows = session.scalars(select(UtteranceRow).where(mine).order_by(UtteranceRow.message_id))
        messages = {
            row.message_id: {
                "text": row.text,
                "synced": row.synced,
                "thoughts": [t.text for t in row.thoughts],
                "versions": [v.text for v in row.versions],
            }
            for row in rows
        }
        tombstones = sorted(
            session.scalars(
                select(DeletedMessageRow.message_id).where(
                    DeletedMessageRow.channel_id == channel_id
                )
            )
        )
    vector_ids = store.vectors.all_ids(collection)  # a compaction or re-embed renames it
    readings = [
        engine.context(channel, message.message_id, EVERYTHING).model_dump(mode="json")
        for message in store.timeline(channel).messages
    ]
    return {
        "copies": dict(copies),
        "messages": messages,
        "tombstones": tombstones,
        "vector_ids": sorted(vector_ids),
        "vector_copies": len(vector_ids),
        "readings": readings,
    }


def assert_stored_once(state: dict[str, Any]) -> None:
    """Every message once in SQL, every vector once in Chroma, and exactly the expected vectors."""
    assert set(state["copies"].values()) <= {1}
    assert state["vector_copies"] == len(set(state["vector_ids"]))
    expected = sorted(
        f"{message_id}#{index}"
        for message_id, message in state["messages"].items()
        for index in range(len(message["thoughts"]))
    )
    assert state["vector_ids"] == expected
    assert all(message["synced"] for message in state["messages"].values())


def assert_same(actual: Any, expected: Any, where: str = "state") -> None:
    """Equal, except floats (similarities of vectors embedded in another batch) within 1e-4."""
    if isinstance(expected, float) and isinstance(actual, float):
        assert abs(actual - expected) <= FLOAT_TOLERANCE, where
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys(), where
        for key in expected:
            assert_same(actual[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), where
        for index, (left, right) in enumerate(zip(actual, expected, strict=True)):
            assert_same(left, right, f"{where}[{index}]")
    else:
        assert actual == expected, where
