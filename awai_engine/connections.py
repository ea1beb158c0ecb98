"""What a message does to what came before it: one relation per earlier message, and a headline.

A reading is first of all one line — *answers* Maya's question, *returns to* Priya's worry from 40
messages back, *agrees, on a condition* — and then the earlier messages it connects to. When a
language model wrote the reading, its links decide the relations of the messages it names;
everything else (and every offline reading) is decided by the cues of :mod:`awai_engine.cues`,
deterministic and marked ``decided_by="cues"`` so no surface passes a guess off as a judgement.
Everything here reads the reading context only, so it is as causal as the context itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from awai_engine.acknowledgement import says_something
from awai_engine.cues.questions import is_question
from awai_engine.cues.returns import says_returns
from awai_engine.cues.stance import Stance, opening_stance
from awai_engine.reply_target.scorer import QUOTED_FROM
from awai_engine.text import as_said, words
from awai_engine.values import (
    Association,
    Connection,
    ConnectionOrigin,
    Headline,
    Interpretation,
    MessageRef,
    ReadingContext,
    Relation,
    ReplyScore,
    ThoughtLink,
)

FAR = 10
"""Utterances in between from which an earlier message counts as far back (the evaluation's
"far links" are more than nine back)."""

HEADLINE_HEADROOM = 0.15
"""A far message recalled by meaning is what a message *returns to* only when its similarity
cleared its bar by this share of the room left above the bar, (s − θ) / (1 − θ): a fraction
rather than a fixed step, so it means the same on every embedding model's similarity scale."""

LISTED = 0.2
"""A message of the flow is listed among the connections from this reply probability (recalled
messages always are): the flow already shows the others."""


AGREED_FLOOR = QUOTED_FROM
"""The least reply probability of a message an agreement is moved to (see :func:`_agreed_with`):
the value from which the scorer quotes a candidate's sentence, so a headline naming one always
has its quote."""


def connect(
    context: ReadingContext, interpretation: Interpretation | None = None
) -> tuple[Headline, tuple[Connection, ...]]:
    """The headline and the connections of a reading: the model's links where it drew them,
    the reply-target scorer and the cues elsewhere; connections best first by the scorer."""
    connections, named = _by_scorer_and_cues(context)
    if interpretation is not None and interpretation.links:
        connections = _with_model_links(context, connections, interpretation)
        drawn = [item for item in connections if item.decided_by == "model"]
        if drawn:
            return Headline(connection=drawn[0], decided_by="model"), _worth_listing(
                context, connections
            )
    return Headline(connection=named), _worth_listing(context, connections)


def _worth_listing(
    context: ReadingContext, connections: list[Connection]
) -> tuple[Connection, ...]:
    """The connections that say something the reader needs: an earlier line that is wholly an
    acknowledgement, thanks or greeting ("On it.", "thanks!", 了解です; see
    :mod:`awai_engine.acknowledgement`) is left out, unless a relation was decided for it (it is
    what the message answers, agrees with...) or the model drew it. The names of the context's
    speakers are no words of their own ("Agree with Aiko.").

    Recall may still have recalled it: it is part of the context a model reads and the details
    view shows every recalled line with its numbers. So every recalled line is a connection
    except an acknowledgement no relation was decided for."""
    said_before = [
        *([context.flow.previous.message] if context.flow.previous is not None else []),
        *(item.message for item in context.flow.earlier),
        *(item.source for item in context.associations),
    ]
    names = frozenset(word for ref in said_before for word in words(ref.speaker_name))
    return tuple(
        item
        for item in connections
        if item.decided_by == "model"
        or item.relation != "relates-to"
        or says_something(item.earlier_text, names)
    )


