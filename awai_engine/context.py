"""Assembling the reading context of one message (spec §1–3 and §5).

Every function here takes the channel's :class:`Timeline` and a position ``p`` and looks only at
positions before ``p`` (plus the message itself): the context is a pure function of the prefix,
which is the product's invariant. Vector math runs on the prefix slice of one float32 matrix, so
the cost grows with how far back the message is, not with how long the channel has become.

Association recalls by addressing (who the message is said to, who last addressed its speaker,
what the speaker said last) before it recalls by meaning; both were fitted on human reply-to
links (docs/evaluation.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from awai_engine.conversation import addressed_share, conversation_of
from awai_engine.exchange import Exchange, exchange_of
from awai_engine.lexical import NO_MATCHES, WordMatch, WordSearch
from awai_engine.reaching import asks_the_room, named_at_the_edge, names_the_absent
from awai_engine.settings import ActivationSettings, AssociationSettings, FlowSettings
from awai_engine.timeline import Timeline
from awai_engine.values import (
    Association,
    Flow,
    FlowSummary,
    FlowUtterance,
    RecallReason,
    ReplyScore,
)

SIMILARITY_DECIMALS = 6
REPLY_ITEMS = 3
"""The reply-target scorer's best candidates always in the context (see :func:`with_reply_targets`)."""
FAR_SAMPLE = 512  # rows sampled to place the far bar (its mean and spread settle well before)


def threshold(distance: np.ndarray | float, settings: AssociationSettings) -> np.ndarray:
    """θ(d) = min(θ_max, θ_0 + λ·ln(1 + d/d_0)): the further back, the closer in meaning."""
    rise = settings.theta_0 + settings.slope * np.log1p(
        np.asarray(distance, dtype=np.float64) / settings.d_0
    )
    return np.minimum(settings.theta_max, rise)


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


