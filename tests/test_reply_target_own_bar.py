"""The speaker's own line is named only when the model is surer of it than of another's.

Why these tests: a reviewer found "Continues what <speaker> said" over the line a message
really answered in team chats; the fitted model gives the own line a bar of its own
(``own_confident``, chosen on the dev logs). These read :func:`past_unsure_own_line` with given
probabilities, so what is checked is the rule, not the fitted numbers.
"""

from __future__ import annotations

import numpy as np

from awai_engine.reply_target.model import ReplyModel
from awai_engine.reply_target.scorer import past_unsure_own_line
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef, Thought

SPEAKERS = ("ben", "dev", "aiko", "ben")  # Ben's own line, two others', then Ben's message


def _timeline() -> Timeline:
    timeline = Timeline(dimension=2)
    for position, speaker in enumerate(SPEAKERS):
        ref = MessageRef(
            message_id=f"m{position}",
            speaker_id=speaker,
            speaker_name=speaker.title(),
            ts=60.0 * position,
            position=position,
        )
        vector = np.array([[1.0, 0.0]], dtype=np.float32)
        timeline.append(ref, "text", "text", (Thought(index=0, text="text"),), vector, ())
    return timeline


def _model(own: float) -> ReplyModel:
    return ReplyModel(layers=(), confident=0.3, far_confident=0.5, far_back=10, own_confident=own)


POSITIONS = np.array([2, 1, 0])  # Aiko's, Dev's, Ben's own (newest first)


def _first(probabilities: list[float], own: float) -> tuple[int, bool]:
    order, confident = past_unsure_own_line(
        _timeline(), 3, POSITIONS, np.array(probabilities), _model(own)
    )
    return int(POSITIONS[order[0]]), confident


def test_an_own_line_under_its_bar_gives_way_to_the_likeliest_other_line_clearing_its_own() -> None:
    assert _first([0.2, 0.4, 0.5], own=0.6) == (1, True)


def test_an_own_line_over_its_bar_is_named() -> None:
    assert _first([0.2, 0.4, 0.7], own=0.6) == (0, True)


def test_with_no_other_line_clearing_its_bar_nothing_is_named() -> None:
    assert _first([0.1, 0.2, 0.5], own=0.6) == (0, False)


def test_without_an_own_bar_the_order_is_the_models() -> None:
    assert _first([0.2, 0.4, 0.5], own=0.0) == (0, True)
    assert _first([0.2, 0.25, 0.28], own=0.0) == (0, False)
