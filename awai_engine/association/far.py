"""Stage 2: slots for the far past, when meaning and rare words together stand out.

Why its own slots: against an absolute θ_max a topic raised weeks ago competes with every nearer
line and loses, though a reader recognises it at once when it is truly the same thing. So the
far past (at least ``far_distance`` back) gets up to ``far_items`` slots, filled only by messages
whose evidence (how far their meaning and their BM25 stand above what the past usually shares
with the message) reaches the far bar and beats the near past (docs/evaluation.md, "Association
at every distance").
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np

from awai_engine.association.picks import Pick, best_thought
from awai_engine.association.query import Query, Situation
from awai_engine.cues.questions import is_question
from awai_engine.lexical import NO_MATCHES, WordSearch, terms
from awai_engine.timeline import Timeline
from awai_engine.values import RecallReason

FAR_SAMPLE = 512  # rows sampled to place the far bar (its mean and spread settle well before)


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


def _evidence(query: Query, far_end: int) -> _Evidence:
    """Every earlier message the dense search or BM25 found, scored as the sum of how far its
    best thought's similarity and its BM25 stand above what the prefix usually shares with the
    message (z-scores: dense against a sample of the far past, BM25 against every message), plus
    ``rules.named_weight`` when it was said by someone the message names.

    Why a sum of z-scores rather than reciprocal ranks: ranks forget how much better the first
    is than the rest; on LoCoMo the dense ranking alone is weak (top-5 cosine 0.27) and fusing
    its ranks drags BM25 down, while a score only gains from it when both agree.
    """
    timeline, position, rules = query.timeline, query.position, query.settings.rules
    rows, similarity = query.rows, query.similarity
    message = timeline.messages[position]
    cues = query.cues
    mean, spread = far_sample(timeline, cues, far_end)
    dense = ((similarity - mean[None, :]) / spread[None, :]).max(axis=1)
    # Best thought of each message: rows are ascending, so each message's rows are one run.
    row_positions = timeline.row_positions[rows]
    starts = np.flatnonzero(np.diff(row_positions, prepend=-1))
    sources = row_positions[starts]
    meaning = np.maximum.reduceat(dense, starts) if len(rows) else dense
    found = (
        timeline.lexicon.search(message.text, position, rules.lexical_pool, unsearched_names(query))
        if rules.lexical
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
    named = timeline.named_speakers(position) if rules.named_weight else frozenset()
    if named:
        codes = np.array([timeline.speaker_code(s) for s in named])
        total = total + rules.named_weight * np.isin(timeline.speaker_codes[sources], codes)
    return _Evidence(sources, total, meaning, bm25, mean, spread)


def unsearched_names(query: Query) -> frozenset[str]:
    """The words the far past's word search leaves out: unless ``rules.words_include_names``,
    the name words of the earlier speakers the message names.

    Why: a name in a line is mostly the line saying whom it speaks to ("Thanks, Melanie!"), so
    BM25 on a name ranks every line addressed to that person as sharing the message's rarest
    word; who said a line already counts through ``rules.named_weight``.
    """
    if query.settings.rules.words_include_names:
        return frozenset()
    timeline = query.timeline
    return frozenset(
        word
        for speaker_id in timeline.named_speakers(query.position)
        for word in terms(timeline.speaker_name(speaker_id))
    )


def by_evidence(query: Query, situation: Situation, taken: set[int], room: int) -> list[Pick]:
    """Up to ``far_items`` messages at least ``far_distance`` back whose evidence (meaning and
    words together, :func:`_evidence`) reaches ``far_score_bar`` standard deviations, best
    first. With ``far_above_near``, a far message must also score higher than every near one
    outside the flow and the cues (``far_rivals`` says whose near messages compete): the far
    past wins a slot only when it says more than the near past does. With ``far_exchange``, a
    far message must be part of the speaker's exchange, and with ``far_conversation``, part of
    the message's inferred conversation, unless the speaker has no exchange. A message that does
    not reach for the past (``asks_past`` false: it names no one it does not address, and is no
    question to the room from a speaker in no exchange; :mod:`awai_engine.association.reaching`)
    gets no far line while its speaker is in an exchange (unless ``far_in_talk``), and otherwise
    only the
    speaker's own or lines at least ``far_unasked_similarity`` alike. (``far_items`` and
    ``far_distance`` are the operator's settings, the rest are ``rules``.)
    """
    timeline, position = query.timeline, query.position
    settings, rules = query.settings, query.settings.rules
    exchange, asks_past = situation.exchange, situation.asks_past
    conversation = situation.conversation if rules.far_conversation else None
    room = min(room, settings.far_items)
    far_end = position - settings.far_distance  # messages before it are far
    in_talk = not situation.alone
    if room <= 0 or far_end <= 0 or (in_talk and not asks_past and not rules.far_in_talk):
        return []
    evidence = _evidence(query, far_end)
    sources, score = evidence.sources, evidence.score
    free = ~np.isin(sources, np.fromiter(taken, dtype=np.int64, count=len(taken)))
    speaker = timeline.speaker_code(timeline.messages[position].ref.speaker_id)
    rival = -math.inf
    if rules.far_above_near:
        near = free & (sources >= far_end)
        alone = situation.alone
        if (
            rules.far_rivals == "others"
            or (rules.far_rivals == "others-when-alone" and alone)
            or (rules.far_rivals == "others-when-named" and alone and situation.names_absent)
        ):
            near &= timeline.speaker_codes[sources] != speaker
        if near.any():
            rival = float(score[near].max())
    bar = max(rules.far_score_bar, rival)
    winners = np.flatnonzero(
        free & (sources < far_end) & (score >= rules.far_score_bar) & (score > rival)
    )
    picks: list[Pick] = []
    # Best first; ties go to the more recent message.
    order = winners[np.lexsort((-sources[winners], -score[winners]))]
    unasked = None if asks_past else rules.far_unasked_similarity
    asking = rules.far_answers and _asks(timeline, position)
    if in_talk and conversation is not None:  # one vectorised test instead of one per winner
        inside = np.fromiter(conversation, dtype=np.int64, count=len(conversation))
        order = order[np.isin(sources[order], inside)]
    for k in order:
        source, meaning = int(sources[k]), float(evidence.meaning[k])
        if any(pick.source == source for pick in picks):
            continue  # taken along as the answer to a question picked before it
        rest = float(score[k]) - meaning  # what words and naming added
        reason: RecallReason = "meaning" if meaning >= rest else "words"
        # The similarity bar its thought cleared: what meaning had to add to the rest.
        needed = evidence.mean + evidence.spread * (bar - rest)
        if (
            in_talk
            and rules.far_exchange
            and exchange is not None
            and not exchange.includes(timeline, source)
        ):
            continue
        words = (
            timeline.lexicon.explain(
                timeline.messages[position].text,
                position,
                source,
                float(evidence.bm25[k]),
                unsearched_names(query),
            )
            if evidence.bm25[k] > 0
            else None
        )
        pick = best_thought(timeline, source, query.cues, reason, "far", needed, words)
        if pick.similarity < settings.far_floor:
            continue
        if (
            unasked is not None
            and pick.similarity < unasked
            and timeline.speaker_codes[source] != speaker
        ):
            continue
        picks.append(pick)
        answer = _answer(timeline, source, far_end) if asking else None
        if answer is not None and answer not in taken and len(picks) < room:
            picks.append(best_thought(timeline, answer, query.cues, "answer", "far"))
        if len(picks) >= room:
            break
    return picks


def _asks(timeline: Timeline, position: int) -> bool:
    """Whether one of the message's thoughts asks."""
    return any(is_question(thought.text) for thought in timeline.messages[position].thoughts)


def _answer(timeline: Timeline, question: int, end: int) -> int | None:
    """The line that answers the far line at ``question`` when it asks: the next line of its
    line (its thread, or the top level), before ``end``, said by someone else; else None.

    Why: a question asked again ("What book did Caroline recommend?") finds the earlier line
    that asked the same ("Which one has been your favourite?") far better than the line that
    answered it, whose words are the answer's own; what the asker needs is that answer. On
    LoCoMo the evidence of a question is the line right after a recalled question in about a
    fifth of the misses.
    """
    if not _asks(timeline, question):
        return None
    message = timeline.messages[question]
    if message.is_reply:
        line = timeline.threads.get(message.ref.thread_root or "", [])
    else:
        line = timeline.top_level
    at = bisect.bisect_right(line, question)
    if at == len(line) or line[at] >= end:
        return None
    answer = line[at]
    return answer if timeline.speaker_ids[answer] != timeline.speaker_ids[question] else None
