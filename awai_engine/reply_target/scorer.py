"""Rank the earlier messages one message may respond to, by the fitted model.

Why it exists: the headline of a reading names one earlier message, and the person reading it
checks that first. The candidates are the last lines of the message's line and whatever
association recalled from further back; each gets the model's probability of being what the
message responds to, and the best one is *confident* when it clears the bar fitted on the dev
logs (a higher bar far back, where a wrong name misleads most). Causal like its features.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import numpy as np

from awai_engine.cues.answers import opens_as_answer
from awai_engine.reply_target.agreement import through_agreements
from awai_engine.reply_target.features import FEATURE_NAMES
from awai_engine.reply_target.model import ReplyModel
from awai_engine.reply_target.quote import quoted_sentence
from awai_engine.reply_target.regime import model_features
from awai_engine.reply_target.returns import returned_first
from awai_engine.reply_target.yes_no import NEAR, answered_question
from awai_engine.timeline import Timeline
from awai_engine.values import Association, Flow, ReplyScore

_COSINE = FEATURE_NAMES.index("cosine")
_ASKS = FEATURE_NAMES.index("candidate_asks")
_ADDRESSES_ANOTHER = FEATURE_NAMES.index("candidate_addresses_another")


class ReplyScores(Sequence[ReplyScore]):
    """Every candidate of one message with its probability, best first, held as arrays: a
    :class:`ReplyScore` is built when first read. Why: a reading keeps a handful of some hundred
    candidates (:func:`shown_replies`), and building a value per candidate cost more than
    scoring them all."""

    def __init__(
        self,
        timeline: Timeline | None,
        position: int,
        positions: np.ndarray,
        probabilities: np.ndarray,
        confident: bool,
        asks: np.ndarray,
        similarities: np.ndarray,
    ) -> None:
        self.positions = positions
        self._timeline = timeline
        self._position = position
        self._probabilities = probabilities
        self._confident = confident
        self._asks = asks
        self._similarities = similarities
        self._built: dict[int, ReplyScore] = {}

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, index: int) -> ReplyScore: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[ReplyScore, ...]: ...

    def __getitem__(self, index: int | slice) -> ReplyScore | tuple[ReplyScore, ...]:
        if isinstance(index, slice):
            return tuple(self._score(rank) for rank in range(*index.indices(len(self))))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("reply score rank out of range")
        return self._score(index)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def position_of(self, message_id: str) -> int | None:
        """The position of a message of the scored timeline (None: not in it)."""
        return self._timeline.position_of.get(message_id) if self._timeline else None

    def _score(self, rank: int) -> ReplyScore:
        score = self._built.get(rank)
        if score is None:
            assert self._timeline is not None  # scores exist only for a timeline's candidates
            # Unvalidated: every field is computed here (a probability is a logistic output).
            probability = round(float(self._probabilities[rank]), 6)
            score = self._built[rank] = ReplyScore.model_construct(
                message=self._timeline.messages[int(self.positions[rank])].ref,
                probability=probability,
                confident=rank == 0 and self._confident,
                asks=bool(self._asks[rank]),
                similarity=round(float(self._similarities[rank]), 6),
                quote=quoted_sentence(self._timeline, self._position, int(self.positions[rank]))
                if probability >= QUOTED_FROM  # the value connections compare, rounded
                else "",
            )
        return score


QUOTED_FROM = 0.05
"""The least probability of a candidate whose quoted sentence is found: no headline names one
under it (an agreement moves to a candidate only from this same value, ``connections`` imports
it), and finding it for every shown candidate would cost each reading time for nothing."""

_EMPTY = np.empty(0)
NO_SCORES = ReplyScores(None, -1, _EMPTY, _EMPTY, False, _EMPTY, _EMPTY)
"""The scores of a message with no earlier message to respond to."""


def reply_scores(
    timeline: Timeline,
    position: int,
    model: ReplyModel,
    recalled: Sequence[int] = (),
    yes_no_near: int = NEAR,
) -> ReplyScores:
    """Every candidate of the message at ``position`` with its probability, best first (ties:
    the nearer first; another's line goes before an own line the model is unsure of, see
    :func:`past_unsure_own_line`; a question put to the speaker since may go before their own
    message, see :func:`question_put_first`; the yes/no question a message opening with a yes or
    a no answers, see :func:`~awai_engine.reply_target.yes_no.answered_question`; and the line a
    message opening with "back to …" goes back to before the line it follows, see
    :func:`returned_first`). Only the first may be ``confident``. Recalled lines of another line of the channel (a thread's reply, the top
    level) are not candidates: the features count lines and turns as one line holds them, the
    model was fitted on lines alone, and a reply in a thread named as answering a top-level
    aside misleads (a review found exactly that). ``yes_no_near``: how far back a yes or a no
    looks for its question (0: not at all; the benches try others)."""
    recalled = [q for q in recalled if _same_line(timeline, position, q)]
    candidates = model_features(timeline, position, recalled)
    if not candidates.positions:
        return NO_SCORES
    probabilities = through_agreements(
        timeline, position, model, candidates.positions, model.probabilities(candidates.features)
    )
    positions = np.asarray(candidates.positions)
    order, confident = past_unsure_own_line(timeline, position, positions, probabilities, model)
    bars = (
        (ANSWER_BAR, ANSWER_BAR)
        if opens_as_answer(timeline.messages[position].text)
        else (QUESTION_PUT_BAR, QUESTION_BETWEEN_BAR)
    )
    asked = question_put_first(
        timeline, position, positions, probabilities, candidates.features, order, *bars
    )
    if asked[0] != order[0]:  # the question put since clears the near bar on its own
        confident = confident or bool(probabilities[asked[0]] >= model.confident)
    answered = answered_question(timeline, position, positions, candidates.features, yes_no_near)
    if answered is not None:  # a yes or a no to the question still open: the words settle it
        asked = np.concatenate(([answered], asked[asked != answered]))
        confident = True
    order = returned_first(timeline, position, positions, candidates.features, asked)
    return ReplyScores(
        timeline,
        position,
        positions[order],
        probabilities[order],
        confident,
        candidates.features[order, _ASKS],
        candidates.features[order, _COSINE],
    )


def past_unsure_own_line(
    timeline: Timeline,
    position: int,
    positions: np.ndarray,
    probabilities: np.ndarray,
    model: ReplyModel,
) -> tuple[np.ndarray, bool]:
    """The candidates best first (ties: the nearer) and whether the first is confident: it
    clears the near bar, or the far bar more than ``far_back`` lines back. The speaker's own
    line must clear ``own_confident`` too; when the best is one that clears its bar but not that
    one, the likeliest line of another person that clears its bar goes first instead, and when
    none does, nothing is confident. Why: "Continues what <speaker> said" over the line a message really answers was
    the worst a reviewer found in team chats, and a message does not respond to its speaker's own
    line as often as the model, fitted on interleaved IRC, says; the bar is chosen on the dev
    logs by the fitting script (its ``choose_own_bar``)."""
    order = np.lexsort((-positions, -probabilities))
    far = position - positions > model.far_back
    bars = np.where(far, model.far_confident, model.confident)
    own = timeline.speaker_codes[positions] == timeline.speaker_codes[position]
    clears = probabilities >= np.where(own, np.maximum(bars, model.own_confident), bars)
    best = order[0]
    if clears[best] or not own[best] or probabilities[best] < bars[best]:
        return order, bool(clears[best])  # named, or not named whatever its speaker
    other = order[~own[order] & clears[order]]
    if not other.size:
        return order, False
    return np.concatenate(([other[0]], order[order != other[0]])), True


QUESTION_PUT_BAR = 0.5
"""The probability from which a question put to the speaker since their last message is named
before that message of theirs. Chosen on the dev logs by ``bench.question_since``."""
QUESTION_BETWEEN_BAR = 0.35
"""The same for the plainest case, the question alone between the speaker's message and this
one ("login is broken" / "How many users?" / "About 3%"): lower, as on the dev logs the question
is the parent there as often as the own message (31 of 70 against 24), but no lower, as under
0.35 #ubuntu's speakers going on with their own line after a question lose more than it gains."""
ANSWER_BAR = 0.1
"""The same for a message that opens as an answer does ("Both, honestly.", "Not that I know
of."): after a question put to its speaker, such an opening answers it, whatever the model
makes of the speaker's own line before. On the dev logs (``bench.question_since``, one run at
0, 0.05 and 0.1): accuracy 0.700 -> 0.701 on #ubuntu and unchanged (0.711) on channel two, far
precision kept at 0.1. It turns the English sample's "Both, honestly." and "Not that I know
of." from continuing their speaker's own message into answers to the question just asked."""