def recall(
    timeline: Timeline,
    position: int,
    flow: Flow,
    association: AssociationSettings,
    activation: ActivationSettings,
) -> tuple[Association, ...]:
    """Earlier thoughts the message points to by addressing, by meaning near and far, and by
    the rare words it shares with the far past, outside the flow.

    Addressing cues come first (see :func:`cue_sources`): in a busy room, who a message is said to
    is the strongest sign of what it answers. Those in ``cues_in_conversation`` are kept only
    when their line is in the message's inferred conversation (:mod:`awai_engine.conversation`)
    or on topic. Then the far past gets its own ``far_items`` slots
    (see :func:`_far`), so that a topic raised weeks ago can win one when it is truly the same
    thing, instead of competing with the nearer lines under an absolute θ_max. The remaining
    slots go by meaning: a thought is a candidate when its best similarity to a cue thought
    reaches θ(d), ranked by margin s − θ(d). At most one item per source message, at most ``A``
    in all; every item carries its similarity, the bar it cleared and its activation whatever
    recalled it, and ``reason`` and ``reach`` say what did.
    """
    message = timeline.messages[position]
    prefix_rows = message.first_row
    if association.max_items == 0 or prefix_rows == 0:
        return ()
    query_rows = np.asarray(timeline.rows_of(position))
    cues = timeline.vectors[query_rows]
    flow_positions = {timeline.position_of[message_id] for message_id in flow.message_ids()}
    rows, similarity = timeline.search(query_rows, prefix_rows)
    relative = near_bar(timeline, rows, similarity, prefix_rows, association.near_z)
    exchange = (
        exchange_of(timeline, position, association.exchange_window)
        if association.exchange_window
        else None
    )
    # Names written as the message's first or last words address those people too.
    edge_named = (
        named_at_the_edge(timeline, position, association.edge_name_set_off)
        if association.edge_names_address
        else frozenset()
    )
    conversation = (
        conversation_of(
            timeline,
            position,
            association.conversation_window,
            association.conversation_pairs,
            edge_named,
        )
        if association.conversation_window
        else None
    )
    strangers: tuple[Exchange, np.ndarray] | None = None
    if exchange is not None and (not exchange.alone or association.strangers_when_alone):
        strangers = (
            exchange,
            np.full(similarity.shape[1], np.inf)  # outside the exchange: never by meaning
            if association.stranger_z is None
            else near_bar(timeline, rows, similarity, prefix_rows, association.stranger_z),
        )
    alone = exchange is None or exchange.alone
    names_absent = names_the_absent(timeline, position, edge_named)
    asks_past = names_absent or (
        association.questions_reach_back and alone and asks_the_room(timeline, position)
    )
    reaching = (
        asks_past if association.conversation_when_alone == "unless-reaching" else names_absent
    )
    # The conversation bar: how far above the recent past a line from outside the message's
    # inferred conversation must stand (None: no bar).
    outside_z: float | None = None
    if conversation is not None and association.conversation_z is not None:
        if not alone:
            outside_z = association.conversation_z
        elif association.conversation_when_alone != "never" and not reaching:
            addressing = addressed_share(timeline, position, association.conversation_window)
            outside_z = (
                association.conversation_z
                if addressing >= association.conversation_addressed_share
                else association.conversation_quiet_z
            )
    outsiders: tuple[frozenset[int], np.ndarray] | None = None
    if outside_z is not None:
        outsiders = (
            conversation,
            near_bar(timeline, rows, similarity, prefix_rows, outside_z),
        )
    picks: list[_Pick] = []
    for source, reason in cue_sources(timeline, position, association, edge_named):
        if source in flow_positions:
            continue
        pick = _best_thought(timeline, source, cues, reason)
        off_conversation = (
            reason in association.cues_in_conversation
            and conversation is not None
            and source not in conversation
        )
        if reason in association.cues_on_topic or off_conversation:
            bar = max(float(threshold(position - source - 1, association)), relative[pick.cue])
            if pick.similarity < bar:
                continue
        picks.append(pick)
        if len(picks) == association.max_items:
            break
    room = association.max_items - len(picks)
    if room:
        taken = flow_positions | {pick.source for pick in picks}
        far = _far(
            timeline,
            position,
            rows,
            similarity,
            taken,
            association,
            room,
            exchange,
            conversation if association.far_conversation else None,
            asks_past,
            names_absent,
        )
        taken |= {pick.source for pick in far}
        near = _by_meaning(
            timeline,
            position,
            rows,
            similarity,
            relative,
            taken,
            association,
            room - len(far),
            strangers,
            outsiders,
        )
        picks.extend([*near, *far])
    return _associations(timeline, position, picks, association, activation)


def with_reply_targets(
    timeline: Timeline,
    position: int,
    flow: Flow,
    associations: tuple[Association, ...],
    replies: Sequence[ReplyScore],
    association: AssociationSettings,
    activation: ActivationSettings,
) -> tuple[Association, ...]:
    """The recalled items, then the scorer's ``REPLY_ITEMS`` best candidates for what the message
    responds to that neither the flow nor recall holds (reason ``reply``): the message a reading
    names must be one the reader and the language model are shown, with its reference.

    Why not within the budget A: recall's items are there for what they say; these for whom the
    message answers (often two to four lines back, in the flow's summaries or not at all).
    """
    held = {*flow.message_ids(), *(item.source.message_id for item in associations)}
    missing = [score for score in replies[:REPLY_ITEMS] if score.message.message_id not in held]
    if not missing:
        return associations
    cues = timeline.vectors[np.asarray(timeline.rows_of(position))]
    picks = [_best_thought(timeline, score.message.position, cues, "reply") for score in missing]
    return (*associations, *_associations(timeline, position, picks, association, activation))


