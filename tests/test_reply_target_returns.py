"""A message opening with "back to …" names the line its words go back to.

Why these tests: a reviewer's ops chat read "Back to the replica disk — …" as continuing the
speaker's own line just before, though the message says it leaves that line for an earlier
topic. The rule is read off the candidates' own features, so each test builds a small channel
with vectors that make meaning plain (one direction per topic).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from awai_engine.reply_target.regime import model_features
from awai_engine.reply_target.returns import returned_first
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef, Thought

TOPICS = {"disk": 0, "deploy": 1, "lunch": 2}


def _timeline(lines: Sequence[tuple[str, str, str]]) -> Timeline:
    """One message per (speaker, topic, text) line: its vector is its topic's direction."""
    timeline = Timeline(dimension=4)
    for position, (speaker, topic, text) in enumerate(lines):
        vector = np.zeros((1, 4), dtype=np.float32)
        vector[0, TOPICS[topic]] = 1.0
        ref = MessageRef(
            message_id=f"m{position}",
            speaker_id=speaker.casefold(),
            speaker_name=speaker,
            ts=60.0 * position,
            position=position,
        )
        timeline.append(ref, text, text, (Thought(index=0, text=text),), vector, ())
    return timeline


def _first(timeline: Timeline, position: int) -> int:
    """The position put first, when the model's own order is newest first."""
    found = model_features(timeline, position)
    positions = np.asarray(found.positions)
    order = returned_first(timeline, position, positions, found.features, np.arange(len(positions)))
    return int(positions[order[0]])


OPS = [
    ("Ana", "disk", "The replica disk is at 91% and climbing."),
    ("Raj", "deploy", "Deploy 4.2 is rolling out to the canaries now."),
    ("Ana", "deploy", "Canaries look healthy so far."),
]


def test_back_to_a_topic_names_its_earlier_line_not_the_speakers_own_just_before() -> None:
    timeline = _timeline([*OPS, ("Ana", "disk", "Back to the replica disk: is it still climbing?")])
    assert _first(timeline, 3) == 0
    japanese = _timeline(
        [*OPS, ("Ana", "disk", "話を戻すと、レプリカのディスクはまだ増えていますか？")]
    )
    assert _first(japanese, 3) == 0


def test_without_a_return_cue_or_when_the_words_fit_what_it_follows_the_order_stands() -> None:
    plain = _timeline([*OPS, ("Ana", "disk", "The replica disk is still climbing.")])
    assert _first(plain, 3) == 2
    # The line just before is itself about what the message goes back to: nothing is skipped.
    near = _timeline(
        [
            *OPS,
            ("Raj", "disk", "The disk alert fired again."),
            ("Ana", "disk", "Back to the disk then: who takes it?"),
        ]
    )
    assert _first(near, 4) == 3
