"""Precision: the inferred conversation a line belongs to, and what is recalled outside it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from awai_engine.association.conversation import addressed_share, conversation_of
from awai_engine.association.recall import recall
from awai_engine.association.settings import (
    ActivationSettings,
    AssociationSettings,
    RecallRules,
)
from awai_engine.context import build_flow
from awai_engine.settings import FlowSettings
from awai_engine.timeline import Timeline
from awai_engine.values import Utterance
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.factories import one_thought_timeline, utterance

CHANNEL = "terminal:local:test"
Line = tuple[str, tuple[str, ...]]  # speaker name, the names it addresses


def timeline_of(lines: Sequence[Line], vectors: np.ndarray | None = None) -> Timeline:
    """A timeline of (speaker, addressees) lines, one vector per message (random unless given)."""
    if vectors is None:
        vectors = np.random.default_rng(11).normal(size=(len(lines), 16))
    said = [(speaker, f"line {position}", to) for position, (speaker, to) in enumerate(lines)]
    return one_thought_timeline(said, vectors)


ROOM = [
    ("Ann", ()),  # 0: the build is red
    ("Bo", ("Ann",)),  # 1: ann: which job?
    ("Cy", ()),  # 2: anyone tried the new kernel?
    ("Dee", ("Cy",)),  # 3: cy: works for me
    ("Ann", ("Bo",)),  # 4: bo: the upload job
    ("Eve", ()),  # 5: hello all
    ("Bo", ()),  # 6: retrying it now
]


def test_a_conversation_chains_the_replies_its_addressing_implies() -> None:
    timeline = timeline_of(ROOM)
    # Bo continues his own line (1) and answers Ann, who addressed him (4); Ann's first line (0)
    # is what Bo asked about. Cy and Dee talk about something else; Eve greets no one.
    assert conversation_of(timeline, 6, window=50) == {0, 1, 4, 6}
    assert conversation_of(timeline, 3, window=50) == {2, 3}
    assert conversation_of(timeline, 5, window=50) == {5}


def test_a_line_addressing_someone_answers_what_they_last_said_to_its_speaker() -> None:
    timeline = timeline_of(
        [
            ("Bo", ("Al",)),  # 0: al: try sudo lshw
            ("Bo", ("Cy",)),  # 1: cy: the driver is in restricted
            ("Cy", ()),  # 2: ok, installing it
            ("Al", ("Bo",)),  # 3: bo: thanks, that worked (answers 0, not only Bo's latest)
            ("Al", ()),  # 4: my wifi is back
            ("Al", ("Bo",)),  # 5: bo: and the sound too (continues 3, what Al last said to Bo)
        ]
    )
    assert conversation_of(timeline, 3, window=50) == {0, 1, 2, 3}
    assert conversation_of(timeline, 3, window=50, pairs=False) == {1, 2, 3}
    assert conversation_of(timeline, 5, window=50) == {0, 1, 2, 3, 4, 5}
    assert 3 not in conversation_of(timeline, 5, window=2, pairs=False)
    assert 3 in conversation_of(timeline, 5, window=2)


def test_the_addressed_share_counts_the_lines_before_the_message_that_address_someone() -> None:
    timeline = timeline_of(ROOM)
    assert addressed_share(timeline, 6, window=50) == 3 / 6  # lines 1, 3 and 4
    assert addressed_share(timeline, 6, window=2) == 1 / 2  # lines 4 and 5
    assert addressed_share(timeline, 0, window=50) == 0.0  # nothing before the first line


def test_the_window_bounds_how_far_back_a_conversation_reaches() -> None:
    timeline = timeline_of(ROOM)
    assert conversation_of(timeline, 6, window=2) == {4, 6}


lines_strategy = st.lists(
    st.tuples(
        st.sampled_from(["Ann", "Bo", "Cy", "Dee"]),
        st.lists(st.sampled_from(["Ann", "Bo", "Cy", "Dee"]), max_size=2).map(tuple),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(lines=lines_strategy, data=st.data())
def test_later_lines_never_change_the_conversation_of_an_earlier_message(
    lines: list[Line], data: st.DataObject
) -> None:
    position = data.draw(st.integers(0, len(lines) - 1), label="message")
    window = data.draw(st.integers(1, 40), label="window")
    whole, prefix = timeline_of(lines), timeline_of(lines[: position + 1])
    pairs = data.draw(st.booleans(), label="pairs")
    assert conversation_of(whole, position, window, pairs) == conversation_of(
        prefix, position, window, pairs
    )
    assert addressed_share(whole, position, window) == addressed_share(prefix, position, window)


@settings(max_examples=100, deadline=None)
@given(count=st.integers(1, 300), data=st.data())
def test_the_far_sample_is_every_kth_row_of_the_prefix_whatever_was_asked_before(
    count: int, data: st.DataObject
) -> None:
    timeline = timeline_of([("Ann", ())] * count)
    for _ in range(3):  # earlier requests (other steps, other ends) never change an answer
        step = data.draw(st.integers(1, 50), label="step")
        end = data.draw(st.integers(0, count), label="end row")
        assert np.array_equal(timeline.every_kth_row(step, end), timeline.vectors[0:end:step])


def said(message_id: str, text: str, speaker: str, to: Sequence[str] = ()) -> Utterance:
    return utterance(message_id, text, speaker).model_copy(update={"addressees": tuple(to)})


FILLER = ["The office plants need water.", "My train was late again.", "Parking is at reception."]


def test_an_addressing_cue_from_another_conversation_is_kept_only_when_on_topic(
    make_runtime: Callable[..., Runtime],
) -> None:
    messages = [
        said("m000", "Try booting with the nomodeset option.", "bo"),
        said("m001", "are you coming to lunch?", "dee", to=["Al"]),
        *[said(f"m{i:03d}", FILLER[i % 3], "cy") for i in range(2, 6)],
        said("m006", "thanks, the screen works now", "al", to=["Bo"]),
    ]
    cues = {
        "theta_0": 1.0,  # nothing by meaning: only the cues
        "slope": 0.0,
        "theta_max": 1.0,
        "addressed_recent": 1,
        "addressed_speaker_recent": 1,
        "own_recent": 0,
    }
    kept = make_runtime(
        "kept",
        association={
            **cues,
            "rules": RecallRules(
                conversation_window=50,
                cues_in_conversation=(),
                admission_bar=None,  # the conversation rule alone, without the learned gate
            ),
        },
    )
    judged = make_runtime(
        "judged",
        association={
            **cues,
            "rules": RecallRules(
                conversation_window=50,
                cues_in_conversation=("addressed-speaker",),
                admission_bar=None,
            ),
        },
    )
    for runtime in (kept, judged):
        runtime.engine.ingest(messages)

    def reasons(runtime: Runtime) -> dict[str, str]:
        context = runtime.engine.context(CHANNEL, "m006", EVERYTHING)
        return {  # recall's items: the scorer's own candidates (reason "reply") aside
            item.source.message_id: item.reason
            for item in context.associations
            if item.reason != "reply"
        }

    # Dee asked Al about lunch; Al's message answers Bo: Dee's line is another conversation.
    assert reasons(kept) == {"m000": "addressed", "m001": "addressed-speaker"}
    assert reasons(judged) == {"m000": "addressed"}


def test_meaning_from_outside_the_conversation_must_stand_out_from_the_recent_past() -> None:
    rng = np.random.default_rng(7)
    said = rng.normal(size=16)
    lines: list[Line] = [
        ("Dee", ("Bo",)),  # 0: Dee asks Bo something that reads like Al's message
        ("Bo", ("Al",)),  # 1: Bo answers Al: the conversation Al's message continues
        *[("Cy", ())] * 14,  # 2–15: the room (a bar of 3σ needs 11 lines to mean anything)
        ("Al", ("Bo",)),  # 16: Al answers Bo
    ]
    vectors = rng.normal(size=(len(lines), 16))
    vectors[0], vectors[16] = said + 0.8 * rng.normal(size=16), said  # alike, not the same
    timeline = timeline_of(lines, vectors.astype(np.float32))
    assert conversation_of(timeline, 16, window=100) == {1, 16}

    def by_meaning(conversation_z: float | None) -> set[int]:
        association = AssociationSettings(
            addressed_recent=0,
            addressed_speaker_recent=0,
            own_recent=0,
            far_items=0,
            rules=RecallRules(
                lexical=False,
                conversation_window=100,
                conversation_z=conversation_z,
                admission_bar=None,  # the conversation bar alone, without the learned gate
            ),
        )
        flow = build_flow(timeline, 16, FlowSettings())
        items = recall(timeline, 16, flow, association, ActivationSettings())
        return {item.source.position for item in items if item.reason == "meaning"}

    # Dee's line is in Al's exchange (said to Bo, whom Al addresses) and close in meaning…
    assert 0 in by_meaning(conversation_z=None)
    # …but in another conversation, and not far above what the room just said: left out.
    assert 0 not in by_meaning(conversation_z=3.0)