def _associations(
    timeline: Timeline,
    position: int,
    picks: list[_Pick],
    association: AssociationSettings,
    activation: ActivationSettings,
) -> tuple[Association, ...]:
    """The picks as recalled items, with their bars and activations."""
    if not picks:
        return ()
    message = timeline.messages[position]
    rows_picked = [pick.row for pick in picks]
    activations, occurrences = base_level_activation(timeline, position, rows_picked, activation)
    recalled = []
    for pick, b, count in zip(picks, activations, occurrences, strict=True):
        source = timeline.messages[pick.source]
        distance = position - source.ref.position - 1
        bar = pick.bar if pick.bar is not None else float(threshold(distance, association))
        recalled.append(
            Association(
                source=source.ref,
                thought=source.thoughts[int(timeline.row_thought[pick.row])],
                cue_index=message.thoughts[pick.cue].index,
                distance=distance,
                similarity=round(pick.similarity, SIMILARITY_DECIMALS),
                threshold=round(bar, SIMILARITY_DECIMALS),
                activation=round(b, SIMILARITY_DECIMALS),
                occurrences=count,
                reason=pick.reason,
                reach=pick.reach,
                words_score=None if pick.words is None else round(pick.words.score, 4),
                words_share=None if pick.words is None else round(pick.words.share, 4),
                shared_words=() if pick.words is None else pick.words.terms,
            )
        )
    return tuple(recalled)


@dataclass(frozen=True)
class _Pick:
    """One recalled thought before it becomes an :class:`Association`."""

    row: int
    source: int  # position of the thought's message
    cue: int  # which thought of the message, as an index into its rows
    similarity: float
    reason: RecallReason
    reach: Literal["near", "far"] = "near"
    bar: float | None = None  # the similarity bar it cleared, when not θ(d)
    words: WordMatch | None = None


def _best_thought(
    timeline: Timeline,
    source: int,
    cues: np.ndarray,
    reason: RecallReason,
    reach: Literal["near", "far"] = "near",
    bars: np.ndarray | None = None,
    words: WordMatch | None = None,
) -> _Pick:
    """The thought of message ``source`` closest to one of the cue thoughts, exactly (by margin
    over each cue's bar when ``bars`` are given, and that bar is then the pick's)."""
    rows = np.asarray(timeline.rows_of(source))
    similarity = timeline.vectors[rows] @ cues.T  # (source thoughts, cues)
    margin = similarity if bars is None else similarity - bars[None, :]
    thought, cue = np.unravel_index(int(margin.argmax()), margin.shape)
    return _Pick(
        row=int(rows[thought]),
        source=source,
        cue=int(cue),
        similarity=float(similarity[thought, cue]),
        reason=reason,
        reach=reach,
        bar=None if bars is None else float(bars[cue]),
        words=words,
    )


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
    for earlier_position in range(position - 1, stop, -1):
        earlier = timeline.messages[earlier_position]
        name = earlier.ref.speaker_name.casefold()
        if name in addressed_found and len(addressed_found[name]) < settings.addressed_recent:
            addressed_found[name].append(earlier_position)
        if earlier.ref.speaker_id == speaker_id:
            if len(own) < settings.own_recent:
                own.append(earlier_position)
        elif len(addressing) < settings.addressed_speaker_recent and speaker in {
            addressee.casefold() for addressee in earlier.addressees
        }:
            addressing.append(earlier_position)
    by_addressee = sorted((p for found in addressed_found.values() for p in found), reverse=True)
    sources: dict[int, RecallReason] = {}
    for positions, reason in (
        (by_addressee, "addressed"),
        (addressing, "addressed-speaker"),
        (own, "own"),
    ):
        for source in positions:
            sources.setdefault(source, reason)
    return list(sources.items())


