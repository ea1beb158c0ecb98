"""The regime columns say how the channel talks right now and how the speaker's own line stands.

Why these tests: the columns exist so the model can tell a team channel (one conversation, the
line just before by another person is what a message answers) from busy IRC (a speaker's next
line goes on with their own). Each test builds a small channel where the right value is plain
and reads it off the columns the model is given.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from awai_engine.reply_target.regime import MODEL_FEATURES, REGIME_NAMES, model_features
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef, Thought

Line = tuple[str, str, tuple[str, ...]]


def _timeline(lines: Sequence[Line], stamps: Sequence[float]) -> Timeline:
    """One message per line, one thought each, fixed pseudo-random unit vectors."""
    vectors = np.random.default_rng(3).normal(size=(len(lines), 8))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    timeline = Timeline(dimension=8)
    for position, ((speaker, text, to), ts) in enumerate(zip(lines, stamps, strict=True)):
        ref = MessageRef(
            message_id=f"m{position}",
            speaker_id=speaker.casefold(),
            speaker_name=speaker,
            ts=ts,
            position=position,
        )
        thought = (Thought(index=0, text=text),)
        timeline.append(ref, text, text, thought, vectors[position : position + 1], to)
    return timeline


def _column(timeline: Timeline, position: int, back: int, name: str) -> float:
    """The column ``name`` of the candidate ``back`` lines before the message at ``position``."""
    found = model_features(timeline, position)
    row = found.positions.index(position - back)
    return float(found.features[row, MODEL_FEATURES.index(name)])


TEAM: list[Line] = [
    ("Ben", "I'm at a customer visit until three.", ()),
    ("Dev", "Heads up: login is broken on iOS 17.4 since this morning.", ()),
    ("Ben", "How many users?", ()),
]


def test_the_model_reads_the_base_features_then_the_regime_columns() -> None:
    timeline = _timeline(TEAM, [0.0, 60.0, 90.0])
    found = model_features(timeline, 2)
    assert found.features.shape == (2, len(MODEL_FEATURES))
    assert MODEL_FEATURES[-len(REGIME_NAMES) :] == REGIME_NAMES


def test_a_few_speakers_and_many_are_told_apart_on_the_own_line_only() -> None:
    few = _timeline(TEAM, [0.0, 60.0, 90.0])
    crowd = [(f"User{k}", "something unrelated here", ()) for k in range(8)]
    many = _timeline([TEAM[0], *crowd, *TEAM[1:]], [float(t) for t in range(11)])
    quiet = _column(few, 2, 2, "recent_speakers")
    busy = _column(many, 10, 10, "recent_speakers")
    assert 0 < quiet < busy
    assert _column(few, 2, 2, "own_x_recent_speakers") == pytest.approx(quiet)
    assert _column(few, 2, 1, "own_x_recent_speakers") == 0.0  # Dev's line is not Ben's own
    assert _column(few, 2, 1, "previous_x_recent_speakers") == pytest.approx(quiet)


@pytest.mark.parametrize(
    ("text", "complete", "continuation"),
    [
        ("How many users?", 1.0, 0.0),
        ("@Dev what build are they on?", 1.0, 0.0),  # a question word after the address
        ("@Dev yeah mostly the beta", 0.0, 0.0),
        ("what build are they on?", 1.0, 0.0),
        ("and also the Android one", 0.0, 1.0),
        ("but only on the beta", 0.0, 1.0),
        ("yeah mostly the beta", 0.0, 0.0),
        ("1.9 beta 2です", 1.0, 0.0),
        ("あと、Androidも確認します", 0.0, 1.0),
    ],
)
def test_a_new_complete_turn_and_a_continuation_are_told_apart(
    text: str, complete: float, continuation: float
) -> None:
    timeline = _timeline([*TEAM[:2], ("Ben", text, ())], [0.0, 60.0, 90.0])
    assert _column(timeline, 2, 2, "own_x_opens_complete") == complete
    assert _column(timeline, 2, 2, "own_x_opens_continuation") == continuation
    assert _column(timeline, 2, 1, "own_x_opens_complete") == 0.0


def test_another_persons_question_just_before_is_marked_unless_put_to_someone_else() -> None:
    asked = [
        ("Aiko", "The crash is back for two testers.", ()),
        ("Dev", "Which build are they on?", ()),
        ("Aiko", "1.9 beta 2.", ()),
    ]
    timeline = _timeline(asked, [0.0, 30.0, 60.0])
    assert _column(timeline, 2, 2, "own_x_previous_other_open") == 1.0
    assert _column(timeline, 2, 2, "own_x_previous_other_asks") == 1.0
    to_carla = [asked[0], ("Dev", "Carla: which build are they on?", ("Carla",)), asked[2]]
    timeline = _timeline(to_carla, [0.0, 30.0, 60.0])
    assert _column(timeline, 2, 2, "own_x_previous_other_open") == 0.0
    assert _column(timeline, 2, 2, "own_x_previous_other_asks") == 0.0


def test_time_is_read_relative_to_the_channels_pace() -> None:
    """IRC's minutes and a team's seconds: the same shape at a hundredth of the pace reads alike
    (a pace under a second counts as one second, so the stamps here are minutes apart)."""
    lines = [*TEAM, ("Dev", "About 3% of sessions.", ()), ("Ben", "OK, rolling back.", ())]
    stamps = [0.0, 120.0, 180.0, 600.0, 660.0]
    slow = _timeline(lines, [100.0 * t for t in stamps])
    fast = _timeline(lines, stamps)
    names = ("log_gap_over_pace", "own_x_gap_over_previous")
    for back in (1, 2, 3, 4):
        for name in names:
            assert _column(slow, 4, back, name) == pytest.approx(_column(fast, 4, back, name))
    # The own line two back was said longer before than the line just before it.
    assert _column(fast, 4, 2, "own_x_gap_over_previous") > 0


def test_a_line_said_since_the_speakers_own_and_not_yet_taken_up_is_open() -> None:
    """Dev's report after Ben's own line is open to Ben's question; Carla's line put to Aiko,
    a line Ben already spoke after, or one whose speaker was answered by name, is not."""
    lines = [
        ("Carla", "Aiko: can you check the figma link?", ("Aiko",)),
        ("Ben", "I'm at a customer visit until three.", ()),
        ("Aiko", "Carla: done, fixed the link.", ("Carla",)),
        ("Dev", "Heads up: login is broken on iOS 17.4 since this morning.", ()),
        ("Ben", "How many users?", ()),
    ]
    timeline = _timeline(lines, [0.0, 30.0, 60.0, 90.0, 120.0])
    assert _column(timeline, 4, 1, "open_since_own") == 1.0  # Dev's report
    assert _column(timeline, 4, 1, "open_x_message_asks") == 1.0
    assert _column(timeline, 4, 2, "open_since_own") == 0.0  # put to Carla
    assert _column(timeline, 4, 4, "open_since_own") == 0.0  # before Ben's own line
    assert _column(timeline, 4, 3, "own_x_message_asks") == 1.0  # Ben's own line, Ben asks
    assert _column(timeline, 4, 3, "own_x_open_since") > 0.0
    assert _column(timeline, 4, 1, "own_x_open_since") == 0.0  # not Ben's own
    answered = [
        *lines[:3],
        ("Dev", "Heads up: login is broken.", ()),
        ("Aiko", "Dev: ouch", ("Dev",)),
    ]
    timeline = _timeline([*answered, ("Ben", "How many users?", ())], [float(t) for t in range(6)])
    assert _column(timeline, 5, 2, "open_since_own") == 0.0  # Aiko answered Dev by name
    assert _column(timeline, 5, 4, "own_x_open_since") == 0.0
