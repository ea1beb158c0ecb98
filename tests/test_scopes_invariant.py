"""The invariant with who asks: a reading for some scopes is made of those scopes alone.

For random conversations whose messages carry random visibility scopes (the channel's, or one of
two private ones) and a random asker: the asker's context of a message they may see names no
message outside their scopes (flow, recalled thoughts, the members of recalled schemas), and it
equals the context a store that only ever held the messages they may see gives the operator; so
messages in other scopes, before or after, change nothing of it, not even a distance.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awai_engine.values import CHANNEL_SCOPE, ReadingContext, Utterance
from awai_engine.visibility import EVERYTHING, Scopes
from bots.runtime import Runtime
from bots.terminal.transcript import read_transcript, transcript_line
from tests.test_invariant import SENTENCES

PRIVATE = ("p1", "p2")
counter = itertools.count()

message_strategy = st.tuples(
    st.sampled_from(SENTENCES),
    st.sampled_from(["ann", "bo", "cy"]),
    st.sampled_from([CHANNEL_SCOPE, CHANNEL_SCOPE, *PRIVATE]),
    st.booleans(),  # a reply in its scope's thread
)


@pytest.fixture
def two_stores(make_runtime: Callable[..., Runtime]) -> tuple[Runtime, Runtime]:
    """One store with every message and one with only the asker's; each example uses a channel
    of its own in both (a data folder per example would cost seconds each)."""
    return make_runtime("all-scopes"), make_runtime("visible-only")


def build(spec: list[tuple[str, str, str, bool]], channel: str) -> list[Utterance]:
    """Messages in channel order; a private scope's messages form that private thread."""
    return [
        Utterance(
            channel=channel,
            message_id=f"m{i:03d}",
            speaker_id=speaker,
            speaker_name=speaker.title(),
            text=text,
            ts=1_700_000_000 + 60 * i,
            thread_root=f"thread-{scope}" if scope != CHANNEL_SCOPE or reply else None,
            scope=scope,
        )
        for i, (text, speaker, scope, reply) in enumerate(spec)
    ]


def named_messages(context: ReadingContext) -> set[str]:
    flow = set(context.flow.message_ids())
    recalled = {item.source.message_id for item in context.associations}
    members = {member for schema in context.schemas for member in schema.members}
    return {context.message.message_id} | flow | recalled | members


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    spec=st.lists(message_strategy, min_size=2, max_size=16),
    private=st.sets(st.sampled_from(PRIVATE)),
    data=st.data(),
)
@pytest.mark.slow
def test_a_reading_for_some_scopes_is_the_reading_of_only_the_messages_they_may_see(
    two_stores: tuple[Runtime, Runtime],
    spec: list[tuple[str, str, str, bool]],
    private: set[str],
    data: st.DataObject,
) -> None:
    full, visible_only = two_stores
    channel = f"terminal:local:scopes{next(counter)}"
    messages = build(spec, channel)
    asker = Scopes.channel(*private)
    visible = [message for message in messages if asker.allows(message.scope)]
    if not visible:
        return
    target = data.draw(st.sampled_from(visible), label="message read")
    by_id = {message.message_id: message for message in messages}

    full.engine.ingest(messages)
    context = full.engine.context(channel, target.message_id, asker)
    visible_only.engine.ingest(visible)
    alone = visible_only.engine.context(channel, target.message_id, EVERYTHING)

    assert all(asker.allows(by_id[name].scope) for name in named_messages(context))
    assert context == alone


def test_an_asker_who_may_read_every_scope_sees_the_whole_channel(runtime: Runtime) -> None:
    spec = [
        (text, "ann", scope, False)
        for text, scope in zip(SENTENCES, itertools.cycle(("channel", "p1")))
    ]
    messages = build(spec[:8], "terminal:local:whole")
    runtime.engine.ingest(messages)
    last = messages[-1].message_id
    assert runtime.engine.context(
        "terminal:local:whole", last, Scopes.channel("p1")
    ) == runtime.engine.context("terminal:local:whole", last, EVERYTHING)
    assert not runtime.engine.view("terminal:local:whole", Scopes.channel("p1")).restricted
    assert runtime.engine.view("terminal:local:whole", Scopes.channel()).restricted


def test_an_exported_channel_keeps_each_message_s_scope_when_imported(
    runtime: Runtime, tmp_path: Path
) -> None:
    spec = [(SENTENCES[n], "ann", scope, False) for n, scope in enumerate(("channel", "p1"))]
    runtime.engine.ingest(build(spec, "terminal:local:export"))
    path = tmp_path / "export.jsonl"
    lines = [transcript_line(u) for u in runtime.store.utterances("terminal:local:export")]
    path.write_text("\n".join(lines) + "\n")
    imported = read_transcript(path, "terminal:local:export", 1 << 20).utterances
    assert [u.scope for u in imported] == ["channel", "p1"]


@pytest.mark.slow
def test_schemas_of_a_view_that_leaves_messages_out_have_the_ids_of_a_store_of_that_view(
    two_stores: tuple[Runtime, Runtime],
) -> None:
    """Found by the property above: clustered alone, the view's schema got an id of its own,
    while a store holding only those messages names it down its chain of fixed points (4, 5)."""
    full, visible_only = two_stores
    said = "The deploy failed because the disk was full."
    messages = build(
        [(said, "ann", CHANNEL_SCOPE, False)] * 6 + [(said, "ann", "p1", False)],
        "terminal:local:view-ids",
    )
    full.engine.ingest(messages)
    visible_only.engine.ingest(messages[:6])
    asker = Scopes.channel()
    seen = full.engine.context("terminal:local:view-ids", "m005", asker)
    assert seen.schemas and seen == visible_only.engine.context(
        "terminal:local:view-ids", "m005", EVERYTHING
    )
    digest = full.schemas.digest("terminal:local:view-ids", asker)
    alone = visible_only.schemas.digest("terminal:local:view-ids", EVERYTHING)
    assert [s.schema_id for s in digest.speakers[0].schemas] == [
        s.schema_id for s in alone.speakers[0].schemas
    ]