def _by_meaning(
    timeline: Timeline,
    position: int,
    rows: np.ndarray,
    similarity: np.ndarray,
    relative: np.ndarray,
    taken: set[int],
    settings: AssociationSettings,
    room: int,
    strangers: tuple[Exchange, np.ndarray] | None = None,
    outsiders: tuple[frozenset[int], np.ndarray] | None = None,
) -> list[_Pick]:
    """Up to ``room`` thoughts with margin s − max(θ(d), relative bar) ≥ 0, best first, one per
    source not taken. With ``strangers`` (the speaker's exchange and a bar per cue thought), a
    thought from outside the exchange must also clear that bar; with ``outsiders`` (the
    message's inferred conversation and a bar per cue thought), so must one from outside it.

    ``rows`` and ``similarity`` are what :meth:`Timeline.search` found for the message,
    ``relative`` the :func:`near_bar` of each cue thought.
    """
    if room <= 0 or not len(rows):
        return []
    row_positions = timeline.row_positions[rows]
    distance = position - row_positions - 1
    theta = threshold(distance, settings)
    bars = np.maximum(theta[:, None], relative[None, :])
    margins = similarity - bars.astype(np.float32)
    best_cue = margins.argmax(axis=1)
    best_margin = margins[np.arange(len(rows)), best_cue]
    outside = ~np.isin(row_positions, np.fromiter(taken, dtype=np.int64, count=len(taken)))
    eligible = np.flatnonzero((best_margin >= 0) & outside)
    # Highest margin first; ties go to the more recent row so the order is total and stable.
    order = eligible[np.lexsort((-eligible, -best_margin[eligible]))]
    picks: list[_Pick] = []
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
            _Pick(
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


def near_bar(
    timeline: Timeline,
    rows: np.ndarray,
    similarity: np.ndarray,
    end_row: int,
    z: float | None,
) -> np.ndarray:
    """The similarity each cue thought needs near, besides θ(d): μ + z·σ of its similarities to
    the ``recent_rows`` thoughts just before the message (``-inf`` with ``z`` unset).

    Why: in a busy room most nearby lines belong to other conversations, and how alike two
    unrelated lines look depends on the message (a short "thanks" resembles many lines). A
    thought well above what the message shares with everything said just before is on topic.

    With fewer than z² + 2 recent thoughts there is no bar (``-inf``): one line among n can
    stand at most √(n − 1) deviations above them all (numpy's std), so a bar of z would shut out even the
    line the message repeats word for word in a young channel.
    """
    if z is None or not len(rows):
        return np.full(similarity.shape[1], -np.inf)
    recent = similarity[rows >= end_row - timeline.index.recent_rows]
    if z > 0 and len(recent) < z * z + 2:
        return np.full(similarity.shape[1], -np.inf)
    return recent.mean(axis=0) + z * recent.std(axis=0)


def far_sample(timeline: Timeline, cues: np.ndarray, far_end: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of each cue thought's similarity to the thoughts before
    position ``far_end``, from a fixed sample of them.

    Why relative: how similar two unrelated lines look depends on the encoder, the language and
    the message (a greeting resembles every greeting); "standard deviations above what the far
    past usually shares with it" means the same everywhere. The sample is every k-th row before
    ``far_end`` with k fixed by ``far_end`` alone, so it is a function of the prefix.
    """
    end_row = timeline.messages[far_end].first_row
    step = max(1, end_row // FAR_SAMPLE)
    sample = timeline.every_kth_row(step, end_row) @ cues.T  # (sampled rows, cues)
    return sample.mean(axis=0), np.maximum(sample.std(axis=0), 1e-6)


@dataclass(frozen=True)
class _Evidence:
    """How strongly each earlier message found is about the message read, in standard
    deviations above what the past usually shares with it (arrays by candidate message)."""

    sources: np.ndarray  # positions, ascending
    score: np.ndarray  # meaning + words + named
    meaning: np.ndarray
    bm25: np.ndarray  # 0 where BM25 did not find it
    mean: np.ndarray  # per cue thought: the far past's mean similarity…
    spread: np.ndarray  # …and its standard deviation


def _evidence(
    timeline: Timeline,
    position: int,
    rows: np.ndarray,
    similarity: np.ndarray,
    far_end: int,
    settings: AssociationSettings,
) -> _Evidence:
    """Every earlier message the dense search or BM25 found, scored as the sum of how far its
    best thought's similarity and its BM25 stand above what the prefix usually shares with the
    message (z-scores: dense against a sample of the far past, BM25 against every message), plus
    ``named_weight`` when it was said by someone the message names.

    Why a sum of z-scores rather than reciprocal ranks: ranks forget how much better the first
    is than the rest; on LoCoMo the dense ranking alone is weak (top-5 cosine 0.27) and fusing
    its ranks drags BM25 down, while a score only gains from it when both agree.
    """
    message = timeline.messages[position]
    cues = timeline.vectors[timeline.rows_of(position)]
    mean, spread = far_sample(timeline, cues, far_end)
    dense = ((similarity - mean[None, :]) / spread[None, :]).max(axis=1)
    # Best thought of each message: rows are ascending, so each message's rows are one run.
    row_positions = timeline.row_positions[rows]
    starts = np.flatnonzero(np.diff(row_positions, prepend=-1))
    sources = row_positions[starts]
    meaning = np.maximum.reduceat(dense, starts) if len(rows) else dense
    found = (
        timeline.lexicon.search(message.text, position, settings.lexical_pool)
        if settings.lexical
        else NO_MATCHES
    )
    missing = np.setdiff1d(found.positions, sources, assume_unique=True)
    if len(missing):  # found by words only: their meaning exactly, in one product
        first = np.searchsorted(timeline.row_positions, missing)
        counts = np.searchsorted(timeline.row_positions, missing, side="right") - first
        kept = counts > 0
        if not kept.all():  # a message without thoughts has no meaning to recall
            words = ~np.isin(found.positions, missing[~kept])
            missing, first, counts = missing[kept], first[kept], counts[kept]
            found = WordSearch(
                found.positions[words], found.scores[words], found.mean, found.spread
            )
        offsets = np.cumsum(counts) - counts
        exact = timeline.vectors[np.arange(counts.sum()) + np.repeat(first - offsets, counts)]
        z = ((exact @ cues.T - mean) / spread).max(axis=1)
        extra = np.maximum.reduceat(z, offsets) if len(z) else z
        sources = np.concatenate([sources, missing])
        meaning = np.concatenate([meaning, extra])
        ordered = np.argsort(sources, kind="stable")
        sources, meaning = sources[ordered], meaning[ordered]
    bm25 = np.zeros(len(sources))
    bm25[np.searchsorted(sources, found.positions)] = found.scores
    total = meaning + (bm25 - found.mean) / (found.spread or 1.0)
    named = timeline.named_speakers(position) if settings.named_weight else frozenset()
    if named:
        codes = np.array([timeline.speaker_code(s) for s in named])
        total = total + settings.named_weight * np.isin(timeline.speaker_codes[sources], codes)
    return _Evidence(sources, total, meaning, bm25, mean, spread)


def _far(
    timeline: Timeline,
    position: int,
    rows: np.ndarray,
    similarity: np.ndarray,
    taken: set[int],
    settings: AssociationSettings,
    room: int,
    exchange: Exchange | None,
    conversation: frozenset[int] | None,
    asks_past: bool,
    names_absent: bool,
) -> list[_Pick]:
    """Up to ``far_items`` messages at least ``far_distance`` back whose evidence (meaning and
    words together, :func:`_evidence`) reaches ``far_score_bar`` standard deviations, best
    first. With ``far_above_near``, a far message must also score higher than every near one
    outside the flow and the cues (``far_rivals`` says whose near messages compete): the far
    past wins a slot only when it says more than the near past does. With ``far_exchange``, a
    far message must be part of the speaker's ``exchange``, and with a ``conversation``, part of
    the message's inferred conversation, unless the speaker has no exchange. A message that does
    not reach for the past (``asks_past`` false: it names no one it does not address, and is no
    question to the room from a speaker in no exchange; :mod:`awai_engine.reaching`) gets no far line
    while its speaker is in an exchange (unless ``far_in_talk``), and otherwise only the
    speaker's own or lines at least ``far_unasked_similarity`` alike.

    ``rows`` and ``similarity`` are what :meth:`Timeline.search` found for the message.
    """
    room = min(room, settings.far_items)
    far_end = position - settings.far_distance  # messages before it are far
    in_talk = exchange is not None and not exchange.alone
    if room <= 0 or far_end <= 0 or (in_talk and not asks_past and not settings.far_in_talk):
        return []
    evidence = _evidence(timeline, position, rows, similarity, far_end, settings)
    sources, score = evidence.sources, evidence.score
    free = ~np.isin(sources, np.fromiter(taken, dtype=np.int64, count=len(taken)))
    speaker = timeline.speaker_code(timeline.messages[position].ref.speaker_id)
    rival = -math.inf
    if settings.far_above_near:
        near = free & (sources >= far_end)
        alone = exchange is None or exchange.alone  # as in recall(): no exchange known, none
        if (
            settings.far_rivals == "others"
            or (settings.far_rivals == "others-when-alone" and alone)
            or (settings.far_rivals == "others-when-named" and alone and names_absent)
        ):
            near &= timeline.speaker_codes[sources] != speaker
        if near.any():
            rival = float(score[near].max())
    bar = max(settings.far_score_bar, rival)
    cues = timeline.vectors[timeline.rows_of(position)]
    winners = np.flatnonzero(
        free & (sources < far_end) & (score >= settings.far_score_bar) & (score > rival)
    )
    picks: list[_Pick] = []
    # Best first; ties go to the more recent message.
    order = winners[np.lexsort((-sources[winners], -score[winners]))]
    unasked = None if asks_past else settings.far_unasked_similarity
    if in_talk and conversation is not None:  # one vectorised test instead of one per winner
        inside = np.fromiter(conversation, dtype=np.int64, count=len(conversation))
        order = order[np.isin(sources[order], inside)]
    for k in order:
        source, meaning = int(sources[k]), float(evidence.meaning[k])
        rest = float(score[k]) - meaning  # what words and naming added
        reason: RecallReason = "meaning" if meaning >= rest else "words"
        # The similarity bar its thought cleared: what meaning had to add to the rest.
        needed = evidence.mean + evidence.spread * (bar - rest)
        if (
            in_talk
            and settings.far_exchange
            and exchange is not None
            and not exchange.includes(timeline, source)
        ):
            continue
        words = (
            timeline.lexicon.explain(
                timeline.messages[position].text, position, source, float(evidence.bm25[k])
            )
            if evidence.bm25[k] > 0
            else None
        )
        pick = _best_thought(timeline, source, cues, reason, "far", needed, words)
        if pick.similarity < settings.far_floor:
            continue
        if (
            unasked is not None
            and pick.similarity < unasked
            and timeline.speaker_codes[source] != speaker
        ):
            continue
        picks.append(pick)
        if len(picks) == room:
            break
    return picks


def base_level_activation(
    timeline: Timeline, position: int, rows: list[int], settings: ActivationSettings
) -> tuple[list[float], list[int]]:
    """ACT-R B(t) = ln Σ_o Δ_o^(−d) over the earlier thoughts that say the same as each row.

    Occurrences are the thoughts before the message with similarity ≥ τ_rep to the recalled one
    (itself included); Δ is their age at the message, in utterances or seconds, at least 1.
    """
    if not rows:
        return [], []
    prefix_rows = timeline.messages[position].first_row
    candidates, similarity = timeline.search(
        np.asarray(rows), prefix_rows, probes=timeline.index.occurrence_probes
    )
    same = similarity >= settings.repeat_similarity
    same[np.searchsorted(candidates, rows), np.arange(len(rows))] = True
    source_positions = timeline.row_positions[candidates]
    if settings.age_unit == "seconds":
        ages = timeline.timestamps[position] - timeline.timestamps[source_positions]
    else:
        ages = (position - source_positions).astype(np.float64)
    decayed = np.maximum(ages, 1.0) ** (-settings.decay)
    activations = [math.log(float(decayed[same[:, k]].sum())) for k in range(len(rows))]
    counts = [int(same[:, k].sum()) for k in range(len(rows))]
    return activations, counts