def _by_scorer_and_cues(context: ReadingContext) -> tuple[list[Connection], Connection | None]:
    """Every message of the context worth listing, with a relation, and the one the headline
    names (None when no candidate is a confident reply target and nothing is revised or
    returned to)."""
    candidates = _candidates(context)
    by_id = {item.message.message_id: item for item in candidates}
    scores = {score.message.message_id: score for score in context.replies}
    decided: dict[str, tuple[Relation, str | None]] = {}
    named: str | None = None

    stance = opening_stance(context.text)
    target = next(
        (s for s in context.replies if s.confident and s.message.message_id in by_id), None
    )
    if stance is not None and stance.relation == "revises":
        revised = _revised(context, candidates)
        if revised is not None:
            named = revised.message.message_id
            decided[named] = ("revises", None)
    returned = _returned_to(context, candidates, scores)
    if named is None and returned is not None:
        named = returned.message.message_id
        decided[named] = ("returns-to", None)
    if target is not None and stance is not None and stance.relation in ("agrees", "concedes"):
        target = _agreed_with(context, target, by_id)
    quoted: dict[str, str] = {}
    if target is not None and target.message.message_id not in decided:
        decided[target.message.message_id] = _relation_to(context, target, stance)
        named = named or target.message.message_id
        # The sentence the message is about, not the earlier one's first; but never only its
        # greeting or thanks ("おはようございます。"): then the earlier message as said.
        if target.quote and says_something(target.quote):
            quoted[target.message.message_id] = target.quote

    connections = []
    for item in candidates:
        message_id = item.message.message_id
        relation, condition = decided.get(message_id, ("relates-to", None))
        score = scores.get(message_id)
        if (
            item.origin == "flow"
            and message_id not in decided
            and (score is None or score.probability < LISTED)
        ):
            continue  # the flow shows it; listed only when decided or a likely reply target
        update = {"relation": relation, "condition": condition}
        if message_id in quoted:
            update["earlier_text"] = quoted[message_id]
        connections.append(item.model_copy(update=update))
    rank = {score.message.message_id: k for k, score in enumerate(context.replies)}
    connections.sort(key=lambda item: rank.get(item.message.message_id, len(rank)))
    headline = next((item for item in connections if item.message.message_id == named), None)
    return connections, headline


def _agreed_with(
    context: ReadingContext, target: ReplyScore, by_id: dict[str, Connection]
) -> ReplyScore:
    """What an agreement agrees with: the scorer's target, unless that is the speaker's own
    message (one agrees with someone else) or itself only an agreement ("I think that works"
    after two "works for me"s agrees with the plan they agreed with) — then the likeliest
    candidate that is neither. Not done for a disagreement: on the dev logs a "no" the scorer
    ties to the speaker's own line is more often right there (moved, 50 disagreements named
    were right 32% of the time against 52% of 23)."""

    def fits(score: ReplyScore) -> bool:
        item = by_id.get(score.message.message_id)
        return (
            item is not None
            and score.message.speaker_id != context.message.speaker_id
            and not _agrees(item.earlier_text)
        )

    if fits(target):
        return target
    return next(
        (s for s in context.replies if s.probability >= AGREED_FLOOR and fits(s)),
        target,
    )


def _agrees(text: str) -> bool:
    stance = opening_stance(text)
    return stance is not None and stance.relation == "agrees"


def _relation_to(
    context: ReadingContext, target: ReplyScore, stance: Stance | None
) -> tuple[Relation, str | None]:
    """What the message does to the scorer's target: answers its question, takes the stance its
    opening words say, or plainly replies to it — or, when the target is the speaker's own
    message, continues it (one does not reply to oneself)."""
    other = target.message.speaker_id != context.message.speaker_id
    only_asks = bool(context.thoughts) and all(is_question(t.text) for t in context.thoughts)
    takes_side = stance is not None and stance.relation in ("agrees", "concedes", "disagrees")
    if stance is not None and takes_side and other and not (target.asks and stance.plain):
        return stance.relation, stance.condition
    if target.asks and other and not only_asks:
        return "answers", None
    return ("replies-to" if other else "continues"), None


def _returned_to(
    context: ReadingContext, candidates: list[Connection], scores: dict[str, ReplyScore]
) -> Connection | None:
    """The far message the message says it goes back to: recalled by meaning at least
    :data:`FAR` back with room to spare above its bar, and with no nearer candidate as close in
    meaning (which would explain the words better)."""
    if not says_returns(context.text):
        return None
    headroom = _headroom(context)
    far = [
        item
        for item in candidates
        if item.origin in ("meaning", "words")
        and item.distance >= FAR
        and headroom.get(item.message.message_id, 0.0) >= HEADLINE_HEADROOM
    ]
    if not far:
        return None
    best = _best_by_margin(context, far)
    similarity = max(
        (
            a.similarity
            for a in context.associations
            if a.source.message_id == best.message.message_id
        ),
        default=0.0,
    )
    nearer = [
        score
        for score in scores.values()
        if context.message.position - score.message.position - 1 < FAR
        and score.similarity >= similarity
    ]
    return None if nearer else best


