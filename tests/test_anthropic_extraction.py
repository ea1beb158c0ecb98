"""Thoughts and summaries at ingest, schema summaries and stances, through the fake Messages API.

What it proves: ingest makes one call per batch of utterances (≤ 1 per utterance amortised) and
stores the model's thoughts; a malformed entry costs only its utterance (one repair, then offline
with a note); a batch without an answer is extracted offline with a note; stances and schema
summaries are written by the model, and their failures fall back without raising.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from awai_engine.backends.anthropic.answers import (
    EXTRACT_TOOL,
    SCHEMA_SUMMARY_TOOL,
    STANCE_TOOL,
)
from awai_engine.embedding import Embedder
from awai_engine.engine import Engine
from awai_engine.timeline import Timeline
from awai_engine.values import Association, RecalledSchema
from awai_engine.visibility import EVERYTHING
from tests.factories import utterance
from tests.fake_anthropic import (
    AnthropicRuntimes,
    Received,
    Reply,
    canned_answer,
    server_error,
    tool_use,
)

CHANNEL = "terminal:local:test"


@pytest.fixture
def llm(tmp_path: Path, embedder: Embedder) -> Iterator[AnthropicRuntimes]:
    with AnthropicRuntimes(tmp_path, embedder) as runtimes:
        yield runtimes


def _marked(request: Received) -> Reply:
    """The canned extraction with every thought marked, so stored thoughts show their origin."""
    answer = canned_answer(request)
    if request.tool == EXTRACT_TOOL:
        (block,) = answer.body["content"]  # type: ignore[index]
        for entry in block["input"]["utterances"]:
            entry["thoughts"] = [f"model: {thought}" for thought in entry["thoughts"]]
    return answer


def test_ingest_extracts_a_batch_of_utterances_per_call_and_stores_the_models_thoughts(llm):
    llm.fake.respond = _marked
    runtime = llm(extraction_batch_size=4)
    said = [utterance(f"m{i}", f"Point {i} about caching. Detail {i}.") for i in range(1, 11)]

    report = runtime.engine.ingest(said)

    assert report.added == 10
    assert report.notes == ()
    assert len(llm.fake.calls(EXTRACT_TOOL)) == 3  # 4 + 4 + 2
    timeline = runtime.store.timeline(CHANNEL)
    first = timeline.messages[timeline.position_of["m1"]]
    assert [thought.text for thought in first.thoughts] == [
        "model: Point 1 about caching.",
        "model: Detail 1.",
    ]
    assert first.summary == "Point 1 about caching."


def test_a_bad_entry_is_repaired_once_and_a_still_missing_one_is_extracted_offline(llm):
    runtime = llm()
    first = {
        "utterances": [
            {"n": 1, "thoughts": ["Cache it."], "summary": "Cache it."},
            {"n": 2, "thoughts": [], "summary": "Nothing?"},
        ]
    }
    repaired = {"utterances": [{"n": 2, "thoughts": ["Five minutes."], "summary": "5 min."}]}
    llm.fake.script(tool_use(EXTRACT_TOOL, first), tool_use(EXTRACT_TOOL, repaired))

    report = runtime.engine.ingest(
        [
            utterance("m1", "Let us cache it."),
            utterance("m2", "Five minutes is enough.", "bob"),
            utterance("m3", "Agreed. Ship it.", "cat"),
        ]
    )

    calls = llm.fake.calls(EXTRACT_TOOL)
    assert len(calls) == 2
    tool_result = calls[1].body["messages"][2]["content"][0]
    assert tool_result["is_error"] is True
    assert "n = 2, 3" in tool_result["content"]
    timeline = runtime.store.timeline(CHANNEL)
    thoughts = {m.message_id: [t.text for t in m.thoughts] for m in timeline.messages}
    assert thoughts == {
        "m1": ["Cache it."],
        "m2": ["Five minutes."],
        "m3": ["Agreed.", "Ship it."],  # offline: its sentences
    }
    (note,) = report.notes
    assert note.startswith("m3: Thoughts and summary were made offline")
    assert "malformed" in note


def test_a_batch_without_an_answer_is_extracted_offline_and_later_batches_are_not_tried(llm):
    runtime = llm(extraction_batch_size=2, max_retries=1)
    llm.fake.script(server_error(), server_error())

    report = runtime.engine.ingest(
        [utterance(f"m{i}", f"Message {i}. It has two sentences.") for i in range(1, 6)]
    )

    assert llm.fake.posts == 2  # the first batch and its one retry
    assert report.added == 5
    assert len(report.notes) == 5
    assert all("HTTP 500" in note for note in report.notes)
    timeline = runtime.store.timeline(CHANNEL)
    assert [t.text for t in timeline.messages[0].thoughts] == [
        "Message 1.",
        "It has two sentences.",
    ]


def test_too_many_or_too_long_thoughts_are_held_to_the_limits(llm):
    runtime = llm(limits={"max_thoughts_per_message": 3, "max_thought_chars": 20})
    answer = {
        "utterances": [
            {"n": 1, "thoughts": ["a" * 45, "b", "c", "d"], "summary": "Many thoughts."},
        ]
    }
    llm.fake.script(tool_use(EXTRACT_TOOL, answer))

    report = runtime.engine.ingest([utterance("m1", "A long one. And more.")])

    message = runtime.store.timeline(CHANNEL).messages[0]
    assert [t.text for t in message.thoughts] == ["a" * 20, "a" * 20, "a" * 5 + " b c d"]
    assert any("the first 2 are kept" in note for note in report.notes)


def test_a_message_too_long_for_one_answer_is_extracted_offline_without_a_call(llm):
    runtime = llm(extraction_max_tokens=256)
    report = runtime.engine.ingest([utterance("m1", "word " * 120)])

    assert llm.fake.posts == 0
    assert report.added == 1
    assert any("too long for one extraction answer" in note for note in report.notes)


class FixedSchemas:
    """Recalls the given schemas for every message (stands in for the schemas issue's recall)."""

    def __init__(self, schemas: tuple[RecalledSchema, ...]) -> None:
        self.schemas = schemas

    def recall(
        self, channel: str, timeline: Timeline, position: int, associations: tuple[Association, ...]
    ) -> tuple[tuple[RecalledSchema, ...], tuple[Association, ...]]:
        return self.schemas, associations


def _schema(schema_id: str, summary: str, similarity: float) -> RecalledSchema:
    return RecalledSchema(
        schema_id=schema_id, version=1, summary=summary, size=4, similarity=similarity, as_of=0
    )


def test_stances_are_judged_by_the_model_unknown_ids_dropped_and_the_rest_noted(llm, caplog):
    runtime = llm()
    runtime.engine.ingest(
        [
            utterance("m1", "Caching always causes stale data."),
            utterance("m2", "We could cache search results for five minutes.", "bob"),
            utterance("m3", "Stale results would confuse users."),
        ]
    )
    schemas = (
        _schema("s-stale", "Ann distrusts caches because of stale data.", 0.7),
        _schema("s-users", "Ann puts users' confusion first.", 0.6),
    )
    engine = Engine(
        runtime.settings,
        runtime.store,
        runtime.engine.embedder,
        runtime.engine.backend,
        FixedSchemas(schemas),
    )
    stances = {
        "stances": [
            {"schema_id": "s-stale", "stance": "supports", "reason": "Same worry again."},
            {"schema_id": "s-made-up", "stance": "opposes", "reason": "Not recalled."},
        ]
    }
    llm.fake.script(tool_use(STANCE_TOOL, stances))

    with caplog.at_level(logging.WARNING):
        reading = engine.read(CHANNEL, "m3", EVERYTHING)

    (request,) = llm.fake.calls(STANCE_TOOL)
    assert "s-stale, s-users" in request.user_text()
    assert "Ann distrusts caches" in request.user_text()
    judged = {
        schema.schema_id: (schema.stance, schema.stance_reason)
        for schema in reading.context.schemas
    }
    assert judged == {
        "s-stale": ("supports", "Same worry again."),
        "s-users": ("undetermined", None),
    }
    assert "s-made-up" in caplog.text
    assert any("could not judge the stance of 1" in note for note in reading.notes)
    reading_request = llm.fake.calls("write_reading")[0].user_text()
    assert "judged supports: Same worry again." in reading_request


def test_a_schema_summary_is_written_by_the_model_and_falls_back_offline(llm):
    runtime = llm(max_retries=0)
    backend = runtime.engine.backend
    thoughts = ["Caches cause stale data.", "Stale data confuses users."]

    written = backend.summarise_schema("Ann", thoughts)
    llm.fake.script(server_error())
    fallback = backend.summarise_schema("Ann", thoughts)

    assert written == "A canned preconception."
    (request, _) = llm.fake.calls(SCHEMA_SUMMARY_TOOL)
    assert "Thoughts of Ann" in request.user_text()
    assert fallback == "Caches cause stale data."
