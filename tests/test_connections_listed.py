"""Which earlier messages a reading lists: those that say something the reader needs.

An acknowledgement, thanks or greeting recalled into the context carries nothing unless it is
what the message answers or replies to; and the layout lists only the best few under the
headline, saying how many more there are.
"""

from __future__ import annotations

import pytest

from awai_engine.connections import connect
from awai_engine.values import (
    Association,
    Connection,
    Flow,
    Headline,
    Reading,
    ReadingContext,
    ReplyScore,
    Thought,
)
from bots.layout import LISTED_MOST, layout, plain_text
from tests.factories import message_ref

RECALLED = (
    ("Omar", "On it."),
    ("Lena", "thanks Maya!"),
    ("Kenji", "了解です！"),
    ("Kenji", "賛成です"),
    ("Maya", "The Redis cache evicts session keys when memory hits 80%."),
    ("Lena", "Agree with Maya."),  # a speaker's name is no word of its own
)


def _context(
    target: str | None = None, text: str = "Raising the Redis memory limit would stop it."
) -> ReadingContext:
    associations = tuple(
        Association(
            source=message_ref(f"r{k}", who, 10 + k),
            thought=Thought(index=0, text=said),
            cue_index=0,
            distance=40 - k,
            similarity=0.6,
            threshold=0.3,
            activation=0.0,
            occurrences=1,
        )
        for k, (who, said) in enumerate(RECALLED)
    )
    replies = ()
    if target is not None:
        source = next(a.source for a in associations if a.source.message_id == target)
        replies = (ReplyScore(message=source, probability=0.9, confident=True, asks=False),)
    return ReadingContext(
        channel="terminal:local:ops",
        message=message_ref("m", "Maya", 51),
        text=text,
        thoughts=(Thought(index=0, text=text),),
        flow=Flow(line="top-level"),
        associations=associations,
        replies=replies,
    )


def test_acknowledgements_and_thanks_are_not_listed_as_connections() -> None:
    _, connections = connect(_context())
    assert [item.message.message_id for item in connections] == ["r4"]


@pytest.mark.parametrize("target", ["r0", "r2"])
def test_an_acknowledgement_the_message_replies_to_is_listed(target: str) -> None:
    headline, connections = connect(_context(target))
    assert headline.connection is not None
    assert headline.connection.message.message_id == target
    assert target in {item.message.message_id for item in connections}


def _connection(k: int) -> Connection:
    return Connection(
        message=message_ref(f"c{k}", "Dev", 20 - k),
        relation="relates-to",
        decided_by="cues",
        origin="meaning",
        distance=30 + k,
        earlier_text=f"Background sync number {k} drains the battery.",
    )


@pytest.mark.parametrize(
    ("language", "text", "more"),
    [("en", "Is sync the drain?", "and 3 more"), ("ja", "同期が原因ですか？", "ほか3件")],
)
def test_the_layout_lists_the_best_few_connections_and_counts_the_rest(
    language: str, text: str, more: str
) -> None:
    reading = Reading(
        context=_context(text=text),
        backend="offline",
        offline=True,
        language=language,
        headline=Headline(connection=None),
        connections=tuple(_connection(k) for k in range(LISTED_MOST + 3)),
    )
    section = layout(reading).section("connections")
    assert section is not None
    shown = [plain_text(line) for line in section.lines]
    assert sum("Background sync number" in (line.quote or "") for line in section.lines) == (
        LISTED_MOST
    )
    assert more in shown[-1]


def test_a_message_recalled_by_its_thanks_and_its_claim_is_listed_with_the_claim() -> None:
    context = _context()
    source = message_ref("r9", "Omar", 30)
    recalled = tuple(
        Association(
            source=source,
            thought=Thought(index=index, text=said),
            cue_index=0,
            distance=20,
            similarity=0.6,
            threshold=0.3,
            activation=0.0,
            occurrences=1,
        )
        for index, said in enumerate(("Thanks Maya!", "Redis memory is capped at 2 GB."))
    )
    _, connections = connect(context.model_copy(update={"associations": recalled}))
    assert [(c.message.message_id, c.earlier_text) for c in connections] == [
        ("r9", "Redis memory is capped at 2 GB.")
    ]


def test_a_headline_never_quotes_only_the_greeting_of_the_message_it_names() -> None:
    context = _context("r4")
    said = "Morning all. The Redis cache evicts session keys when memory hits 80%."
    (target,) = context.replies
    associations = tuple(
        item.model_copy(update={"thought": Thought(index=0, text=said)})
        if item.source.message_id == "r4"
        else item
        for item in context.associations
    )
    for quote, shown in (
        ("Morning all.", said),
        ("The Redis cache evicts", "The Redis cache evicts"),
    ):
        headline, _ = connect(
            context.model_copy(
                update={
                    "associations": associations,
                    "replies": (target.model_copy(update={"quote": quote}),),
                }
            )
        )
        assert headline.connection is not None
        assert headline.connection.earlier_text == shown
