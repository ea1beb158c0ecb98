"""What makes an earlier message the one a message responds to, as numbers per candidate.

Why these: people annotated which earlier line each line of busy IRC channels responds to
(Kummerfeld et al., ACL 2019), and what predicts it there carries to any multi-party chat —
how far back the line is (in lines and in time), who took turns since, who addresses whom (in
either direction, by ``Name:``/``@name``/Slack and Discord mentions as the adapters parse them,
or a name written as the first or last words), whether one asks and the other does not, whether
the candidate already got an answer, and how much the two share in words and in meaning.
Nothing here assumes English or spaces: words are :func:`awai_engine.lexical.terms` (character
bigrams for Japanese), questions end in ? or ？ or Japanese か (:func:`awai_engine.cues.questions.is_question`).

Every feature of a candidate reads only the message, the candidate and the lines between them,
all at or before the message: the features of message ``p`` are a function of the prefix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from awai_engine.association.reaching import named_at_the_edge
from awai_engine.cues.questions import is_question
from awai_engine.cues.stance import opening_stance
from awai_engine.lexical import terms
from awai_engine.text_caches import text_cache
from awai_engine.timeline import Timeline, TimelineMessage

WINDOW = 50
"""Earlier lines of the message's line scored as candidates (besides recalled ones): on the
annotated #ubuntu training logs 99% of reply links are within 50 lines."""

_BACK_EDGES = (1, 2, 3, 4, 6, 10, 20, 50)
"""Upper ends of the "lines back" buckets: 1, 2, 3, 4, 5–6, 7–10, 11–20, 21–50, more."""
_MINUTES_EDGES = (0.5, 1.5, 5, 15, 60, 240)
"""Upper ends of the time-gap buckets in minutes (logs have minute stamps)."""
COSINE_GAP = 0.3
"""How far (in cosine) below the closest line, or above or below the third closest, still
counts: gaps are clipped to ±this and scaled to ±1."""

FEATURE_NAMES: tuple[str, ...] = (
    *(f"back<={edge}" for edge in _BACK_EDGES),
    "back>50",
    "log_back",
    *(f"minutes<={edge}" for edge in _MINUTES_EDGES),
    "minutes>240",
    "same_speaker",
    "addresses_candidate",
    "addresses_another",
    "addresses_nobody",
    "candidate_addresses_speaker",
    "candidate_addresses_another",
    "candidate_is_speakers_latest",
    "log_candidate_speaker_turns_since",
    "own_latest",
    "speakers_previous_addressee",
    "latest_addressed_to_speaker",
    "log_speakers_since",
    "speaker_spoke_since",
    "candidate_asks",
    "message_asks",
    "answers_question_shape",
    "log_replies_to_candidate_since",
    "candidate_names_speaker",
    "message_names_candidate_speaker",
    "word_overlap",
    "log_shared_words",
    "cosine",
    "cosine_above_mean",
    "cosine_below_best",
    "cosine_below_third",
    "log_message_chars",
    "log_candidate_chars",
    "message_has_stance",
    "speakers_first_in_window",
)


@dataclass(frozen=True)
class Candidates:
    """The earlier lines scored for one message, newest first, and their features (one row each)."""

    positions: tuple[int, ...]
    features: np.ndarray  # (len(positions), len(FEATURE_NAMES)) float32


def window(timeline: Timeline, position: int, size: int = WINDOW) -> list[int]:
    """The ``size`` lines of the message's line just before it, newest first."""
    _, earlier = timeline.line_before(position, size)
    return earlier[::-1]


def candidate_features(
    timeline: Timeline, position: int, extra: Sequence[int] = (), size: int = WINDOW
) -> Candidates:
    """Features of every candidate for the message at ``position``: its line's last ``size``
    lines, then the positions of ``extra`` (lines recalled from further back) not among them."""
    near = window(timeline, position, size)
    seen = set(near)
    far = sorted({q for q in extra if q < position and q not in seen}, reverse=True)
    positions = (*near, *far)
    if not positions:
        return Candidates((), np.empty((0, len(FEATURE_NAMES)), dtype=np.float32))
    return Candidates(positions, _features(timeline, position, positions, len(near)))


