"""The reply-target features, computed for all candidates at once, are what each one means.

The engine computes every candidate's features in one pass with numpy; this file restates each
feature for one candidate at a time, straight from its definition (counting the lines between
the candidate and the message anew for each), and requires the same numbers to 1e-6 for every
message of generated conversations (real MiniLM vectors, real store), with lines recalled from
beyond the window among the candidates.
"""

from __future__ import annotations

import bisect
import math
import random

import numpy as np
import pytest

from awai_engine.association.reaching import named_at_the_edge
from awai_engine.cues.stance import opening_stance
from awai_engine.lexical import terms
from awai_engine.reply_target.features import (
    COSINE_GAP,
    FEATURE_NAMES,
    asks,
    candidate_features,
    window,
)
from awai_engine.reply_target.model import reply_model
from awai_engine.reply_target.regime import model_features
from awai_engine.timeline import Timeline
from awai_engine.values import Utterance
from bots.runtime import Runtime
from tests.factories import one_thought_timeline

SPEAKERS = ("Ann", "Bo", "Cy", "Dee", "ann")  # "ann" folds to the same name as "Ann"
TEXTS = (
    "Can we move the release to Thursday?",
    "Thursday works, the QA pass ends Wednesday.",
    "The deploy failed because the disk was full.",
    "did you clear the logs?",
    "yes, 40 GB freed",
    "Lunch? The ramen place reopened.",
    "ok 👍",
    "the retry on the upload job is in",
    "デプロイはディスクが一杯で失敗しました。",
    "それでいいと思いますか",
    "no, that is not what I meant",
    "thanks Bo",
)


def _conversation(seed: int, size: int, channel: str) -> list[Utterance]:
    draw = random.Random(seed)
    ts = 1_700_000_000.0
    lines = []
    for i in range(size):
        speaker = draw.choice(SPEAKERS)
        ts += draw.choice((5, 40, 200, 1_000, 20_000))
        # Some lines address two people: one of them may be the reader's speaker.
        to = draw.choice(((), (), (draw.choice(SPEAKERS),), tuple(draw.sample(SPEAKERS, 2))))
        text = draw.choice(TEXTS)
        lines.append(
            Utterance(
                channel=channel,
                message_id=f"g{i:03d}",
                speaker_id=speaker,
                speaker_name=speaker,
                text=f"{', '.join(to)}: {text}" if to else text,
                ts=ts,
                addressees=to,
            )
        )
    return lines


def _folded(timeline: Timeline, at: int) -> frozenset[str]:
    return frozenset(name.casefold() for name in timeline.messages[at].addressees)


def _slot(value: float, edges: tuple[float, ...]) -> list[bool]:
    slot = bisect.bisect_left(edges, value)
    return [k == slot for k in range(len(edges) + 1)]


