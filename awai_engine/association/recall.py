"""Recall: the earlier thoughts a message points to, outside its flow, stage by stage.

Addressing first (:mod:`~awai_engine.association.addressing`), then the far past's own slots
(:mod:`~awai_engine.association.far`), then the rest by meaning
(:mod:`~awai_engine.association.meaning`); each item then gets its activation, and the learned
gate (:mod:`~awai_engine.association.admission`) admits those likely in the message's
conversation. At most one item per source message, at most ``max_items`` in all; every item
carries its similarity, the bar it cleared and its activation whatever recalled it, and
``reason`` and ``reach`` say what did.
"""

from __future__ import annotations

import numpy as np

from awai_engine import mapped_rows
from awai_engine.association.addressing import by_addressing
from awai_engine.association.admission import admitted
from awai_engine.association.bars import near_bar
from awai_engine.association.conversation import conversation_of
from awai_engine.association.far import by_evidence
from awai_engine.association.meaning import by_meaning
from awai_engine.association.picks import as_associations
from awai_engine.association.query import Query, Situation
from awai_engine.association.reaching import asks_the_room, named_at_the_edge, names_the_absent
from awai_engine.association.settings import ActivationSettings, AssociationSettings
from awai_engine.exchange import exchange_of
from awai_engine.timeline import Timeline
from awai_engine.values import Association, Flow


def recall(
    timeline: Timeline,
    position: int,
    flow: Flow,
    association: AssociationSettings,
    activation: ActivationSettings,
) -> tuple[Association, ...]:
    """Earlier thoughts the message points to by addressing, by meaning near and far, and by
    the rare words it shares with the far past, outside the flow.

    Why this order: in a busy room, who a message is said to is the strongest sign of what it
    answers; then the far past gets its own slots, so that a topic raised weeks ago can win one
    when it is truly the same thing instead of competing with the nearer lines under an absolute
    θ_max; the remaining slots go by meaning, ranked by margin s − θ(d).
    """
    message = timeline.messages[position]
    if association.max_items == 0 or message.first_row == 0:
        return ()
    query_rows = np.asarray(timeline.rows_of(position))
    rows, similarity = timeline.search(query_rows, message.first_row)
    query = Query(
        timeline=timeline,
        position=position,
        cues=timeline.vectors[query_rows],
        rows=rows,
        similarity=similarity,
        relative=near_bar(timeline, rows, similarity, message.first_row, association.rules.near_z),
        settings=association,
    )
    situation = situation_of(timeline, position, association)
    flow_positions = {timeline.position_of[message_id] for message_id in flow.message_ids()}
    picks = by_addressing(query, situation, flow_positions)
    room = association.max_items - len(picks)
    if room:
        taken = flow_positions | {pick.source for pick in picks}
        far = by_evidence(query, situation, taken, room)
        taken |= {pick.source for pick in far}
        near = by_meaning(query, situation, taken, room - len(far))
        picks.extend([*near, *far])
    items = as_associations(timeline, position, picks, association, activation)
    # The cells' rows, far recall's and the picks' are spread over the channel: what they
    # mapped of a loaded file's vectors is let go, or a held channel's whole file would count
    # in the process's memory after a few readings (mapped_rows.let_go).
    mapped_rows.let_go(timeline.vectors)
    rules = association.rules
    if rules.admission_bar is None or (situation.alone and not rules.admission_alone):
        return items
    return admitted(
        timeline, position, situation, items, rules.admission_bar, rules.admission_spares
    )


def situation_of(timeline: Timeline, position: int, association: AssociationSettings) -> Situation:
    """The speaker's exchange, the message's conversation, and whether it reaches for the past."""
    rules = association.rules
    exchange = (
        exchange_of(timeline, position, rules.exchange_window) if rules.exchange_window else None
    )
    # Names written as the message's first or last words address those people too.
    edge_named = (
        named_at_the_edge(timeline, position, rules.edge_name_set_off)
        if rules.edge_names_address
        else frozenset()
    )
    conversation = (
        conversation_of(
            timeline, position, rules.conversation_window, rules.conversation_pairs, edge_named
        )
        if rules.conversation_window
        else None
    )
    alone = exchange is None or exchange.alone
    names_absent = names_the_absent(timeline, position, edge_named)
    asks_past = names_absent or (
        rules.questions_reach_back and alone and asks_the_room(timeline, position)
    )
    return Situation(exchange, conversation, edge_named, names_absent, asks_past)
