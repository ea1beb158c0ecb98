"""Who talks with whom: the speaker's exchange, and meaning recall outside it held to a higher bar."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from awai_engine.association.settings import RecallRules
from awai_engine.exchange import exchange_of
from awai_engine.timeline import Timeline
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.factories import one_thought_timeline, utterance

CHANNEL = "terminal:local:test"


def timeline_of(lines: list[tuple[str, str, tuple[str, ...]]]) -> Timeline:
    """A timeline of (speaker name, text, addressees) lines, one random vector per message."""
    return one_thought_timeline(lines, np.random.default_rng(5).normal(size=(len(lines), 4)))


LINES = [
    ("Ann", "the build is red", ()),
    ("Bo", "ann: which job?", ("Ann",)),
    ("Cy", "anyone tried the new kernel?", ()),
    ("Dee", "cy: yes, works for me", ("Cy",)),
    ("Ann", "bo: the upload job", ("Bo",)),
    ("Eve", "hello all", ()),
    ("Bo", "retrying it now", ()),
]


def test_the_exchange_holds_who_the_speaker_addressed_and_who_addressed_them() -> None:
    timeline = timeline_of(LINES)
    bo = exchange_of(timeline, 6, window=50)
    assert bo.partners == {"ann"}
    assert not bo.alone
    assert bo.includes(timeline, 0)  # Ann's line
    assert bo.includes(timeline, 4)  # Ann to Bo
    assert not bo.includes(timeline, 2)  # Cy and Dee talk about something else
    assert not bo.includes(timeline, 3)
    eve = exchange_of(timeline, 5, window=50)
    assert eve.alone and eve.partners == frozenset()


def test_the_exchange_looks_back_only_over_its_window() -> None:
    timeline = timeline_of(LINES)
    assert exchange_of(timeline, 6, window=1).partners == frozenset()
    assert exchange_of(timeline, 6, window=2).partners == {"ann"}


@pytest.mark.slow
def test_a_look_alike_line_from_another_conversation_is_not_recalled_with_the_exchange_on(
    make_runtime: Callable[..., Runtime],
) -> None:
    lines = [
        ("m000", "The upload job fails on large files.", "cy", ()),
        ("m001", "ann: did the deploy finish?", "bo", ("Ann",)),
        ("m002", "bo: yes, the deploy finished fine.", "ann", ("Bo",)),
        ("m003", "Lunch is at noon today.", "dee", ()),
        ("m004", "Has anyone seen the blue mug?", "eve", ()),
        ("m005", "The coffee machine is broken again.", "dee", ()),
        ("m006", "Who is joining the Friday walk?", "eve", ()),
        ("m007", "Parking passes are at reception.", "dee", ()),
        ("m008", "ann: and the upload job, does it fail on large files too?", "bo", ("Ann",)),
    ]
    messages = [
        utterance(message_id, text, speaker).model_copy(update={"addressees": to})
        for message_id, text, speaker, to in lines
    ]
    recalled = {}
    for name, window in (("off", 0), ("on", 50)):
        runtime = make_runtime(name, association={"rules": RecallRules(exchange_window=window)})
        runtime.engine.ingest(messages)
        context = runtime.engine.context(CHANNEL, "m008", EVERYTHING)
        recalled[name] = {  # recall's items: the scorer's own candidates (reason "reply") aside
            item.source.message_id for item in context.associations if item.reason != "reply"
        }
    assert "m000" in recalled["off"]  # Cy's line looks like it
    assert "m000" not in recalled["on"]  # but Cy is not in Bo's exchange
    assert "m002" in recalled["on"]  # Ann, whom Bo talks with, is kept