def _features(
    timeline: Timeline, position: int, positions: tuple[int, ...], near: int
) -> np.ndarray:
    message = timeline.messages[position]
    speaker = timeline.speaker_names[position].casefold()
    edge = {name.casefold() for name in named_at_the_edge(timeline, position)}
    addressed = (timeline.addressed_by(position) | edge) - {speaker}
    named_by_message = {
        timeline.speaker_name(s).casefold() for s in timeline.named_speakers(position)
    }
    message_terms = _term_set(message.text)
    message_asks = asks(message)
    stance = _stance(message.text)
    # The speaker's own latest line and the latest said to them are looked for in the window
    # only, as in fitting (where no recalled line reached further): a far recalled line makes the
    # pass longer without changing what the near candidates look like.
    window_start = positions[near - 1] if near else position

    # Who said and who addressed whom, as name codes over the lines from the oldest candidate on:
    # everything below is per candidate, computed for all of them at once.
    at = np.asarray(positions)
    names = _Names(timeline, position, int(at.min()), speaker)
    turns = _turns(names, at, window_start)
    own_latest, latest_to_speaker = turns.own_latest, turns.latest_to_speaker
    code = names.said_by[at - names.oldest]
    same = code == names.own
    in_addressed = _among(code, names.codes(addressed))
    to_speaker, to_another = names.addressing()
    to_speaker, to_another = to_speaker[at - names.oldest], to_another[at - names.oldest]
    own_previous = names.addressed_at(own_latest) if own_latest is not None else _NO_CODES

    line_terms = timeline.derived("reply-target-terms", positions, _line_terms)
    line = timeline.derived_numbers("reply-target", at, _line, len(_LINE))
    candidate_asks = line[:, _LINE.index("asks")] > 0
    count = len(positions)
    shared = np.fromiter((len(message_terms & t) for t in line_terms), np.float64, count)
    union = np.fromiter(map(len, line_terms), np.float64, count) + len(message_terms) - shared
    back = position - at
    seconds = np.maximum(0.0, timeline.timestamps[position] - timeline.timestamps[at])

    cosines = _cosines(
        timeline,
        position,
        line[:, _LINE.index("first_row")].astype(np.int64),
        line[:, _LINE.index("thoughts")].astype(np.int64),
    )
    near_cosines = cosines[:near] if near else cosines
    # np.mean's own steps, without its Python wrapper (the same float32 sum and division)
    mean = float(np.add.reduce(near_cosines) / len(near_cosines)) if len(near_cosines) else 0.0
    below_best, below_third = _below_closest(cosines)

    # Each column written in place, in FEATURE_NAMES' order (constants broadcast).
    table = np.empty((count, len(FEATURE_NAMES)), dtype=np.float32)
    column = iter(range(len(FEATURE_NAMES)))
    for value in (
        *_one_hot(back, _BACK_EDGES),
        np.log1p(back - 1) / math.log(51.0),
        *_one_hot(seconds / 60.0, _MINUTES_EDGES),
        same,
        in_addressed,
        bool(addressed) & ~in_addressed,
        not addressed,
        to_speaker,
        to_another,
        turns.turns_since == 0,
        np.log1p(turns.turns_since) / 3.0,
        at == (own_latest if own_latest is not None else -1),
        _among(code, own_previous),
        at == (latest_to_speaker if latest_to_speaker is not None else -1),
        np.log1p(turns.speakers_since) / 3.0,
        turns.speaker_since,
        candidate_asks,
        message_asks,
        candidate_asks & (not message_asks) & ~same,
        np.log1p(turns.replies_since) / 3.0,
        _names_speaker(timeline, position, at, line_terms),
        _among(code, names.codes(named_by_message)),
        np.divide(shared, union, out=np.zeros(count), where=union > 0),
        np.log1p(shared) / 3.0,
        cosines,
        cosines - mean,
        below_best,
        below_third,
        math.log1p(len(message.text)) / 6.0,
        np.log1p(line[:, _LINE.index("chars")]) / 6.0,
        stance,
        own_latest is None,
    ):
        table[:, next(column)] = value
    return table


_NO_CODES = np.empty(0, dtype=np.int64)