def _candidates(context: ReadingContext) -> list[Connection]:
    """One connection per earlier message of the context: the message just before, the flow's
    earlier ones (newest first), then every recalled one (its first recall gives the origin; it
    is quoted by the first of its recalled thoughts that says more than an acknowledgement), all
    ``relates-to`` until decided."""
    seen: set[str] = set()
    candidates: list[Connection] = []
    previous = context.flow.previous
    if previous is not None:
        seen.add(previous.message.message_id)
        candidates.append(
            _connection(
                context,
                previous.message,
                as_said([thought.text for thought in previous.thoughts]),
                "flow",
            )
        )
    for summary in reversed(context.flow.earlier):
        seen.add(summary.message.message_id)
        candidates.append(_connection(context, summary.message, summary.summary, "flow"))
    first: dict[str, Association] = {}
    quoted: dict[str, str] = {}
    for item in context.associations:
        message_id = item.source.message_id
        if message_id in seen:
            continue
        if message_id not in first:
            first[message_id], quoted[message_id] = item, item.thought.text
        elif not says_something(quoted[message_id]) and says_something(item.thought.text):
            quoted[message_id] = item.thought.text  # a line that says something over "thanks!"
    candidates += [
        _connection(context, item.source, quoted[message_id], item.reason)
        for message_id, item in first.items()
    ]
    return candidates


def _connection(
    context: ReadingContext, ref: MessageRef, text: str, origin: ConnectionOrigin
) -> Connection:
    return Connection(
        message=ref,
        relation="relates-to",
        decided_by="cues",
        origin=origin,
        distance=max(0, context.message.position - ref.position - 1),
        earlier_text=text,
    )


def _revised(context: ReadingContext, candidates: list[Connection]) -> Connection | None:
    """The speaker's own earlier claim a correction takes back: the closest in meaning of their
    recalled messages, else their previous one."""
    speaker = context.message.speaker_id
    own = [item for item in candidates if item.message.speaker_id == speaker]
    by_meaning = [item for item in own if item.origin == "meaning"]
    if by_meaning:
        return _best_by_margin(context, by_meaning)
    return min(own, key=lambda item: item.distance) if own else None


def _margins(context: ReadingContext) -> dict[str, float]:
    """How far each recalled message cleared its bar (its best thought), by message id."""
    margins: dict[str, float] = {}
    for item in context.associations:
        margin = item.similarity - item.threshold
        message_id = item.source.message_id
        margins[message_id] = max(margin, margins.get(message_id, margin))
    return margins


def _best_by_margin(context: ReadingContext, items: list[Connection]) -> Connection:
    margins = _margins(context)
    return max(items, key=lambda item: margins.get(item.message.message_id, float("-inf")))


def _headroom(context: ReadingContext) -> dict[str, float]:
    """(s − θ) / (1 − θ) of each recalled message's best thought, by message id."""
    shares: dict[str, float] = {}
    for item in context.associations:
        share = (item.similarity - item.threshold) / max(1e-6, 1.0 - item.threshold)
        message_id = item.source.message_id
        shares[message_id] = max(share, shares.get(message_id, share))
    return shares


def _with_model_links(
    context: ReadingContext, connections: list[Connection], interpretation: Interpretation
) -> list[Connection]:
    """The model's relation and words for each message it links; other messages keep cues."""
    links: dict[str, ThoughtLink] = {}
    for link in interpretation.links:
        links.setdefault(link.message_id, link)
    refs = {ref.message_id: (ref, text) for ref, text in _flow_refs(context)}
    merged: list[Connection] = []
    for connection in connections:
        if connection.message.message_id not in links:
            merged.append(connection)
            continue
        link = links.pop(connection.message.message_id)
        merged.append(
            connection.model_copy(
                update={
                    "relation": link.relation,
                    "decided_by": "model",
                    "explanation": link.explanation,
                    "condition": None,
                }
            )
        )
    for message_id, link in links.items():  # linked messages of the flow not recalled
        if message_id not in refs:
            continue
        ref, text = refs[message_id]
        merged.insert(
            0,
            _connection(context, ref, text, "flow").model_copy(
                update={
                    "relation": link.relation,
                    "decided_by": "model",
                    "explanation": link.explanation,
                }
            ),
        )
    return merged


def _flow_refs(context: ReadingContext) -> Iterable[tuple[MessageRef, str]]:
    flow = context.flow
    for item in flow.earlier:
        yield item.message, item.summary
    if flow.previous is not None:
        yield flow.previous.message, as_said([t.text for t in flow.previous.thoughts])
