"""Stage 3: the remaining slots by meaning, near and far, each against θ(d) and its bars.

A thought is a candidate when its best similarity to a cue thought reaches θ(d), the bar that
rises with distance, and the near bar (how far above what the message shares with the lines just
before it); ranked by margin, one per source message. A thought from outside the speaker's
exchange or the message's inferred conversation must clear a higher bar: in a busy room two lines
that look alike often belong to different conversations (docs/evaluation.md, "Precision").
"""

from __future__ import annotations

import numpy as np

from awai_engine.association.bars import near_bar, threshold
from awai_engine.association.conversation import addressed_share
from awai_engine.association.picks import Pick
from awai_engine.association.query import Query, Situation
from awai_engine.exchange import Exchange


def by_meaning(query: Query, situation: Situation, taken: set[int], room: int) -> list[Pick]:
    """Up to ``room`` thoughts with margin s − max(θ(d), near bar) ≥ 0, best first, one per
    source not taken; one from outside the speaker's exchange or the message's conversation must
    also clear that one's bar (:func:`_strangers`, :func:`_outsiders`)."""
    if room <= 0 or not len(query.rows):
        return []
    timeline, rows, similarity = query.timeline, query.rows, query.similarity
    strangers = _strangers(query, situation)
    outsiders = _outsiders(query, situation)
    row_positions = timeline.row_positions[rows]
    distance = query.position - row_positions - 1
    theta = threshold(distance, query.settings)
    bars = np.maximum(theta[:, None], query.relative[None, :])
    margins = similarity - bars.astype(np.float32)
    best_cue = margins.argmax(axis=1)
    best_margin = margins[np.arange(len(rows)), best_cue]
    outside = ~np.isin(row_positions, np.fromiter(taken, dtype=np.int64, count=len(taken)))
    eligible = np.flatnonzero((best_margin >= 0) & outside)
    # Highest margin first; ties go to the more recent row so the order is total and stable.
    order = eligible[np.lexsort((-eligible, -best_margin[eligible]))]
    picks: list[Pick] = []
    seen: set[int] = set()
    for candidate in order:
        source = int(row_positions[candidate])
        if source in seen:
            continue
        seen.add(source)
        cue = int(best_cue[candidate])
        bar = float(bars[candidate, cue])
        if strangers is not None and not strangers[0].includes(timeline, source):
            stranger_bars = np.maximum(bars[candidate], strangers[1])
            cue = int((similarity[candidate] - stranger_bars).argmax())
            bar = float(stranger_bars[cue])
            if similarity[candidate, cue] < bar:
                continue
        if outsiders is not None and source not in outsiders[0]:
            outside_bars = np.maximum(bars[candidate], outsiders[1])
            cue = int((similarity[candidate] - outside_bars).argmax())
            bar = float(outside_bars[cue])
            if similarity[candidate, cue] < bar:
                continue
        picks.append(
            Pick(
                row=int(rows[candidate]),
                source=source,
                cue=cue,
                similarity=float(similarity[candidate, cue]),
                reason="meaning",
                bar=None if bar == theta[candidate] else bar,  # None: θ(d) was the bar
            )
        )
        if len(picks) == room:
            break
    return picks


def _strangers(query: Query, situation: Situation) -> tuple[Exchange, np.ndarray] | None:
    """The speaker's exchange and the bar per cue thought a line from outside it must clear
    (``rules.stranger_z``; infinite without one: never by meaning), or None: no such bar."""
    exchange, rules = situation.exchange, query.settings.rules
    if exchange is None or (exchange.alone and not rules.strangers_when_alone):
        return None
    if rules.stranger_z is None:
        return exchange, np.full(query.similarity.shape[1], np.inf)
    return exchange, _bar(query, rules.stranger_z)


def _outsiders(query: Query, situation: Situation) -> tuple[frozenset[int], np.ndarray] | None:
    """The message's inferred conversation and the bar per cue thought a line from outside it
    must clear: ``conversation_z`` when the speaker is in an exchange; when not, unless the
    message reaches for the past (``conversation_when_alone``), ``conversation_z`` where people
    address each other and ``conversation_quiet_z`` where they rarely do. None: no bar."""
    conversation, rules = situation.conversation, query.settings.rules
    if conversation is None or rules.conversation_z is None:
        return None
    reaching = (
        situation.asks_past
        if rules.conversation_when_alone == "unless-reaching"
        else situation.names_absent
    )
    outside_z: float | None = None
    if not situation.alone:
        outside_z = rules.conversation_z
    elif rules.conversation_when_alone != "never" and not reaching:
        addressing = addressed_share(query.timeline, query.position, rules.conversation_window)
        outside_z = (
            rules.conversation_z
            if addressing >= rules.conversation_addressed_share
            else rules.conversation_quiet_z
        )
    if outside_z is None:
        return None
    return conversation, _bar(query, outside_z)


def _bar(query: Query, z: float) -> np.ndarray:
    return near_bar(query.timeline, query.rows, query.similarity, query.end_row, z)