def _among(codes: np.ndarray, some: np.ndarray) -> np.ndarray:
    """Whether each of ``codes`` is one of the few ``some`` (``np.isin`` costs more, so small)."""
    if not len(some):
        return np.zeros(len(codes), dtype=bool)
    return (codes[:, None] == some[None, :]).any(axis=1)


class _Names:
    """Who said each line from ``oldest`` up to the message, and whom each addressed, as name
    codes (:meth:`Timeline.names_between`); ``own`` is the code of ``speaker``, the message's
    speaker (case-folded), read once the lines are coded."""

    def __init__(self, timeline: Timeline, position: int, oldest: int, speaker: str) -> None:
        self.timeline = timeline
        self.oldest = oldest
        self.span = position - oldest
        self.said_by, self.lines, self.addressed = timeline.names_between(oldest, position)
        self.own = timeline.name_code(speaker)

    def codes(self, names: set[str] | frozenset[str]) -> np.ndarray:
        """The codes of case-folded ``names`` (a name no line was said by or to has none)."""
        return np.array([self.timeline.name_code(name) for name in names], dtype=np.int64)

    def addressing(self) -> tuple[np.ndarray, np.ndarray]:
        """Per line (from ``oldest``): whether it addresses the message's speaker, and whether it
        addresses others only (its own speaker does not count as either)."""
        line = self.lines - self.oldest
        other_than_said = self.addressed != self.said_by[line]
        to_speaker = np.zeros(self.span, dtype=bool)
        to_speaker[line[other_than_said & (self.addressed == self.own)]] = True
        to_another = np.zeros(self.span, dtype=bool)
        to_another[line[other_than_said & (self.addressed != self.own)]] = True
        return to_speaker, to_another & ~to_speaker

    def addressed_at(self, position: int) -> np.ndarray:
        """The codes the line at ``position`` addresses, the message's speaker left out."""
        return self.addressed[(self.lines == position) & (self.addressed != self.own)]


@dataclass(frozen=True)
class _Turns:
    """Turn-taking after each candidate, up to the message: per candidate, the lines its speaker
    said since, the lines addressed to its speaker since, how many people spoke since and
    whether the message's speaker did; and, within the window, the speaker's own latest line and
    the latest line said to them by someone else."""

    turns_since: np.ndarray
    replies_since: np.ndarray
    speakers_since: np.ndarray
    speaker_since: np.ndarray
    own_latest: int | None
    latest_to_speaker: int | None


def _turns(names: _Names, positions: np.ndarray, window_start: int) -> _Turns:
    """:class:`_Turns` over the lines from the oldest candidate to the message, by sorting name
    codes: a count "after line k" is the size of a run of (name, line) keys past (name, k)."""
    oldest, span, said_by, own = names.oldest, names.span, names.said_by, names.own
    lines, addressed = names.lines, names.addressed
    at = positions - oldest
    code = said_by[at]

    def after(named: np.ndarray, where: np.ndarray) -> np.ndarray:
        """For each candidate, how many of the (name, line) pairs name its speaker after it."""
        keys = np.sort(named * (span + 1) + where)
        return np.searchsorted(keys, code * (span + 1) + span, side="right") - np.searchsorted(
            keys, code * (span + 1) + at, side="right"
        )

    every_line = np.arange(span)
    by_name = np.lexsort((every_line, said_by))
    group_end = np.append(said_by[by_name][1:] != said_by[by_name][:-1], True)
    last_lines = np.sort(every_line[by_name][group_end])  # each speaker's last line
    spoken = every_line[said_by == own]
    last_own = int(spoken[-1]) if len(spoken) else -1
    to_speaker = lines[(addressed == own) & (said_by[lines - oldest] != own)]
    to_speaker = to_speaker[to_speaker >= window_start]
    return _Turns(
        turns_since=after(said_by, every_line).astype(np.float64),
        replies_since=after(addressed, lines - oldest).astype(np.float64),
        speakers_since=(len(last_lines) - np.searchsorted(last_lines, at, side="right")).astype(
            np.float64
        ),
        speaker_since=(last_own > at).astype(np.float64),
        own_latest=oldest + last_own
        if last_own >= 0 and oldest + last_own >= window_start
        else None,
        latest_to_speaker=int(to_speaker[-1]) if len(to_speaker) else None,
    )


