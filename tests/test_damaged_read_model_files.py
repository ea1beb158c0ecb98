"""Damage to a persisted read model that no fixed list of exception types foresaw: the file is
derived from SQL and Chroma, so any failure to load it means it is rebuilt, never a crash.

Each test writes the real file through the real store, damages it as an operator's tools or a
torn write could, and opens the folder again as the next process does.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from bots.runtime import Runtime
from storage.store import AwaiStore
from tests.test_read_model_files import CHANNEL, PERSISTED, assert_same_timeline, lines, rebuilt


def _pointer(runtime: Runtime) -> Path:
    [pointer] = (runtime.settings.data_dir / "read-models").glob("*/current.json")
    return pointer


def _column_that_does_not_decode(runtime: Runtime) -> None:
    """A column file whose bytes are no JSON, its length and checksum in ``current.json``
    rewritten to match (as a foreign tool or a half-restored backup could leave it): the checks
    of length and checksum pass, and orjson's own error, a type no list foresaw, is what fails."""
    pointer = _pointer(runtime)
    meta = json.loads(pointer.read_text())
    column = pointer.parent / meta["generation"] / "message_ids"
    data = b"{'not json" + column.read_bytes()[10:]
    column.write_bytes(data)
    meta["files"]["message_ids"] = [len(data), zlib.crc32(data)]
    pointer.write_text(json.dumps(meta), encoding="utf-8")


def _pointer_holding_a_list(runtime: Runtime) -> None:
    _pointer(runtime).write_text("[1, 2, 3]", encoding="utf-8")


@pytest.mark.parametrize(
    "damage",
    [_column_that_does_not_decode, _pointer_holding_a_list],
    ids=["a column that does not decode", "current.json holding a list"],
)
def test_a_read_model_file_that_fails_to_load_in_any_way_is_rebuilt(
    damage: Callable[[Runtime], None], make_runtime: Callable[..., Runtime]
) -> None:
    writer = make_runtime("data", **PERSISTED)
    writer.engine.ingest(lines(1, 30))
    writer.store.timeline(CHANNEL)
    damage(writer)

    started = AwaiStore.open(writer.settings)
    reference = rebuilt(writer)
    try:
        assert_same_timeline(started.timeline(CHANNEL), reference.timeline(CHANNEL))
    finally:
        started.close()  # leaves the rebuilt read model on disk
        reference.close()
    again = AwaiStore.open(writer.settings)
    try:
        assert again.read_model.files is not None
        assert again.read_model.files.load(CHANNEL, writer.settings.recall_index) is not None
    finally:
        again.close()
