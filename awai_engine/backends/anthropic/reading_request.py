"""The reading request: a :class:`ReadingContext` as tagged text, with short citation references.

Why short references: Slack ``ts`` strings and Discord snowflakes are long digit strings a model
easily mistypes, and a mistyped citation is lost. Each request numbers the earlier messages it
shows ``M1``, ``M2``… (oldest first; the message read is ``M0``) and the preconceptions ``P1``…;
:class:`References` maps the model's answer back to real ids, and a reference the request did not
give maps to nothing.

Why each recalled item says why it is there and when it was said: the model can only weigh a
recalled thought (an answer to the speaker, the speaker's own earlier view, a thought close in
meaning from far back) if it knows which it is, and only place "Tuesday" or "tonight" from a time.
"""

from __future__ import annotations

from dataclasses import dataclass

from awai_engine.backends.anthropic.answers import READING_TASK
from awai_engine.backends.anthropic.prompts import chat, language_instruction, when
from awai_engine.values import Association, ReadingContext, RecalledSchema


@dataclass(frozen=True)
class References:
    """This request's short references: ``M<n>`` for messages, ``P<n>`` for preconceptions."""

    messages: dict[str, str]  # reference → message id
    schemas: dict[str, str]  # reference → schema id

    @classmethod
    def of(cls, context: ReadingContext) -> References:
        """Earlier messages numbered by position (oldest ``M1``), schemas in recall order."""
        positions = {
            item.message.message_id: item.message.position for item in context.flow.earlier
        }
        if context.flow.previous:
            previous = context.flow.previous.message
            positions[previous.message_id] = previous.position
        for item in context.associations:
            positions[item.source.message_id] = item.source.position
        positions.pop(context.message.message_id, None)
        ordered = sorted(positions, key=lambda message_id: positions[message_id])
        return cls(
            messages={f"M{n}": message_id for n, message_id in enumerate(ordered, start=1)},
            schemas={
                f"P{n}": schema.schema_id for n, schema in enumerate(context.schemas, start=1)
            },
        )

    def message_ref(self, message_id: str) -> str:
        return next(ref for ref, real in self.messages.items() if real == message_id)

    def schema_ref(self, schema_id: str) -> str:
        return next(ref for ref, real in self.schemas.items() if real == schema_id)


def render_reading_request(context: ReadingContext) -> str:
    """The context as tagged chat data, oldest first, then the call to make."""
    refs = References.of(context)
    message = context.message
    lines = [
        f'<message ref="M0" speaker="{chat(message.speaker_name)}" time="{when(message.ts)}"'
        f' line="{context.flow.line}">{chat(context.text)}</message>',
        "Thoughts of M0:",
        *(f'<thought n="{t.index}">{chat(t.text)}</thought>' for t in context.thoughts),
    ]
    flow = context.flow
    if flow.previous or flow.earlier:
        lines.append(f"Flow ({flow.line}), oldest first:")
        lines.extend(
            _said(
                refs.message_ref(item.message.message_id),
                item.message.speaker_name,
                item.message.ts,
                {"as": "summary"},
                item.summary,
            )
            for item in flow.earlier
        )
        if flow.previous:
            previous = flow.previous.message
            lines.append(
                _said(
                    refs.message_ref(previous.message_id),
                    previous.speaker_name,
                    previous.ts,
                    {"as": "just before"},
                    " / ".join(thought.text for thought in flow.previous.thoughts),
                )
            )
    else:
        lines.append(f"Flow ({flow.line}): nothing was said before it in this line.")
    if context.associations:
        lines.append("Recalled:")
        lines.extend(
            _said(
                refs.message_ref(item.source.message_id),
                item.source.speaker_name,
                item.source.ts,
                {"why": why_recalled(item, message.speaker_name)}
                | ({"important": "yes"} if item.important else {}),
                item.thought.text,
            )
            for item in context.associations
        )
    if context.schemas:
        lines.append(f"Preconceptions of {chat(message.speaker_name)}:")
        lines.extend(
            _schema(refs.schema_ref(schema.schema_id), schema) for schema in context.schemas
        )
    lines.append(f"Task: {READING_TASK}, for M0.")
    lines.append(language_instruction(context.text))
    return "\n".join(lines)


def why_recalled(item: Association, speaker: str) -> str:
    """Why a recalled thought is in the context, in words, with how far back it was said."""
    back = f"{item.distance + 1} message{'s' if item.distance else ''} back"
    if item.reason == "own":
        return f"the speaker's own earlier message, {back}"
    if item.reason == "addressed":
        return f"said by someone this message addresses, {back}"
    if item.reason == "addressed-speaker":
        return f"addressed to {speaker}, {back}"
    if item.reason == "reply":
        return f"likely what this message replies to, {back}"
    if item.reason == "answer":
        return f"the answer given to an earlier question like this one, {back}"
    return f"close in meaning to thought {item.cue_index}, {back}"


def _said(ref: str, speaker: str, ts: float, extra: dict[str, str], text: str) -> str:
    attributes = "".join(f' {key}="{chat(value)}"' for key, value in extra.items())
    return (
        f'<said ref="{ref}" speaker="{chat(speaker)}" time="{when(ts)}"{attributes}>'
        f"{chat(text)}</said>"
    )


def _schema(ref: str, schema: RecalledSchema) -> str:
    """A preconception by its summary, what it is about and a few of its members' words."""
    examples = " / ".join(schema.examples) if schema.examples else schema.summary
    about = f' about="{chat(", ".join(schema.keyphrases))}"' if schema.keyphrases else ""
    return (
        f'<said ref="{ref}" size="{schema.size}" summary="{chat(schema.summary)}"{about}>'
        f"{chat(examples)}</said>"
    )