def _names_speaker(
    timeline: Timeline, position: int, at: np.ndarray, line_terms: Sequence[frozenset[str]]
) -> np.ndarray:
    """Whether each line at ``at`` (whose terms are ``line_terms``) names the speaker of the
    message at ``position``: another speaker's line, after their first, holding their whole name
    among its terms (as :meth:`Timeline.named_speakers` finds names)."""
    speaker_id = timeline.speaker_ids[position]
    name = frozenset(terms(timeline.speaker_name(speaker_id)))
    found = np.zeros(len(at), dtype=bool)
    if not name:
        return found
    codes = timeline.speaker_codes
    may = (at > timeline.first_said(speaker_id)) & (codes[at] != codes[position])
    for k in np.flatnonzero(may).tolist():
        found[k] = name <= line_terms[k]
    return found


_LINE = ("asks", "chars", "first_row", "thoughts")
"""What the features read of a candidate line besides its terms, computed once per line (see
:meth:`Timeline.derived_numbers`): whether it asks, its length, and where its thoughts'
vectors are."""


def _line(message: TimelineMessage) -> tuple[float, ...]:
    return (
        float(asks(message)),
        float(len(message.text)),
        float(message.first_row),
        float(len(message.thoughts)),
    )


def _line_terms(message: TimelineMessage) -> frozenset[str]:
    """A candidate line's distinct terms, computed once per line (see :meth:`Timeline.derived`)."""
    return _term_set(message.text)


def asks(message: TimelineMessage) -> bool:
    """Whether one of the message's thoughts asks ("Lunch? The ramen place reopened." does)."""
    return any(_asks(thought.text) for thought in message.thoughts)


@text_cache(maxsize=16_384)
def _asks(text: str) -> bool:
    return is_question(text)


@text_cache(maxsize=16_384)
def _term_set(text: str) -> frozenset[str]:
    """A line's distinct terms: each candidate is one for the next fifty readings of its line."""
    return frozenset(terms(text))


@text_cache(maxsize=4096)
def _stance(text: str) -> bool:
    """Whether the message opens with a stance (cached: a message is read more than once)."""
    return opening_stance(text) is not None


def _one_hot(values: np.ndarray, edges: tuple[float, ...]) -> np.ndarray:
    """One-hot columns, one row per slot: which of ``edges`` (upper ends, ascending) first holds
    each value; the last slot holds everything above."""
    slot = np.searchsorted(edges, values, side="left")
    return np.arange(len(edges) + 1)[:, None] == slot


def _below_closest(cosines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How far each candidate's cosine is below the closest candidate's, and below the third
    closest's (negative above it; -1 when there is no third), each clipped to
    ±:data:`COSINE_GAP` and scaled to ±1.

    Why gaps and not ranks: on a near-tie a rank ("the closest", "among the three closest")
    flips for a difference of thousandths, and the reading with it: a line a hair closer entering
    the window (the same sample read with and without its threads: a thread reply 0.02 closer
    than Aiko's own line took its rank, and her line's score moved from 0.74 to 0.60), or the
    last digits of a runtime whose vectors follow the batch's padding. A gap moves by as little
    as the cosines do.
    """
    third = float(np.partition(cosines, -3)[-3]) if len(cosines) >= 3 else -1.0
    below_best = np.minimum(float(cosines.max()) - cosines, COSINE_GAP) / COSINE_GAP
    below_third = np.clip(third - cosines, -COSINE_GAP, COSINE_GAP) / COSINE_GAP
    return below_best, below_third


def _cosines(
    timeline: Timeline, position: int, firsts: np.ndarray, lengths: np.ndarray
) -> np.ndarray:
    """The best cosine between a thought of the message and a thought of each candidate (their
    vectors' first rows and counts; stored unit vectors: a dot product), in one product over
    all their rows."""
    vectors = np.asarray(timeline.vectors)  # a plain view: a memory map's slicing costs more
    query = vectors[np.asarray(timeline.rows_of(position))]
    starts = np.concatenate(([0], np.cumsum(lengths[:-1])))
    rows = np.repeat(firsts - starts, lengths) + np.arange(int(lengths.sum()))
    best = (np.take(vectors, rows, axis=0) @ query.T).max(axis=1)
    return np.maximum.reduceat(best, starts).astype(np.float32)
