"""Small builders for test data."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from awai_engine.schemas.model import SchemaState
from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef, Thought, Utterance


def utterance(
    message_id: str,
    text: str,
    speaker: str = "ann",
    ts: float | None = None,
    thread: str | None = None,
    channel: str = "terminal:local:test",
) -> Utterance:
    """A test utterance; ``ts`` defaults to a time read from the id so order follows the ids:
    a Slack ``ts`` ("1700000001.000100") is its own time, a Discord snowflake carries its time
    in its high bits, and any other id counts as seconds (engines refuse times past 2100)."""
    if ts is None:
        ts = _time_of(message_id)
    return Utterance(
        channel=channel,
        message_id=message_id,
        speaker_id=speaker,
        speaker_name=speaker.title(),
        text=text,
        ts=ts,
        thread_root=thread,
    )


SMALL_TALK = (
    "Lunch is at noon today.",
    "Has anyone seen the blue mug?",
    "The coffee machine is broken again.",
    "Who is joining the Friday walk?",
)


def far_question(first: Utterance, question: str, between: int = 59) -> list[Utterance]:
    """``first`` (id m000), ``between`` lines of unrelated small talk by "cy", then ``question``
    by "al": a channel where only far recall can connect the question to ``first``."""
    said = [first]
    said += [utterance(f"m{i:03d}", SMALL_TALK[i % 4], "cy", ts=i) for i in range(1, between + 1)]
    said.append(utterance(f"m{between + 1:03d}", question, "al", ts=between + 1))
    return said


DISCORD_EPOCH_MS = 1_420_070_400_000
LATEST_SECONDS = 4_102_444_800  # 2100-01-01


def _time_of(message_id: str) -> float:
    try:
        seconds = float(message_id)
    except ValueError:
        seconds = float("".join(char for char in message_id if char.isdigit()) or 0)
    if seconds < LATEST_SECONDS:
        return seconds
    return ((int(seconds) >> 22) + DISCORD_EPOCH_MS) / 1000  # a snowflake


def one_thought_timeline(
    lines: Sequence[tuple[str, str, tuple[str, ...]]], vectors: np.ndarray
) -> Timeline:
    """A timeline of (speaker name, text, addressees) lines, each one message of one thought
    whose vector is that row of ``vectors`` made unit length (ids m0, m1, …; ts = position)."""
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    timeline = Timeline(dimension=vectors.shape[1])
    for position, (speaker, text, to) in enumerate(lines):
        ref = MessageRef(
            message_id=f"m{position}",
            speaker_id=speaker.casefold(),
            speaker_name=speaker,
            ts=float(position),
            position=position,
        )
        thought = Thought(index=0, text=text)
        timeline.append(ref, text, text, (thought,), vectors[position : position + 1], to)
    return timeline


def message_ref(message_id: str, speaker: str, position: int) -> MessageRef:
    """A reference to a message said a minute after the one before it (for layout tests)."""
    return MessageRef(
        message_id=message_id,
        speaker_id=speaker.lower(),
        speaker_name=speaker,
        ts=1_770_000_000 + 60 * position,
        position=position,
    )


def schema_state(
    schema_id: str, members: list[str], version: int = 1, summary: str | None = "s"
) -> SchemaState:
    """A version of Ann's schema ``schema_id`` holding ``members`` (thought keys)."""
    return SchemaState(
        schema_id=schema_id,
        version=version,
        speaker_id="ann",
        speaker_name="Ann",
        members=tuple(members),
        member_positions=tuple(range(len(members))),
        centroid=np.full(3, version, dtype=np.float32),
        summary=summary,
        as_of_message_id=members[-1].split("#")[0],
        as_of=len(members) - 1,
    )
