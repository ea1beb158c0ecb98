"""Small builders for test data."""

from __future__ import annotations

from awai_engine.values import Utterance


def utterance(
    message_id: str,
    text: str,
    speaker: str = "ann",
    ts: float | None = None,
    thread: str | None = None,
    channel: str = "terminal:local:test",
) -> Utterance:
    """A test utterance; ``ts`` defaults to the number in the id so order follows the ids."""
    if ts is None:
        digits = "".join(char for char in message_id if char.isdigit())
        ts = float(digits or 0)
    return Utterance(
        channel=channel,
        message_id=message_id,
        speaker_id=speaker,
        speaker_name=speaker.title(),
        text=text,
        ts=ts,
        thread_root=thread,
    )
