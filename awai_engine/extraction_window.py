"""Which earlier utterances a message's thoughts are extracted with: its line, just before it.

Why: a thought such as "that fixes it" needs the utterance before it to say what "that" is, but a
model shown *later* messages would use them too, and the stored thoughts of message ``i`` would
then depend on what was said after ``i``. So each message is extracted in a request of its own
that holds it and at most ``size`` earlier utterances of its line (its thread, root included, or
the channel's top level), oldest first. The window is worked out from channel order alone, the
same way whether the message arrives live (the earlier ones are stored) or in a backfill (some
earlier ones are in the same chunk), so both give the same request.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from awai_engine.ports import ExtractionTarget
from awai_engine.timeline import Timeline, TimelineMessage
from awai_engine.values import Utterance

# Channel order of one utterance: (ts, 0 if stored else 1, position or order among the new ones).
# Stored messages sort by their position; a new one comes after every stored message with a ts no
# later than its own, and new ones with equal ts keep their order (as storage orders them).
OrderKey = tuple[float, int, int]


def extraction_targets(
    timeline: Timeline, utterances: Sequence[Utterance], size: int
) -> list[ExtractionTarget]:
    """Each utterance (in the given order) with at most ``size`` utterances of its line before it.

    ``timeline`` is the channel as stored; ``utterances`` are new or edited messages of that
    channel about to be stored. A stored message keeps its place (an edit keeps its position).
    """
    new = sorted(
        (u for u in utterances if u.message_id not in timeline.position_of), key=lambda u: u.ts
    )
    keys = {u.message_id: (u.ts, 1, n) for n, u in enumerate(new)}
    by_line: dict[str | None, list[tuple[OrderKey, Utterance]]] = {}
    for u in new:  # already in channel order
        by_line.setdefault(_line(u), []).append((keys[u.message_id], u))
    targets = []
    for utterance in utterances:
        if size <= 0:
            targets.append(ExtractionTarget(utterance=utterance))
            continue
        position = timeline.position_of.get(utterance.message_id)
        key = keys.get(utterance.message_id) or _stored_key(timeline, position or 0)
        line = _line(utterance)
        candidates = _stored_before(timeline, utterance, position, size)
        pending = by_line.get(line, [])
        end = bisect.bisect_left(pending, key, key=lambda item: item[0])
        candidates.extend(pending[max(0, end - size) : end])
        if line is not None and line in keys and keys[line] < key:  # a root in the same chunk
            candidates.extend(item for item in by_line.get(None, []) if item[1].message_id == line)
        candidates.sort(key=lambda item: item[0])
        window = tuple(item for _, item in candidates[-size:])
        targets.append(ExtractionTarget(utterance=utterance, before=window))
    return targets


def _line(utterance: Utterance) -> str | None:
    """The thread root of a reply; ``None`` for a top-level message (a thread's root included)."""
    if utterance.thread_root is not None and utterance.thread_root != utterance.message_id:
        return utterance.thread_root
    return None


def _stored_key(timeline: Timeline, position: int) -> OrderKey:
    return (timeline.messages[position].ref.ts, 0, position)


def _stored_before(
    timeline: Timeline, utterance: Utterance, position: int | None, size: int
) -> list[tuple[OrderKey, Utterance]]:
    """The last ``size`` stored messages of the utterance's line before its place."""
    if position is None:  # new: after every stored message with a ts no later than its own
        position = bisect.bisect_right(timeline.timestamps, utterance.ts)
    root = _line(utterance)
    if root is None:
        line = timeline.top_level
    else:
        line = list(timeline.threads.get(root, []))
        root_position = timeline.position_of.get(root)
        if root_position is not None:
            line = sorted([root_position, *line])
    end = bisect.bisect_left(line, position)
    return [
        (_stored_key(timeline, p), _as_utterance(utterance.channel, timeline.messages[p]))
        for p in line[max(0, end - size) : end]
    ]


def _as_utterance(channel: str, message: TimelineMessage) -> Utterance:
    ref = message.ref
    return Utterance(
        channel=channel,
        message_id=ref.message_id,
        speaker_id=ref.speaker_id,
        speaker_name=ref.speaker_name,
        text=message.text,
        ts=ref.ts,
        thread_root=ref.thread_root,
        addressees=message.addressees,
    )
