"""The flow of a message's reading context (spec §1–2): the line's previous utterance as thoughts,
and the summaries before it.

It looks only at positions before ``p``: the context is a pure function of the prefix, which is
the product's invariant. What the message recalls outside its flow is
:mod:`awai_engine.association`.
"""

from __future__ import annotations

from awai_engine.settings import FlowSettings
from awai_engine.timeline import Timeline
from awai_engine.values import Flow, FlowSummary, FlowUtterance


def build_flow(timeline: Timeline, position: int, settings: FlowSettings) -> Flow:
    """The previous utterance of the line as thoughts, and up to C−1 summaries before it."""
    line, earlier = timeline.line_before(position, settings.capacity)
    if not earlier:
        return Flow(line=line)
    previous = timeline.messages[earlier[-1]]
    summaries = [timeline.messages[p] for p in earlier[-settings.capacity : -1]]
    return Flow(
        line=line,
        previous=FlowUtterance(message=previous.ref, thoughts=previous.thoughts),
        earlier=tuple(FlowSummary(message=m.ref, summary=m.summary) for m in summaries),
    )
