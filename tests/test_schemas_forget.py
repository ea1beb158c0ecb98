"""Forgetting a speaker, and deleting a message: no removed text survives anywhere."""

from __future__ import annotations

import pytest
from sqlalchemy import String, Text, inspect, select

from awai_engine.samples import SAMPLES
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from bots.terminal.transcript import Transcript, read_transcript
from storage.sql import Base, ChannelRow


def ingest_sample(runtime: Runtime) -> Transcript:
    transcript = read_transcript(SAMPLES["en"].path, SAMPLES["en"].channel, 10**9)
    runtime.engine.ingest(transcript.utterances)
    return transcript


def every_stored_text(runtime: Runtime) -> list[str]:
    """Every string in every column of every table AWAI's database holds."""
    found = []
    with runtime.store.db.read() as session:
        for table in Base.metadata.sorted_tables:
            if not inspect(runtime.store.db.engine).has_table(table.name):
                continue
            columns = [c for c in table.columns if isinstance(c.type, String | Text)]
            if columns:
                for row in session.execute(select(*columns)):
                    found.extend(value for value in row if isinstance(value, str))
    return found


def identities(runtime: Runtime, channel: str, exclude: str = "") -> dict[str, list[tuple]]:
    """Each speaker's schemas by id, version, size and summary (positions shift on removal)."""
    return {
        item.speaker_id: [(s.schema_id, s.version, s.size, s.summary) for s in item.schemas]
        for item in runtime.schemas.schemas(channel)
        if item.speaker_id != exclude
    }


@pytest.mark.slow
def test_forgetting_a_speaker_leaves_no_text_of_theirs_in_sql_chroma_or_any_schema(
    runtime: Runtime,
) -> None:
    transcript = ingest_sample(runtime)
    channel = transcript.channel
    schemas = runtime.schemas
    schemas.recluster(channel)
    schemas.digest(channel, EVERYTHING)
    for utterance in transcript.utterances:  # readings memoise summaries of on-demand schemas
        if utterance.speaker_id == "Carla":
            runtime.engine.read(channel, utterance.message_id, EVERYTHING)
    carla = [u for u in transcript.utterances if u.speaker_id == "Carla"]
    timeline = runtime.store.timeline(channel)
    carla_thoughts = [
        thought.text
        for message in timeline.messages
        if message.ref.speaker_id == "Carla"
        for thought in message.thoughts
    ]
    others_before = identities(runtime, channel, exclude="Carla")
    assert any(s.schemas for s in schemas.schemas(channel, "Carla"))
    assert any(v.speaker_id == "Carla" for v in runtime.store.schemas.versions(channel))

    report = schemas.forget_speaker(channel, "Carla")

    assert report.messages == len(carla)
    assert report.schema_versions >= 1 and report.summaries >= 1 and report.digest_entries >= 1
    texts = [u.text for u in carla] + [t for t in carla_thoughts if len(t) >= 12]
    stored = every_stored_text(runtime)
    leaks = [text for text in texts if any(text in value for value in stored)]
    assert leaks == []
    with runtime.store.db.read() as session:
        name = session.scalar(select(ChannelRow.collection).where(ChannelRow.key == channel))
    collection = runtime.store.vectors.client.get_collection(name, embedding_function=None)
    assert collection.count() == len(runtime.store.timeline(channel).vectors)
    assert collection.get(where={"speaker_id": "Carla"})["ids"] == []
    assert not any(
        vector_id.split("#")[0] in {u.message_id for u in carla}
        for vector_id in collection.get()["ids"]
    )
    assert all(v.speaker_id != "Carla" for v in runtime.store.schemas.versions(channel))
    assert "Carla" not in schemas.speakers(channel)
    assert identities(runtime, channel) == others_before  # nobody else's schemas changed
    digest = schemas.digest(channel, EVERYTHING)
    assert all(section.speaker_id != "Carla" for section in digest.speakers)
    assert not [text for text in texts if text in digest.markdown]  # others may name her
    # Tombstones: a backfill or a redelivery cannot bring the messages back.
    assert runtime.engine.ingest(carla).refused_deleted == len(carla)


@pytest.mark.slow
def test_a_deleted_message_leaves_no_schema_version_or_summary_behind(runtime: Runtime) -> None:
    transcript = ingest_sample(runtime)
    channel = transcript.channel
    runtime.schemas.recluster(channel)
    versions = runtime.store.schemas.versions(channel, "Dev")
    doomed = versions[0].members[0].split("#")[0]  # a message inside Dev's battery schema
    text = next(u.text for u in transcript.utterances if u.message_id == doomed)

    first_sentence = text.split(". ")[0]
    runtime.engine.delete(channel, doomed)

    # At once, not at the next re-clustering: no version holds it and no text of it is stored.
    remaining = runtime.store.schemas.versions(channel)
    assert not any(key.startswith(f"{doomed}#") for v in remaining for key in v.members)
    assert not any(first_sentence in value for value in every_stored_text(runtime))
    later = [u.message_id for u in transcript.utterances if u.speaker_id == "Dev"][-1]
    recalled = runtime.engine.read(channel, later, EVERYTHING).context.schemas
    assert all(first_sentence not in schema.summary for schema in recalled)
    runtime.schemas.recluster(channel)
    assert not any(first_sentence in value for value in every_stored_text(runtime))
