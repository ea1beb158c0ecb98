"""Which message ``@AWAI read`` means when it names none: the one just before it in its line.

A line is a thread (its root and replies) or the channel's top level, as in the engine's flow.
"""

from __future__ import annotations

import numpy as np

from awai_engine.timeline import Timeline
from awai_engine.values import MessageRef


def previous_in_line(
    timeline: Timeline, before_ts: float, thread_ts: str | None
) -> MessageRef | None:
    """The last stored message of the line said before ``before_ts`` (a thread's root counts)."""
    earlier = int(np.searchsorted(timeline.timestamps, before_ts, side="left"))
    if thread_ts is None:
        line = timeline.top_level
    else:
        root = timeline.position_of.get(thread_ts)
        line = ([root] if root is not None else []) + timeline.threads.get(thread_ts, [])
    candidates = [position for position in line if position < earlier]
    return timeline.messages[max(candidates)].ref if candidates else None
