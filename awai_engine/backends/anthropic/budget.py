"""Keeping one reading's request within its token budget, least useful context first.

The context model already bounds every part of a reading (flow ≤ C, association ≤ A, schemas ≤ R),
and the default budget carries all of it for messages of ordinary chat length. Only beyond that
(a long message, long recalled thoughts) is the request trimmed, least useful first (see
:func:`_trim_one`): what merely frames or restates the message goes before the recalled thoughts,
which are the point of a reading. What was cut is said in one note, so the user knows what the
model did not see.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from awai_engine.backends.anthropic.tokens import estimate_tokens
from awai_engine.values import (
    Association,
    ReadingContext,
    ReadingNote,
    RecalledSchema,
    Trimmed,
    TrimmedPart,
)

MIN_TEXT_CHARS = 200
TEXT_CUT_RATIO = 0.7


@dataclass(frozen=True)
class FittedContext:
    """The context as sent (possibly trimmed), its estimated tokens, and what was left out."""

    context: ReadingContext
    tokens: int
    note: ReadingNote | None


def fit_to_budget(
    context: ReadingContext, allowance: int, render: Callable[[ReadingContext], str]
) -> FittedContext | None:
    """Trim ``context`` until ``render`` of it is estimated at ≤ ``allowance`` tokens.

    ``None`` when even the smallest request (one thought, a shortened text) does not fit.
    """
    cut: Counter[TrimmedPart] = Counter()
    tokens = estimate_tokens(render(context))
    while tokens > allowance:
        trimmed = _trim_one(context, cut)
        if trimmed is None:
            return None
        context = trimmed
        tokens = estimate_tokens(render(context))
    return FittedContext(context=context, tokens=tokens, note=_note(cut) if cut else None)


def _trim_one(context: ReadingContext, cut: Counter[TrimmedPart]) -> ReadingContext | None:
    """The context with its least useful remaining piece removed, counting it in ``cut``.

    Least useful first: a preconception's third and second member examples (its summary
    stays), the oldest flow summaries, the message's verbatim text beyond its opening (its
    thoughts carry the same meaning), recalled thoughts not marked important (lowest margin
    first), preconceptions (least similar first), important recalled thoughts, the previous
    utterance's later thoughts, and last the message's own later thoughts. Recalled thoughts, the
    point of a reading, go only after everything that restates or merely frames the message.
    """
    with_examples = [schema for schema in context.schemas if len(schema.examples) > 1]
    if with_examples:
        most = max(with_examples, key=lambda schema: len(schema.examples))
        cut["preconception-example"] += 1
        return _replace_schema(context, most, most.examples[:-1])
    flow = context.flow
    if flow.earlier:
        cut["earlier-summary"] += 1
        return context.model_copy(
            update={"flow": flow.model_copy(update={"earlier": flow.earlier[1:]})}
        )
    if len(context.text) > MIN_TEXT_CHARS + 1:  # + 1: the "…" a cut text ends with
        keep = max(MIN_TEXT_CHARS, int(len(context.text) * TEXT_CUT_RATIO))
        cut["text"] = 1
        return context.model_copy(update={"text": context.text[:keep].rstrip() + "…"})
    plain = [item for item in context.associations if not item.important]
    if plain:
        return _drop_association(context, min(plain, key=lambda item: item.margin), cut)
    if context.schemas:
        drop = min(context.schemas, key=lambda schema: schema.similarity)
        cut["preconception"] += 1
        return context.model_copy(
            update={"schemas": tuple(s for s in context.schemas if s is not drop)}
        )
    if context.associations:
        return _drop_association(
            context, min(context.associations, key=lambda item: item.margin), cut
        )
    if flow.previous and len(flow.previous.thoughts) > 1:
        cut["previous-thought"] += 1
        previous = flow.previous.model_copy(update={"thoughts": flow.previous.thoughts[:-1]})
        return context.model_copy(update={"flow": flow.model_copy(update={"previous": previous})})
    if len(context.thoughts) > 1:
        cut["own-thought"] += 1
        return context.model_copy(update={"thoughts": context.thoughts[:-1]})
    return None


def _drop_association(
    context: ReadingContext, drop: Association, cut: Counter[TrimmedPart]
) -> ReadingContext:
    cut["recalled-thought"] += 1
    return context.model_copy(
        update={"associations": tuple(a for a in context.associations if a is not drop)}
    )


def _replace_schema(
    context: ReadingContext, schema: RecalledSchema, examples: tuple[str, ...]
) -> ReadingContext:
    replaced = schema.model_copy(update={"examples": examples})
    return context.model_copy(
        update={"schemas": tuple(replaced if s is schema else s for s in context.schemas)}
    )


def _note(cut: Counter[TrimmedPart]) -> ReadingNote:
    """One note saying what the model was not shown, in the order it was cut."""
    trimmed = tuple(Trimmed(part=part, count=count) for part, count in cut.items() if count)
    return ReadingNote(kind="context-trimmed", trimmed=trimmed)
