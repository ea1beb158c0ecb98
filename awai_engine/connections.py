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

from awai_engine.cues import is_question, opening_stance, says_returns
from awai_engine.values import (
    Connection,
    Headline,
    Interpretation,
    MessageRef,
    ReadingContext,
    Relation,
)

FAR = 10
"""Utterances in between from which an earlier message counts as far back (the evaluation's
"far links" are more than nine back)."""

HEADLINE_ORDER: tuple[Relation, ...] = (
    "revises",
    "returns-to",
    "answers",
    "concedes",
    "agrees",
    "disagrees",
    "builds-on",
    "shifts-away",
    "relates-to",
)
"""Which relation the headline names when the message has several: a correction first, then a
cued return to something far back (the part a reader cannot see in the thread), then what it does
to the messages just before it."""

HEADLINE_HEADROOM = 0.15
"""A plain "connects to" is a headline only when its similarity cleared its bar by this share of
the room left above the bar, (s − θ) / (1 − θ): a fraction rather than a fixed step, so it means
the same on every embedding model's similarity scale. Below it, the headline says nothing earlier
stands out rather than name a weak match."""


def connect(
    context: ReadingContext, interpretation: Interpretation | None = None
) -> tuple[Headline, tuple[Connection, ...]]:
    """The headline and the connections of a reading: the model's links where it drew them,
    cues elsewhere."""
    connections = _by_cues(context)
    if interpretation is not None and interpretation.links:
        connections = _with_model_links(context, connections, interpretation)
    return _headline(context, connections), tuple(connections)


def _by_cues(context: ReadingContext) -> list[Connection]:
    candidates = _candidates(context)
    decided: dict[str, tuple[Relation, str | None]] = {}

    answered = _question_answered(context, candidates)
    if answered is not None:
        decided[answered.message.message_id] = ("answers", None)
    stance = opening_stance(context.text)
    if stance is not None:
        target = (
            _revised(context, candidates)
            if stance.relation == "revises"
            else _replied_to(context, candidates)
        )
        if target is not None and target.message.message_id not in decided:
            decided[target.message.message_id] = (stance.relation, stance.condition)
    if says_returns(context.text):
        headroom = _headroom(context)
        far = [
            item
            for item in candidates
            if item.origin == "meaning"
            and item.distance >= FAR
            and headroom.get(item.message.message_id, 0.0) >= HEADLINE_HEADROOM
            and item.message.message_id not in decided
        ]
        if far:
            decided[_best_by_margin(context, far).message.message_id] = ("returns-to", None)

    connections = []
    for item in candidates:
        relation, condition = decided.get(item.message.message_id, ("relates-to", None))
        if item.origin == "flow" and relation == "relates-to":
            continue  # the message just before is shown in the flow; named here only if cued
        connections.append(item.model_copy(update={"relation": relation, "condition": condition}))
    return connections


def _candidates(context: ReadingContext) -> list[Connection]:
    """One connection per earlier message of the context: the message just before, then every
    recalled one (first recall of a message wins), all ``relates-to`` until decided."""
    seen: set[str] = set()
    candidates: list[Connection] = []
    previous = context.flow.previous
    if previous is not None:
        seen.add(previous.message.message_id)
        candidates.append(
            _connection(
                context,
                previous.message,
                " / ".join(thought.text for thought in previous.thoughts),
                "flow",
            )
        )
    for item in context.associations:
        message_id = item.source.message_id
        if message_id in seen:
            continue
        seen.add(message_id)
        candidates.append(_connection(context, item.source, item.thought.text, item.reason))
    return candidates


def _connection(context: ReadingContext, ref: MessageRef, text: str, origin: str) -> Connection:
    return Connection(
        message=ref,
        relation="relates-to",
        decided_by="cues",
        origin=origin,  # type: ignore[arg-type]
        distance=max(0, context.message.position - ref.position - 1),
        earlier_text=text,
    )


def _question_answered(context: ReadingContext, candidates: list[Connection]) -> Connection | None:
    """The question another speaker just asked, or asked this speaker, that the message answers.

    A message that is only questions itself asks back rather than answers.
    """
    if context.thoughts and all(is_question(thought.text) for thought in context.thoughts):
        return None
    speaker = context.message.speaker_id
    for item in candidates:
        asked = item.origin == "flow" or item.origin == "addressed-speaker"
        if asked and item.message.speaker_id != speaker and _asks(context, item):
            return item
    return None


def _asks(context: ReadingContext, item: Connection) -> bool:
    if item.origin == "flow" and context.flow.previous is not None:
        return any(is_question(thought.text) for thought in context.flow.previous.thoughts)
    return is_question(item.earlier_text)


def _replied_to(context: ReadingContext, candidates: list[Connection]) -> Connection | None:
    """What an "agreed" or a "no" answers: the person the message addresses, else the last other
    speaker of the line."""
    speaker = context.message.speaker_id
    addressed = [item for item in candidates if item.origin == "addressed"]
    if addressed:
        return min(addressed, key=lambda item: item.distance)
    for item in candidates:
        if item.origin == "flow" and item.message.speaker_id != speaker:
            return item
    others = [
        item for item in candidates if item.message.speaker_id != speaker and item.distance < FAR
    ]
    return min(others, key=lambda item: item.distance) if others else None


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
    links = {}
    for link in interpretation.links:
        links.setdefault(link.message_id, link)
    refs = {ref.message_id: (ref, text) for ref, text in _flow_refs(context)}
    merged: list[Connection] = []
    for connection in connections:
        link = links.pop(connection.message.message_id, None)
        if link is None:
            merged.append(connection)
            continue
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
        yield flow.previous.message, " / ".join(t.text for t in flow.previous.thoughts)


def _headline(context: ReadingContext, connections: list[Connection]) -> Headline:
    """The connection the headline names: the model's when it drew any, then by relation, and
    among plain connections the one recalled by meaning that cleared its bar by most."""
    if not connections:
        return Headline()
    pool = [item for item in connections if item.decided_by == "model"] or connections
    if all(item.relation == "relates-to" for item in pool):
        headroom = _headroom(context)
        pool = [
            item
            for item in pool
            if item.origin == "meaning"
            and headroom.get(item.message.message_id, 0.0) >= HEADLINE_HEADROOM
        ]
        if not pool:
            return Headline()
    rank = {relation: i for i, relation in enumerate(HEADLINE_ORDER)}
    first = min(rank.get(item.relation, len(rank)) for item in pool)
    tied = [item for item in pool if rank.get(item.relation, len(rank)) == first]
    by_meaning = [item for item in tied if item.origin == "meaning"]
    best = _best_by_margin(context, by_meaning) if by_meaning else tied[0]
    return Headline(connection=best, decided_by=best.decided_by)
