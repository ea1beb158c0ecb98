"""A reading recalls the speaker's recurring concern and says when the message comes back to it.

Driven on a labelled launch chat (tests/data/preconceptions/launch_payments.jsonl): Maya raises one
payment worry in different words eight times; her eighth message opens "I keep coming back to
this". The labels say which messages are about the worry; nothing here depends on its words.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from bots.terminal.transcript import read_transcript

CHAT = Path(__file__).parent / "data" / "preconceptions" / "launch_payments.jsonl"


def labelled(runtime: Runtime) -> tuple[str, dict[str, str]]:
    transcript = read_transcript(CHAT, "launch", 10**9)
    runtime.engine.ingest(transcript.utterances)
    labels = {
        record["id"]: record["label"]
        for record in map(json.loads, CHAT.read_text(encoding="utf-8").splitlines())
    }
    return transcript.channel, labels


@pytest.mark.slow
def test_a_message_that_returns_to_the_speakers_worry_recalls_it_and_says_so(
    runtime: Runtime,
) -> None:
    channel, labels = labelled(runtime)
    members = {}
    for speaker in runtime.schemas.schemas(channel, "Maya", before_message="m028"):
        for schema in speaker.schemas:
            members[schema.schema_id] = {m.message_id for m in schema.members}
    reading = runtime.engine.read(channel, "m028", EVERYTHING)
    assert labels["m028"] == "double-charge"
    worry = [
        schema
        for schema in reading.context.schemas
        if members.get(schema.schema_id)
        and all(labels[m] == "double-charge" for m in members[schema.schema_id])
    ]
    assert worry, "her payment worry is recalled"
    assert worry[0].returned_by == (0,)  # "I keep coming back to this: …" is its first thought
    assert worry[0].keyphrases and worry[0].summary


@pytest.mark.slow
def test_chatter_by_the_same_speaker_comes_back_to_no_preconception(runtime: Runtime) -> None:
    channel, labels = labelled(runtime)
    runtime.schemas.recluster(channel)
    chatter = [m for m, label in labels.items() if label == "chatter"]
    for message_id in chatter:
        reading = runtime.engine.read(channel, message_id, EVERYTHING)
        assert all(not schema.returned_by for schema in reading.context.schemas), message_id


@pytest.mark.slow
def test_awai_schemas_lists_every_member_with_its_thought_index_name_and_keyphrases(
    runtime: Runtime,
) -> None:
    channel, labels = labelled(runtime)
    runtime.schemas.recluster(channel)
    (maya,) = runtime.schemas.schemas(channel, "Maya")
    versions = {(v.schema_id, v.version): v for v in runtime.store.schemas.versions(channel)}
    for schema in maya.schemas:
        stored = versions[(schema.schema_id, schema.version)]
        assert [f"{m.message_id}#{m.thought_index}" for m in schema.members] == list(stored.members)
        assert schema.name == schema.summary and schema.keyphrases
        assert len(schema.examples) == 2
        assert all(any(e == m.text for m in schema.members) for e in schema.examples)
    worry = max(
        maya.schemas,
        key=lambda s: sum(labels[m.message_id] == "double-charge" for m in s.members),
    )
    said = {m.message_id for m in worry.members}
    concern = {m for m, label in labels.items() if label == "double-charge"}
    assert len(said & concern) >= 0.6 * len(concern)
    assert len(said & concern) >= 0.8 * len(said)