def question_put_first(
    timeline: Timeline,
    position: int,
    positions: np.ndarray,
    probabilities: np.ndarray,
    features: np.ndarray,
    order: np.ndarray,
    bar: float = QUESTION_PUT_BAR,
    between_bar: float = QUESTION_BETWEEN_BAR,
) -> np.ndarray:
    """``order`` with the question put to the speaker first, when the model ranks the speaker's
    own message first. Why: "How many users?" between "login is broken" and "About 3% of
    sessions" is what the answer responds to, yet the model, fitted on lines where a speaker
    mostly goes on with their own thread, scores the own message higher; a reviewer found the
    headline "Continues what Dev said" on seven of twenty sample messages of this shape. The
    question must come from another speaker after the speaker's latest candidate message, ask,
    address nobody but the speaker (``features``: the candidates' table, in ``positions``' order)
    and clear ``bar`` (``between_bar`` when it is the line just before and the speaker's own the
    line before that); the likeliest such question wins. The confidence stays the model's best's:
    the answer responds to something, and the question replaces it. On the dev logs the model's
    best is the speaker's own message in 17-20% of the messages of this shape, and a bar under
    0.4 costs accuracy there (the question is then more often another conversation's)."""
    codes = timeline.speaker_codes  # one code per speaker id: no pass over the candidates
    own = codes[positions] == codes[position]
    if not own[order[0]]:
        return order
    put_to_speaker = (features[:, _ASKS] > 0) & (features[:, _ADDRESSES_ANOTHER] == 0)
    latest = positions[own].max()
    since = (positions > latest) & ~own
    between = (positions == position - 1) & (latest == position - 2)
    cleared = probabilities >= np.where(between, between_bar, bar)
    put = np.flatnonzero(since & put_to_speaker & cleared)
    if not put.size:
        return order
    question = put[np.argmax(probabilities[put])]
    return np.concatenate(([question], order[order != question]))


def _same_line(timeline: Timeline, position: int, earlier: int) -> bool:
    """Whether ``earlier`` is in the line of the message at ``position``: its thread (the root
    included) for a thread reply, else the top level."""
    message, other = timeline.messages[position].ref, timeline.messages[earlier]
    if timeline.messages[position].is_reply:
        root = message.thread_root
        return other.ref.message_id == root or other.ref.thread_root == root
    return not other.is_reply


SHOWN = 5
"""Candidates a reading keeps besides those of its context: enough to see what else was close."""


def shown_replies(
    scores: ReplyScores, flow: Flow, associations: Sequence[Association]
) -> tuple[ReplyScore, ...]:
    """The ``SHOWN`` best scores and those of every message of the context, best first."""
    held = [
        scores.position_of(message_id)
        for message_id in (*flow.message_ids(), *(a.source.message_id for a in associations))
    ]
    kept = np.array([p for p in held if p is not None], dtype=np.int64)
    # One comparison of a few dozen candidates with a dozen lines: np.isin's sort costs more.
    shown = (scores.positions[:, None] == kept[None, :]).any(axis=1)
    shown[:SHOWN] = True
    return tuple(scores[rank] for rank in np.flatnonzero(shown).tolist())