def _one_candidate(
    timeline: Timeline, p: int, q: int, near: list[int], cosines: dict[int, float]
) -> list[float]:
    """The features of candidate ``q`` of message ``p``, from their definitions alone."""
    said = [name.casefold() for name in timeline.speaker_names]
    message, candidate = timeline.messages[p], timeline.messages[q]
    window_start = near[-1] if near else p
    speaker, by = said[p], said[q]
    edge = {name.casefold() for name in named_at_the_edge(timeline, p)}
    addressed = (_folded(timeline, p) | edge) - {speaker}
    to = _folded(timeline, q) - {by}
    between = range(q + 1, p)
    turns = sum(said[at] == by for at in between)
    replies = sum(by in _folded(timeline, at) for at in between)
    since = {said[at] for at in between}
    in_window = range(p - 1, window_start - 1, -1)
    own = next((at for at in in_window if said[at] == speaker), None)
    own_to = _folded(timeline, own) - {speaker} if own is not None else frozenset()
    to_speaker = next(
        (at for at in in_window if speaker in _folded(timeline, at) and said[at] != speaker),
        None,
    )
    named = {timeline.speaker_name(s).casefold() for s in timeline.named_speakers(p)}
    mine, theirs = set(terms(message.text)), frozenset(terms(candidate.text))
    shared, union = len(mine & theirs), len(mine | theirs)
    mean = float(np.mean([cosines[c] for c in (near or cosines)]))
    ranked = sorted(cosines.values(), reverse=True)
    third = ranked[2] if len(ranked) >= 3 else -1.0
    back = p - q
    return [
        *_slot(back, (1, 2, 3, 4, 6, 10, 20, 50)),
        math.log1p(back - 1) / math.log(51.0),
        *_slot(max(0.0, (message.ref.ts - candidate.ref.ts) / 60.0), (0.5, 1.5, 5, 15, 60, 240)),
        by == speaker,
        by in addressed,
        bool(addressed) and by not in addressed,
        not addressed,
        speaker in to,
        bool(to) and speaker not in to,
        turns == 0,
        math.log1p(turns) / 3.0,
        q == own,
        by in own_to,
        q == to_speaker,
        math.log1p(len(since)) / 3.0,
        speaker in since,
        asks(candidate),
        asks(message),
        asks(candidate) and not asks(message) and by != speaker,
        math.log1p(replies) / 3.0,
        _names_speaker(timeline, p, q, theirs),
        by in named,
        shared / union if union else 0.0,
        math.log1p(shared) / 3.0,
        cosines[q],
        cosines[q] - mean,
        min(ranked[0] - cosines[q], COSINE_GAP) / COSINE_GAP,
        max(-COSINE_GAP, min(third - cosines[q], COSINE_GAP)) / COSINE_GAP,
        math.log1p(len(message.text)) / 6.0,
        math.log1p(len(candidate.text)) / 6.0,
        opening_stance(message.text) is not None,
        own is None,
    ]


def _names_speaker(timeline: Timeline, p: int, q: int, theirs: frozenset[str]) -> bool:
    """Line ``q`` is another speaker's, after the speaker of ``p`` first spoke, and holds their
    whole name among its terms."""
    speaker_id = timeline.speaker_ids[p]
    name = frozenset(terms(timeline.speaker_name(speaker_id)))
    first = timeline.first_said(speaker_id)
    return bool(name) and first < q and timeline.speaker_ids[q] != speaker_id and name <= theirs


def _best_cosine(timeline: Timeline, p: int, q: int) -> float:
    mine, theirs = timeline.rows_of(p), timeline.rows_of(q)
    return max(
        float(np.float32(timeline.vectors[a] @ timeline.vectors[b])) for a in mine for b in theirs
    )


def test_all_candidates_at_once_give_each_candidates_own_features(runtime: Runtime) -> None:
    channel = "terminal:local:features"
    runtime.engine.ingest(_conversation(seed=31, size=90, channel=channel))
    timeline = runtime.store.timeline(channel)
    draw = random.Random(7)
    compared = 0
    for p in range(1, len(timeline.messages)):
        recalled = draw.sample(range(p), k=min(p, 3))
        found = candidate_features(timeline, p, recalled, size=12)
        near = window(timeline, p, size=12)
        cosines = {q: _best_cosine(timeline, p, q) for q in found.positions}
        expected = np.array(
            [_one_candidate(timeline, p, q, near, cosines) for q in found.positions],
            dtype=np.float64,
        )
        assert found.features.shape == (len(found.positions), len(FEATURE_NAMES))
        gap = np.abs(found.features - expected)
        worst = np.unravel_index(gap.argmax(), gap.shape)
        assert gap.max() <= 1e-6, (p, found.positions[worst[0]], FEATURE_NAMES[worst[1]])
        compared += len(found.positions)
    assert compared > 500


