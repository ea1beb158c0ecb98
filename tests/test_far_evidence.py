"""The far past by evidence: who a message names, and how the timeline knows who spoke."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from awai_engine.timeline import Timeline
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.factories import far_question, one_thought_timeline, utterance

CHANNEL = "terminal:local:test"


def timeline_of(lines: list[tuple[str, str]]) -> Timeline:
    """A timeline of (speaker name, text) lines, with one random unit vector per message."""
    vectors = np.random.default_rng(3).normal(size=(len(lines), 4))
    return one_thought_timeline([(speaker, text, ()) for speaker, text in lines], vectors)


def test_a_speaker_is_named_only_once_they_have_spoken_and_never_by_themselves() -> None:
    timeline = timeline_of(
        [
            ("Ann", "What did Caroline say about the trip?"),  # Caroline has not spoken yet
            ("Caroline", "I went to the support group yesterday."),
            ("Ann", "When did caroline go to the support group?"),
            ("Caroline", "Caroline here: yes, yesterday."),  # her own name
            ("Bo", "Ann, Caroline: lunch?"),
        ]
    )
    assert timeline.named_speakers(0) == frozenset()
    assert timeline.named_speakers(2) == {"caroline"}
    assert timeline.named_speakers(3) == frozenset()
    assert timeline.named_speakers(4) == {"ann", "caroline"}
    assert list(timeline.speaker_codes) == [0, 1, 0, 1, 2]


def test_a_far_message_by_the_person_a_question_names_is_recalled_with_the_bar_it_cleared(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(association={"far_items": 2, "far_distance": 20})
    first = utterance("m000", "I went to the LGBTQ support group yesterday.", "caroline")
    runtime.engine.ingest(far_question(first, "When did Caroline go to the support group?"))
    recalled = {
        a.source.message_id: a
        for a in runtime.engine.context(CHANNEL, "m060", EVERYTHING).associations
    }
    item = recalled["m000"]
    assert item.reach == "far"
    assert item.similarity >= item.threshold
    assert {"support", "group"} <= set(item.shared_words)
