"""The no-future-leak property with schemas: later messages, re-clustering and digests never
change the reading of an earlier message.

Each example plays one channel's life: some messages, maybe a re-clustering, more messages,
maybe another, then a reading of message ``i``; then the rest of the messages, maybe an edit or
a deletion of a message after ``i``, a re-clustering and maybe a digest, and the same reading
again, which must be identical (schemas, their ids,
versions, names, keyphrases, similarities and which thoughts come back to a schema included).
Sentences come from a small vocabulary so the embedder's cache makes every ingest cheap after
the first.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awai_engine.embedding import Embedder
from awai_engine.values import Utterance
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.schema_topics import CHATTER, topic_sentences

SPEAKERS = ("ann", "bob")
FAVOURITES = {
    speaker: [text for text, _ in topic_sentences([topic], 8, seed=3)]
    for speaker, topic in zip(SPEAKERS, ("battery", "food"), strict=True)
}

# (on the speaker's topic: three times in four, which sentence)
sentence = st.tuples(st.integers(0, 3).map(bool), st.integers(0, 7))
message = st.tuples(st.integers(0, len(SPEAKERS) - 1), st.lists(sentence, min_size=1, max_size=3))
# Every channel opens with each speaker on their topic twice, so schemas exist from early on.
PRELUDE = [(who, [(True, first), (True, first + 1)]) for first in (0, 2) for who in (0, 1)]


def utterances(channel: str, plan: list[tuple[int, list[tuple[bool, int]]]]) -> list[Utterance]:
    said = []
    for number, (who, sentences) in enumerate(plan, start=1):
        speaker = SPEAKERS[who]
        text = " ".join(
            FAVOURITES[speaker][index] if favourite else CHATTER[index]
            for favourite, index in sentences
        )
        said.append(
            Utterance(
                channel=channel,
                message_id=f"m{number:03d}",
                speaker_id=speaker,
                speaker_name=speaker.title(),
                text=text,
                ts=float(number),
            )
        )
    return said


@pytest.mark.slow
def test_reclustering_digests_and_later_messages_never_change_an_earlier_reading(
    make_runtime: Callable[..., Runtime], embedder: Embedder
) -> None:
    runtime = make_runtime(digest={"picture_width_px": 300, "row_height_px": 40})
    embedder.encode([*CHATTER, *itertools.chain(*FAVOURITES.values())])  # warm the cache
    channels = itertools.count()
    seen = {
        "examples": 0,
        "with schemas": 0,
        "stored run": 0,
        "clustered on demand": 0,
        "coming back to one": 0,
    }

    @settings(
        max_examples=100,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(plan=st.lists(message, min_size=2, max_size=10), data=st.data())
    def one_channel(plan: list[tuple[int, list[tuple[bool, int]]]], data: st.DataObject) -> None:
        channel = f"terminal:local:invariant-{next(channels)}"
        said = utterances(channel, PRELUDE + plan)
        before = data.draw(st.integers(2, len(said)), label="ingested before the reading")
        position = data.draw(st.integers(before // 2, before - 1), label="message read")
        early = data.draw(st.none() | st.integers(1, before - 1), label="re-clustered after")
        recluster_before_reading, digest = data.draw(st.booleans()), data.draw(st.booleans())
        engine, schemas = runtime.engine, runtime.schemas

        if early is not None:  # a re-clustering while the channel was shorter
            engine.ingest(said[:early])
            schemas.recluster(channel)
        engine.ingest(said[early or 0 : before])
        if recluster_before_reading:
            schemas.recluster(channel)
        message_id = said[position].message_id
        first = engine.read(channel, message_id, EVERYTHING)
        speaker = said[position].speaker_id
        stored = any(found.stored for found in schemas.schemas(channel, speaker, message_id))
        # Whichever run serves it (stored, or clustered now), it is made of the speaker's
        # thoughts before the message only.
        order = {utterance.message_id: number for number, utterance in enumerate(said)}
        for schema in first.context.schemas:
            assert all(order[member] < position for member in schema.members)
            assert schema.as_of < position

        engine.ingest(said[before:])
        later = data.draw(st.sampled_from([None, *range(position + 1, len(said))]), label="later")
        if later is not None:  # a later message is edited, or deleted, after a re-clustering
            schemas.recluster(channel)
            if data.draw(st.booleans(), label="delete it"):
                engine.delete(channel, said[later].message_id)
            else:
                edited = f"{CHATTER[later % len(CHATTER)]} {said[later].text}"
                assert engine.edit(said[later].model_copy(update={"text": edited}))
        schemas.recluster(channel)
        if digest:
            schemas.digest(channel, EVERYTHING)
        assert engine.read(channel, message_id, EVERYTHING) == first

        seen["examples"] += 1
        if first.context.schemas:
            seen["with schemas"] += 1
            seen["stored run" if stored else "clustered on demand"] += 1
            # Names, keyphrases and "comes back to it" are part of the reading compared above.
            assert all(schema.summary and schema.keyphrases for schema in first.context.schemas)
            if any(schema.returned_by for schema in first.context.schemas):
                seen["coming back to one"] += 1

    one_channel()
    print(seen)
    # The property is not vacuous: schemas were recalled, from stored runs and from on-demand ones.
    assert seen["with schemas"] >= 10
    # The run in force (the speaker's first F(n) thoughts) is stored once a re-clustering has
    # reached that fixed point; before that it is clustered on demand, with the same function.
    assert seen["stored run"] >= 1 and seen["clustered on demand"] >= 2
    assert seen["coming back to one"] >= 5