def test_a_reader_never_sees_a_coded_row_without_the_names_it_addresses() -> None:
    """Turn-taking codes are written by one reading while others read them without a lock: an
    array widened for a message addressing more names than any before is published, and every
    row's names written into it, before any row of the run is marked coded, so a concurrent
    reader that sees a row coded finds its names (a reviewer saw a row read as addressing no
    one)."""
    lines = [
        ("Ann", "hi", ()),
        ("Bo", "Ann: hello", ("Ann",)),
        ("Cy", "hey all", ()),
        ("Dee", "Ann, Bo, Cy: standup in five", ("Ann", "Bo", "Cy")),
        ("Ann", "ok", ()),
    ]
    timeline = one_thought_timeline(lines, np.random.default_rng(3).normal(size=(5, 4)))
    timeline.names_between(0, 3)  # rows 0-2 coded, one addressed name wide
    seen: list[tuple[bool, set[int]]] = []

    class Spoken(list[str]):
        """The speakers' names, read by the coder once the run's names are written: what
        another reading would find then, without the lock."""

        def __getitem__(self, index):  # type: ignore[no-untyped-def]
            if isinstance(index, slice):
                coded = bool(timeline._speaker_name_code[3] >= 0)
                seen.append((coded, set(timeline._addressed_codes[3].tolist()) - {-1}))
            return super().__getitem__(index)

    timeline.speaker_names = Spoken(timeline.speaker_names)
    timeline.names_between(3, 5)
    names = {timeline.name_code(name) for name in ("ann", "bo", "cy")}
    assert seen == [(False, names)]
    _, rows, codes = timeline.names_between(3, 4)
    assert set(codes[rows == 3].tolist()) == names


def _tied_timeline(first: float, second: float) -> Timeline:
    """Five lines and a message whose cosine to the second line is ``first`` and to the fourth
    is ``second``; the other lines are far from it in meaning."""
    lines = [
        ("Ann", "the build is green", ()),
        ("Bo", "release notes are drafted", ()),
        ("Cy", "lunch at noon?", ()),
        ("Ann", "I'll take the notes", ()),
        ("Dee", "ok", ()),
        ("Ann", "I'll do the Japanese release notes", ()),
    ]
    vectors = np.zeros((len(lines), 8))
    vectors[:, 7] = 1.0  # far from the message
    vectors[0, 2] = vectors[2, 3] = vectors[4, 4] = 0.3
    for row, axis, cosine in ((1, 5, first), (3, 6, second)):
        vectors[row] = 0.0
        vectors[row, 0], vectors[row, axis] = cosine, math.sqrt(1.0 - cosine**2)
    vectors[5] = 0.0
    vectors[5, 0] = 1.0
    return one_thought_timeline(lines, vectors)


def test_a_near_tie_in_meaning_moves_the_features_as_little_as_the_cosines_do() -> None:
    """Which of two near-tied lines is the closest flips for a few thousandths of cosine (a
    line entering the window, a runtime's last digits), and no feature may jump with it: a rank
    did, and a headline flipped from one line to the other."""
    before = candidate_features(_tied_timeline(0.503, 0.500), 5)
    after = candidate_features(_tied_timeline(0.500, 0.503), 5)
    assert before.positions == after.positions
    moved = np.abs(before.features - after.features).max()
    assert moved <= 0.003 / COSINE_GAP + 1e-6
    closest = FEATURE_NAMES.index("cosine_below_best")
    rows = [before.positions.index(q) for q in (1, 3)]
    assert before.features[rows, closest] == pytest.approx([0.0, 0.003 / COSINE_GAP], abs=1e-6)
    assert after.features[rows, closest] == pytest.approx([0.003 / COSINE_GAP, 0.0], abs=1e-6)


def test_a_near_tie_in_meaning_moves_the_shipped_models_probabilities_by_thousandths() -> None:
    """What a reading shows follows the probabilities: swapping which of two lines is 0.003
    closer moved one from 0.64 to 0.44 with the rank columns (and the best line with it); with
    the gaps, every probability moves by less than 0.01."""
    model = reply_model()
    before, after = (
        model.probabilities(model_features(_tied_timeline(first, second), 5).features)
        for first, second in ((0.503, 0.500), (0.500, 0.503))
    )
    assert np.abs(before - after).max() < 0.01
