"""Stage 1: the earlier lines the message's addressing points to, before any meaning.

Why first: in a busy room, who a message is said to is the strongest sign of what it answers
(fitted on human reply-to links: docs/evaluation.md). A cue in ``rules.cues_in_conversation``
is kept only when its line is in the message's inferred conversation or on topic, one in
``rules.cues_on_topic`` only when on topic.
"""

from __future__ import annotations

from awai_engine.association.bars import threshold
from awai_engine.association.picks import Pick, best_thought
from awai_engine.association.query import Query, Situation
from awai_engine.association.settings import AssociationSettings
from awai_engine.timeline import Timeline
from awai_engine.values import RecallReason


def by_addressing(query: Query, situation: Situation, flow: set[int]) -> list[Pick]:
    """The best thought of each line :func:`cue_sources` lists outside the ``flow`` (positions)
    that its rules keep, most telling first, at most ``max_items``."""
    settings, rules = query.settings, query.settings.rules
    conversation = situation.conversation
    picks: list[Pick] = []
    sources = cue_sources(query.timeline, query.position, settings, situation.edge_named)
    for source, reason in sources:
        if source in flow:
            continue
        pick = best_thought(query.timeline, source, query.cues, reason)
        off_conversation = (
            reason in rules.cues_in_conversation
            and conversation is not None
            and source not in conversation
        )
        if reason in rules.cues_on_topic or off_conversation:
            distance = query.position - source - 1
            bar = max(float(threshold(distance, settings)), query.relative[pick.cue])
            if pick.similarity < bar:
                continue
        picks.append(pick)
        if len(picks) == settings.max_items:
            break
    return picks


def cue_sources(
    timeline: Timeline,
    position: int,
    settings: AssociationSettings,
    also_addressed: frozenset[str] = frozenset(),
) -> list[tuple[int, RecallReason]]:
    """Positions of earlier messages the message's addressing points to, most telling first.

    - ``addressed``: the latest ``addressed_recent`` messages of each person the message addresses
      (``@name`` in Slack and Discord, ``nick:`` at the start of an IRC-style line, and the names
      in ``also_addressed``: those written as its first or last words);
    - ``addressed-speaker``: the latest ``addressed_speaker_recent`` messages that addressed the
      speaker, which the message most likely answers;
    - ``own``: the speaker's own latest ``own_recent`` messages, which it most likely continues.

    Only the ``cue_window`` utterances right before the message are looked at (the same exchange),
    and "latest" counts every message, so when someone's latest message is already in the flow,
    the cue adds nothing older. A message is listed once, under its first reason.
    """
    message = timeline.messages[position]
    speaker_id, speaker = message.ref.speaker_id, message.ref.speaker_name.casefold()
    addressed = {name.casefold() for name in (*message.addressees, *also_addressed)} - {speaker}
    addressed_found: dict[str, list[int]] = {name: [] for name in addressed}
    addressing: list[int] = []
    own: list[int] = []
    stop = max(position - 1 - settings.cue_window, -1)
    names, ids = timeline.speaker_names, timeline.speaker_ids  # columns: nothing is built
    first = stop + 1
    said_to = timeline.addressed_between(first, position)
    for earlier_position in range(position - 1, stop, -1):
        name = names[earlier_position].casefold()
        if name in addressed_found and len(addressed_found[name]) < settings.addressed_recent:
            addressed_found[name].append(earlier_position)
        if ids[earlier_position] == speaker_id:
            if len(own) < settings.own_recent:
                own.append(earlier_position)
        elif (
            len(addressing) < settings.addressed_speaker_recent
            and speaker in said_to[earlier_position - first]
        ):
            addressing.append(earlier_position)
    by_addressee = sorted((p for found in addressed_found.values() for p in found), reverse=True)
    sources: dict[int, RecallReason] = {}
    cued: tuple[tuple[list[int], RecallReason], ...] = (
        (by_addressee, "addressed"),
        (addressing, "addressed-speaker"),
        (own, "own"),
    )
    for positions, reason in cued:
        for source in positions:
            sources.setdefault(source, reason)
    return list(sources.items())
